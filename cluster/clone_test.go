package cluster_test

import (
	"testing"

	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
)

// An allocation on a clone leaves the original untouched, and the other
// way round.
func TestCloneIsIndependent(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(4, "G2").Build()
	t1 := &job.Task{ID: 1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 2, GPUMilli: 1000}}
	t2 := &job.Task{ID: 2, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	if err := c.Allocate(t1, 0, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	d := c.Clone()
	if err := d.Allocate(t2, 0, []int{2}); err != nil {
		t.Fatal(err)
	}
	if got := c.Nodes[0].FreeGPUMilli(); got != 2000 {
		t.Errorf("original: %d milli free after an allocation on the clone, want 2000", got)
	}
	if _, ok := c.Placement(2); ok || c.NumPlaced() != 1 || c.AllocGPUMilli != 2000 {
		t.Errorf("original sees the clone's placement: %d placed, %d milli allocated", c.NumPlaced(), c.AllocGPUMilli)
	}
	if err := d.Release(t1); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Placement(1); !ok || c.Nodes[0].FreeGPUMilli() != 2000 {
		t.Error("a release on the clone freed the original's task")
	}
	if err := d.Check(); err != nil {
		t.Errorf("clone: %v", err)
	}
	if _, ok := d.ChangedSince(c.ChangeMark()); ok {
		t.Error("the clone claims to know the original's change record")
	}
}
