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
	if why, err := reason(in, pr, newPlacer, 1, byName["g2-1"], 100); err != nil || why != ReasonState {
		t.Fatalf("r1 on g2-1: %q, %v; want %q", why, err, ReasonState)
	}
	if why, err := reason(in, pr, newPlacer, 3, byName["g2-0"], 100); err != nil || why != ReasonState {
		t.Fatalf("r2 on g2-0 with g2-1 full: %q, %v; want %q (scores of another state reused?)", why, err, ReasonState)
	}
}

// TestReasonSnapshot: a pod whose node the core would not pick on the
// cluster as the watch saw it at the bind is "snapshot" when a state
// kube-scheduler may have scored explains it, and "plugin" otherwise.
// Node g2-1 holds a CPU-only pod, so that the core prefers one of the two
// 8-GPU nodes (X) for an 8-GPU pod; kube-scheduler put it on the other (Y).
func TestReasonSnapshot(t *testing.T) {
	s, in0, err := Load(filepath.Join("testdata", "small.yaml"), 100)
	if err != nil {
		t.Fatal(err)
	}
	gpu8 := job.Demand{CPUMilli: 8000, MemMiB: 16384, GPUCount: 8, GPUMilli: 1000}
	in := &tasks.Inputs{Nodes: in0.Nodes, Pods: []job.Task{
		{ID: 0, Name: "q", Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024}, Work: 600},
		{ID: 1, Name: "p", Demand: gpu8, Work: 60},
		{ID: 2, Name: "k", Demand: gpu8, Work: 60},
	}}
	job.Classify(in.Pods)
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	newPlacer := placerFor(Env("test"), &s.Policies[0], in)
	byName := map[string]cluster.NodeID{}
	for i, n := range in.Nodes {
		byName[n.Name] = cluster.NodeID(i)
	}
	// Which of the two the core prefers with q on g2-1 and nothing else.
	c, _, _ := stateAt(in, &PolicyRun{Start: t0, Pods: []Observed{{Node: "g2-1", Bound: at(0)}, {}, {Bound: at(1)}}}, 2)
	pl, _ := newPlacer()
	top, _, ok := pl.Top(&in.Pods[2], c)
	if !ok || len(top) != 1 {
		t.Fatalf("core's best for an 8-GPU pod with a CPU pod on g2-1: %v; the test needs one", top)
	}
	x := in.Nodes[top[0]].Name
	y := map[string]string{"g2-0": "g2-1", "g2-1": "g2-0"}[x]
	for _, c := range []struct {
		name string
		p    Observed
		want string
	}{
		// p's finish on x seen 10 ms before k's bind, after k was created:
		// kube-scheduler's snapshot may still have held it.
		{"finish in the window", Observed{Node: x, GPUs: all, Created: at(900), Bound: at(1000), Finished: at(4990)}, ReasonSnapshot},
		// p, created before k, bound on x 5 ms after k's bind: assumed by
		// kube-scheduler before k's cycle.
		{"late bind", Observed{Node: x, GPUs: all, Created: at(4970), Bound: at(5005), Finished: at(9000)}, ReasonSnapshot},
		// p's finish seen before k was created: no snapshot held it.
		{"finish before creation", Observed{Node: x, GPUs: all, Created: at(900), Bound: at(1000), Finished: at(4900)}, ReasonPlugin},
		// p created after k and bound after it: scheduled after k.
		{"bind of a later pod", Observed{Node: x, GPUs: all, Created: at(4985), Bound: at(5005), Finished: at(9000)}, ReasonPlugin},
	} {
		pr := &PolicyRun{Start: t0, Pods: []Observed{
			{Node: "g2-1", Created: at(0), Bound: at(10)},
			c.p,
			{Node: y, GPUs: all, Created: at(4980), Bound: at(5000)},
		}}
		if why, err := reason(in, pr, newPlacer, 2, byName[y], 100); err != nil || why != c.want {
			t.Errorf("%s: k on %s (the core prefers %s): %q, %v; want %q", c.name, y, x, why, err, c.want)
		}
	}
}
