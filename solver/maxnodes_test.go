//go:build highs

package solver_test

import (
	"context"
	"testing"
	"time"

	"github.com/wattsched/wattsched/solver"
)

// TestMaxNodes: a node limit is a deterministic stop. The hard knapsack,
// which branch and cut cannot close at its root, stops with status
// IterationLimit after MaxNodes nodes, and two runs give the same point,
// objective, bound and node count; simplex iterations are never negative (HiGHS 1.3.1 reports -1 after a MIP).
func TestMaxNodes(t *testing.T) {
	m := hardKnapsack(500)
	o := solver.Options{MaxNodes: 3, Threads: 1, TimeLimit: 10 * time.Minute}
	var first solver.Result
	for run := range 2 {
		res, err := solver.HiGHS().Solve(context.Background(), m, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != solver.IterationLimit {
			t.Fatalf("status %v after %d nodes, want iteration limit", res.Status, res.Nodes)
		}
		if res.LPIterations < 0 {
			t.Errorf("LP iterations %d", res.LPIterations)
		}
		if res.Nodes > 3 || res.Nodes < 1 {
			t.Errorf("%d nodes, want 1..3", res.Nodes)
		}
		if res.HasSolution {
			if err := m.Check(res.X, 1e-6); err != nil {
				t.Error(err)
			}
		}
		t.Logf("run %d: nodes %d, LP iterations %d, objective %v, bound %v", run, res.Nodes, res.LPIterations, res.Objective, res.Bound)
		if run == 0 {
			first = res
			continue
		}
		if res.Nodes != first.Nodes || res.Objective != first.Objective && !(res.Objective != res.Objective && first.Objective != first.Objective) || res.Bound != first.Bound || res.LPIterations != first.LPIterations {
			t.Errorf("second run differs: nodes %d/%d objective %v/%v bound %v/%v LP iterations %d/%d", first.Nodes, res.Nodes, first.Objective, res.Objective, first.Bound, res.Bound, first.LPIterations, res.LPIterations)
		}
	}
	if _, err := solver.HiGHS().Solve(context.Background(), m, solver.Options{MaxNodes: -1}); err == nil {
		t.Error("MaxNodes -1 accepted")
	}
}
