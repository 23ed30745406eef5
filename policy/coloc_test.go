package policy_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace/gavel"
)

// TestStartFIFOLeavesTheTable: StartFIFO takes GPUs from a copy of the
// state's free-GPU table (the engine's own), made only when a job starts.
// Two waiting jobs of 2 and 1 GPUs on nodes with 3 and 4 free GPUs: the
// first goes to node 1 (the most free: GPUs 0 and 1), the second to node
// 0 (3 free against node 1's 2 left: GPU 0); the state's table is as it
// was.
func TestStartFIFOLeavesTheTable(t *testing.T) {
	jobs := []policy.ColocJob{
		{ID: 0, Key: gavel.Key{Type: "A", Scale: 2}},
		{ID: 1, Submit: 1, Key: gavel.Key{Type: "A", Scale: 1}},
	}
	table := [][]int{{0, 1, 2}, {0, 1, 2, 3}}
	st := &policy.ColocState{Nodes: 2, GPUsPerNode: 4, FreeGPUs: table}
	for i := range jobs {
		st.Jobs = append(st.Jobs, &policy.ColocView{Job: &jobs[i], Set: -1})
	}
	before := [][]int{slices.Clone(table[0]), slices.Clone(table[1])}
	acts, wait, free := policy.StartFIFO(st)
	want := []policy.ColocAction{
		{Kind: policy.ColocStart, Job: 0, Node: 1, GPUs: []int{0, 1}},
		{Kind: policy.ColocStart, Job: 1, Node: 0, GPUs: []int{0}},
	}
	if d := cmp.Diff(want, acts); d != "" {
		t.Errorf("actions (-want +got):\n%s", d)
	}
	if len(wait) != 0 {
		t.Errorf("%d jobs still waiting, want 0", len(wait))
	}
	if d := cmp.Diff([][]int{{1, 2}, {2, 3}}, free); d != "" {
		t.Errorf("free GPUs left (-want +got):\n%s", d)
	}
	if d := cmp.Diff(before, st.FreeGPUs); d != "" {
		t.Errorf("the state's table was written (-was +now):\n%s", d)
	}
}
