package cluster_test

import (
	"fmt"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// Build a two-node cluster from catalog models, place a task that takes
// half a GPU, and read what is left.
func ExampleNew() {
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{
		{Name: "a100-0", CPUMilli: 64000, MemMiB: 512 << 10, GPUs: 8, GPUModel: "A100"},
		{Name: "t4-0", CPUMilli: 32000, MemMiB: 128 << 10, GPUs: 2, GPUModel: "T4"},
	})
	if err != nil {
		panic(err)
	}
	t := &job.Task{ID: 1, Class: -1, Demand: job.Demand{CPUMilli: 4000, MemMiB: 8192, GPUCount: 1, GPUMilli: 500}}
	n := c.Nodes[1]
	if ok, why := cluster.Fits(&t.Demand, n); !ok {
		panic(why)
	}
	if err := c.Allocate(t, n.ID, cluster.BestFitGPUs(&t.Demand, n)); err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d milli-GPU and %d milli-CPU free; cluster %d milli-GPU in all\n", n.Name, n.FreeGPUMilli(), n.FreeCPUMilli, c.TotalGPUMilli)
	// Output: t4-0: 1500 milli-GPU and 28000 milli-CPU free; cluster 10000 milli-GPU in all
}

func ExampleMIGGPU() {
	g, _ := hw.MIGFor("A100-SXM4-40GB")
	m, _ := cluster.NewMIGGPU(g, nil, true) // dynamic MIG: instances made on demand
	fmt.Println(m.Starts("3g.20gb"))
	_ = m.Take("4g.20gb", 0, 1)
	fmt.Println(m.Starts("3g.20gb"), m.Starts("2g.10gb"))
	fmt.Println(m.Take("3g.20gb", 2, 2) != nil)
	// Output:
	// [0 4]
	// [4] [4]
	// true
}
