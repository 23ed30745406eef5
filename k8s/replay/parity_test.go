package replay

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/job"
)

// TestReasonFreshState: the state rebuilt for one pod's bind is not read
// from scores cached for another pod's. Node g2-0 holds an 8-GPU pod when
// the first 8-GPU pod is bound and a CPU-only pod when the second is: both
// rebuilt clusters have g2-0 at the same Version, and a Placer kept from
// the first state would find g2-0 full for the second pod and call
// kube-scheduler's choice of it "plugin". On the second state g2-0 is the
// only node with 8 free GPUs, so the reason is "state".
func TestReasonFreshState(t *testing.T) {
	s, in0, err := Load(filepath.Join("testdata", "small.yaml"), 100)
	if err != nil {
		t.Fatal(err)
	}
	gpu8 := job.Demand{CPUMilli: 8000, MemMiB: 16384, GPUCount: 8, GPUMilli: 1000}
	in := &tasks.Inputs{Nodes: in0.Nodes, Pods: []job.Task{
		{ID: 0, Name: "p", Demand: gpu8, Work: 60},
		{ID: 1, Name: "r1", Demand: gpu8, Work: 60},
		{ID: 2, Name: "q", Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024}, Work: 60},
		{ID: 3, Name: "r2", Demand: gpu8, Work: 60},
	}}
	job.Classify(in.Pods)
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	pr := &PolicyRun{Policy: s.Policies[0].Name, Start: t0, Pods: []Observed{
		{Node: "g2-0", GPUs: all, Bound: at(1000), Finished: at(2000)},
		{Node: "g2-1", GPUs: all, Bound: at(1500), Finished: at(10000)},
		{Node: "g2-0", Bound: at(3000), Finished: at(10000)},
		{Node: "g2-0", GPUs: all, Bound: at(4000), Finished: at(10000)},
	}}
	newPlacer := placerFor(Env("test"), &s.Policies[0], in)
	byName := map[string]cluster.NodeID{}
	for i, n := range in.Nodes {
		byName[n.Name] = cluster.NodeID(i)
	}
	// The first 8-GPU pod: g2-0 is full, g2-1 is the core's only choice.
	if why, err := reason(in, pr, newPlacer, 1, byName["g2-1"]); err != nil || why != ReasonState {
		t.Fatalf("r1 on g2-1: %q, %v; want %q", why, err, ReasonState)
	}
	if why, err := reason(in, pr, newPlacer, 3, byName["g2-0"]); err != nil || why != ReasonState {
		t.Fatalf("r2 on g2-0 with g2-1 full: %q, %v; want %q (scores of another state reused?)", why, err, ReasonState)
	}
}
