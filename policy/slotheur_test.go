package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/policy"
)

// On a small cluster where every model ends up with at most one node per
// type, a model left without nodes takes one from a model that serves on
// two types, whose load moves to its other node: every request is placed.
func TestSpreadInferenceSmallCluster(t *testing.T) {
	m := &policy.SlotModels{Models: []string{"a", "b", "c"}, Types: []policy.SlotType{{Name: "x", Count: 2, F: 1}, {Name: "y", Count: 2, F: 1}},
		Mu: [][]float64{{10, 10}, {10, 10}, {10, 10}}, Bound: []float64{1, 1, 1}}
	d := policy.NewSlotDecision(m)
	load := []float64{2, 4, 1}
	// One node free on x, two on y. Per type, floor(n x load / 7) and the
	// rest to the most loaded: x: b; y: 0, 1, 0 and the rest to b, so b
	// has 1 + 2 nodes. a takes one of b's two y nodes (the old rule); c
	// finds no model with two nodes on one type and takes b's x node,
	// b's load moving to its y node.
	policy.SpreadInference(m, load, []int{1, 2}, false, &d)
	want := [][]int{{0, 1}, {0, 1}, {1, 0}}
	if diff := cmp.Diff(want, d.Infer); diff != "" {
		t.Fatalf("nodes (-want +got):\n%s", diff)
	}
	wantLoad := [][]float64{{0, 2}, {0, 4}, {1, 0}}
	if diff := cmp.Diff(wantLoad, d.Load); diff != "" {
		t.Errorf("load (-want +got):\n%s", diff)
	}
}
