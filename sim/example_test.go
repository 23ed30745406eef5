package sim_test

import (
	"fmt"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/sim"
)

// Replay three GPU-sharing tasks on one T4 node under PWR and read their
// start and end times and the node's energy (PWR's estimated power: the
// GPU and the CPU socket draw their TDP, 70 + 120 W, while any task runs).
func ExampleNew() {
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{{Name: "t4-0", CPUMilli: 32000, MemMiB: 128 << 10, GPUs: 1, GPUModel: "T4"}})
	if err != nil {
		panic(err)
	}
	sc, _ := pwr.New(pwr.Args{}, policy.Deps{})
	pl, _ := policy.NewPlacer(nil, []policy.Weighted{{Name: "PWR", Scorer: sc, Weight: 1}})
	half := job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}
	tasks := []job.Task{
		{ID: 1, Class: -1, Demand: half, Submit: 0, Work: 60},     // 60 s
		{ID: 2, Class: -1, Demand: half, Submit: 0, Work: 30},     // shares the GPU with task 1
		{ID: 3, Class: -1, Demand: half, Submit: 10000, Work: 10}, // waits until task 2 leaves at 30 s
	}
	e, err := sim.New(c, &policy.Online{Placer: pl}, sim.Options{Mode: sim.Replay})
	if err != nil {
		panic(err)
	}
	res, err := e.Run(tasks)
	if err != nil {
		panic(err)
	}
	for _, t := range res.Tasks {
		fmt.Printf("task %d: start %v s, end %v s\n", t.ID, t.Start.Seconds(), t.End.Seconds())
	}
	fmt.Printf("energy %.0f J over %v s\n", res.CPUEnergy+res.GPUEnergy, res.End.Seconds())
	// Output:
	// task 1: start 0 s, end 60 s
	// task 2: start 0 s, end 30 s
	// task 3: start 30 s, end 40 s
	// energy 11400 J over 60 s
}
