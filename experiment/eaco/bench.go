package eaco

import (
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/eaco"
)

// DecisionBench returns one EaCO decision with queued jobs waiting on a
// full cluster of nodes x 8 V100 (every GPU holding one job of the
// workload, no GPU free, so every queued job is checked against the
// candidate sets), each call with a fresh policy. It returns the number of
// placements the decision makes.
func (e *Env) DecisionBench(nodes, queued int) (func() int, error) {
	jobs := e.Workload(7, nodes*8+queued, DefaultPerHour)
	st := &policy.ColocState{Nodes: nodes, GPUsPerNode: 8, GPUMemGiB: GPUMemGiB, Power: e.Power, FreeGPUs: make([][]int, nodes)}
	for i := range jobs {
		v := &policy.ColocView{Job: &jobs[i], Set: -1}
		if i < nodes*8 {
			v.Set = i
			v.Done = jobs[i].Steps / 3
			v.Rate = jobs[i].IsoRate
			st.Sets = append(st.Sets, &policy.ColocSet{ID: i, Node: i / 8, GPUs: []int{i % 8}, Jobs: []int{i},
				CoreUtil: jobs[i].CoreAvg, MemUtil: jobs[i].MemAvg, MemPeak: jobs[i].MemMax})
		}
		st.Jobs = append(st.Jobs, v)
	}
	args := eaco.Args{}.Default()
	return func() int {
		p, err := eaco.New(args, policy.ColocDeps{History: e.History})
		if err != nil {
			panic(err)
		}
		return len(p.ScheduleColoc(st).Actions)
	}, nil
}
