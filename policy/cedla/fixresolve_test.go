package cedla

import (
	"context"
	"testing"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/solver"
)

// Fix and resolve returns a point of the whole program (every bound, row
// and integrality of the MIP without fixes holds), keeps every placement
// the relaxation had integral, and is never below the relaxation's bound;
// on a state whose relaxation is fractional in the binary periods.
func TestFixResolveFeasible(t *testing.T) {
	needHiGHS(t)
	a := Args{}.Default()
	a.BinarySlots = 2
	p, err := New(a, solver.HiGHS(), 60)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []policy.SlotJobState
	for id := range 3 {
		jobs = append(jobs, policy.SlotJobState{SlotJob: policy.SlotJob{ID: id, Deadline: 2, Epochs: 1.3}, Remaining: 1.3, LastType: -1})
	}
	st := state(jobs, []float64{10, 12, 50, 50, 50, 50})
	opts := solver.Options{RelGap: a.RelGap, Threads: 1}
	info := &policy.PlanInfo{}
	lm, lc := p.build(st, jobs, false, nil, nil, true)
	lr, err := p.s.Solve(context.Background(), lm, opts)
	if err != nil || !lr.HasSolution {
		t.Fatalf("relaxation: %v %v", lr.Status, err)
	}
	frac := 0
	for k := range jobs {
		for tt := range 2 {
			for q := range 2 {
				if v := lr.Value(lc.x[[3]int{k, tt, q}]); v > 1e-6 && v < 1-1e-6 {
					frac++
				}
			}
		}
	}
	if frac == 0 {
		t.Fatal("the relaxation is integral in the binary periods: the test needs a fractional one")
	}
	fr, fc, err := p.fixResolve(st, jobs, nil, opts, info, lc, lr)
	if err != nil || !fr.HasSolution {
		t.Fatalf("fix and resolve: %v %v", fr.Status, err)
	}
	full, _ := p.build(st, jobs, false, nil, nil, false)
	if err := full.Check(fr.X, 1e-6); err != nil {
		t.Errorf("fix and resolve's point is not one of the program: %v", err)
	}
	if obj := full.Objective(fr.X); obj < lr.Objective-1e-9 {
		t.Errorf("objective %v below the relaxation's bound %v", obj, lr.Objective)
	}
	for k := range jobs {
		for tt := range 2 {
			for q := range 2 {
				v := lr.Value(lc.x[[3]int{k, tt, q}])
				if w := fr.Value(fc.x[[3]int{k, tt, q}]); (v <= 1e-6 || v >= 1-1e-6) && (w > 0.5) != (v > 0.5) {
					t.Errorf("job %d type %d period %d: integral %v in the relaxation, %v after", k, tt, q, v, w)
				}
			}
		}
	}
	// Through Plan: whichever way the plan is found, the gap it reports is
	// its objective's to the bound it reports, within RelGap.
	plan, err := p.Plan(st)
	if err != nil {
		t.Fatal(err)
	}
	in := plan.Info
	if in.Gap > a.RelGap || gapOf(in.Objective, in.Bound) != in.Gap {
		t.Errorf("plan by %s: gap %v (objective %v, bound %v), want %v within %v", in.Heuristic, in.Gap, in.Objective, in.Bound, gapOf(in.Objective, in.Bound), a.RelGap)
	}
	t.Logf("%d fractional placements; relaxation %.6f, fix and resolve %.6f; plan by %s, gap %.5f", frac, lr.Objective, fr.Objective, in.Heuristic, in.Gap)
}
