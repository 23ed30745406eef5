package policy_test

import (
	"fmt"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/pwr"
)

// A placer that combines two scorers as kube-scheduler does: 0.2 x PWR +
// 0.8 x BestFit (weights x1000). PWR prefers the T4, which adds less power.
func ExamplePlacer() {
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{
		{Name: "v100-0", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 4, GPUModel: "V100M16"},
		{Name: "t4-0", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 4, GPUModel: "T4"},
	})
	if err != nil {
		panic(err)
	}
	p1, _ := pwr.New(pwr.Args{}, policy.Deps{})
	p2, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
	pl, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "PWR", Scorer: p1, Weight: 200}, {Name: "BestFit", Scorer: p2, Weight: 800}})
	if err != nil {
		panic(err)
	}
	t := &job.Task{ID: 1, Class: -1, Demand: job.Demand{CPUMilli: 2000, GPUCount: 1, GPUMilli: 250}}
	d, ok := pl.Place(t, c)
	fmt.Println(ok, c.Nodes[d.Node].Name, d.GPUs)
	// Output: true t4-0 [0]
}
