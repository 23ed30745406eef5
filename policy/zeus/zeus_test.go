package zeus

import (
	"testing"

	"github.com/wattsched/wattsched/policy"
)

type one struct{}

func (one) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	var d policy.ElasticDecision
	for _, v := range st.Jobs {
		d.Allocs = append(d.Allocs, policy.ElasticAlloc{Job: v.Job.ID, Nodes: []policy.NodeShare{{Node: 0, GPUs: 2}}, FreqIdx: 2})
	}
	return d
}

func TestZeusProfilesThenPicksLowestCost(t *testing.T) {
	deps := policy.ElasticDeps{GPUMaxPower: 400, Build: func(name string, args []byte) (policy.ElasticScheduler, error) {
		if name != "one" || len(args) != 0 {
			t.Fatalf("base %q %q", name, args)
		}
		return one{}, nil
	}}
	z, err := New(Args{Eta: 0.5, Base: policy.Ref{Policy: "one"}}, deps)
	if err != nil {
		t.Fatal(err)
	}
	v := &policy.ElasticView{Job: &policy.ElasticJob{ID: 3}}
	st := &policy.ElasticState{Jobs: []*policy.ElasticView{v}, FreqsMHz: []int{1000, 1200, 1400}}
	if a := z.ScheduleElastic(st).Allocs[0]; !a.Profile || a.FreqIdx != 2 {
		t.Fatalf("unprofiled job: %+v, want a profiling window at the top frequency", a)
	}
	// Cost = 0.5*E + 0.5*400*2*T per iteration:
	// f0: 0.5*300 + 400*1.0 = 550; f1: 0.5*400 + 400*0.8 = 520; f2: 0.5*560 + 400*0.7 = 560.
	v.Obs = []policy.Observation{{GPUs: 2, FreqIdx: 0, IterSec: 1.0, IterJ: 300}, {GPUs: 2, FreqIdx: 1, IterSec: 0.8, IterJ: 400},
		{GPUs: 2, FreqIdx: 2, IterSec: 0.7, IterJ: 560}, {GPUs: 1, FreqIdx: 0, IterSec: 0.1, IterJ: 1}}
	if a := z.ScheduleElastic(st).Allocs[0]; a.Profile || a.FreqIdx != 1 {
		t.Fatalf("profiled job: %+v, want frequency index 1", a)
	}
}
