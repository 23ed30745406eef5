package cluster_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
)

func task(id int, cpu int64, gpus int, milli int64) *job.Task {
	return &job.Task{ID: job.ID(id), Demand: job.Demand{CPUMilli: cpu, MemMiB: 1024, GPUCount: gpus, GPUMilli: milli}}
}

func TestAllocateReleaseAndInvariants(t *testing.T) {
	c := clustertest.New().Node("n0").GPUs(4, "T4").Build()
	n := c.Nodes[0]
	if err := c.Allocate(task(1, 2000, 1, 300), 0, []int{2}); err != nil {
		t.Fatal(err)
	}
	if err := c.Allocate(task(2, 2000, 2, 1000), 0, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	// GPU 2 has 1000-300 = 700 free, GPUs 0 and 1 are taken whole, GPU 3 is idle.
	if diff := cmp.Diff([]int64{0, 0, 700, 1000}, n.GPUFree); diff != "" {
		t.Errorf("GPUFree (-want +got):\n%s", diff)
	}
	if c.AllocGPUMilli != 2300 {
		t.Errorf("AllocGPUMilli = %d, want 300+2000 = 2300", c.AllocGPUMilli)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(task(1, 2000, 1, 300)); err != nil {
		t.Fatal(err)
	}
	if n.GPUFree[2] != 1000 || n.FreeCPUMilli != 32000-2000 || n.Affinity[0] != 0 || n.Affinity[2] != 1 {
		t.Errorf("after release: %+v", n)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestAllocateRejectsInvalid(t *testing.T) {
	cases := []struct {
		name string
		t    *job.Task
		gpus []int
	}{
		{"too much cpu", task(1, 64000, 0, 0), nil},
		{"wrong gpu count", task(1, 1, 2, 1000), []int{0}},
		{"gpu listed twice", task(1, 1, 2, 1000), []int{0, 0}},
		{"gpu out of range", task(1, 1, 1, 1000), []int{7}},
		{"busy gpu for whole task", task(1, 1, 1, 1000), []int{1}},
		{"share over capacity", task(1, 1, 1, 600), []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clustertest.New().Node("n0").GPUs(2, "T4").Build()
			if err := c.Allocate(task(9, 1, 1, 500), 0, []int{1}); err != nil {
				t.Fatal(err)
			}
			err := c.Allocate(tc.t, 0, tc.gpus)
			if !errors.Is(err, cluster.ErrInvalid) {
				t.Fatalf("Allocate = %v, want ErrInvalid", err)
			}
			if err := c.Check(); err != nil {
				t.Fatalf("state changed by a rejected allocation: %v", err)
			}
		})
	}
}

func TestFitsAndBestFit(t *testing.T) {
	c := clustertest.New().Node("n0").GPUs(4, "T4").Build()
	n := c.Nodes[0]
	copy(n.GPUFree, []int64{1000, 400, 700, 1000})
	shared := job.Demand{CPUMilli: 1, GPUCount: 1, GPUMilli: 350}
	// Tightest GPU with >= 350 free is GPU 1 (400 free).
	if got := cluster.BestFitGPUs(&shared, n); !cmp.Equal(got, []int{1}) {
		t.Errorf("BestFitGPUs shared = %v, want [1]", got)
	}
	whole := job.Demand{GPUCount: 2, GPUMilli: 1000}
	if got := cluster.BestFitGPUs(&whole, n); !cmp.Equal(got, []int{0, 3}) {
		t.Errorf("BestFitGPUs whole = %v, want [0 3]", got)
	}
	three := job.Demand{GPUCount: 3, GPUMilli: 1000}
	if ok, why := cluster.Fits(&three, n); ok || why == "" {
		t.Errorf("Fits(3 whole) = %v %q, want false with reason", ok, why)
	}
	spec := job.Demand{GPUCount: 1, GPUMilli: 100, GPUSpec: []string{"A100"}}
	if ok, _ := cluster.Fits(&spec, n); ok {
		t.Error("gpu_spec A100 must not fit a T4 node")
	}
	if err := c.SetState(0, cluster.Off); err != nil {
		t.Fatal(err)
	}
	if ok, _ := cluster.Fits(&job.Demand{CPUMilli: 1}, n); ok {
		t.Error("a powered-off node must not fit anything")
	}
}
