package cedla

import (
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/solver"
)

// A solve that runs past the safety net is an error naming the slot and
// the setting to raise, never a plan: HiGHS given 1 ns stops on its clock
// before it has anything.
func TestSafetyNetIsAnError(t *testing.T) {
	needHiGHS(t)
	for _, mode := range []Mode{Soft, Hard} {
		a := Args{}.Default()
		a.Mode, a.SafetyNet = mode, time.Nanosecond
		p, err := New(a, solver.HiGHS(), 60)
		if err != nil {
			t.Fatal(err)
		}
		st := state([]policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 1, Deadline: 2, Epochs: 1}, Remaining: 1, LastType: -1}}, []float64{50, 40, 10})
		st.Slot = 0
		plan, err := p.Plan(st)
		if err == nil {
			t.Fatalf("%s: plan %+v with a 1 ns safety net, want an error", mode, plan.Info)
		}
		for _, want := range []string{"slot 0", "safety net of 1ns", "raise cedla.safety_net"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q lacks %q", mode, err, want)
			}
		}
	}
}

// The rounding heuristic keeps a job's use of the binary periods (up) and
// respects each type's node count: three jobs each using half of the one
// fast node in the relaxation's two binary periods (three halves on one
// node per period) get at most one run per period on it.
func TestRoundKeepsCapacity(t *testing.T) {
	needHiGHS(t)
	a := Args{}.Default()
	a.BinarySlots = 2
	p, _ := New(a, solver.HiGHS(), 60)
	var jobs []policy.SlotJobState
	for id := range 3 {
		jobs = append(jobs, policy.SlotJobState{SlotJob: policy.SlotJob{ID: id, Deadline: 5, Epochs: 1}, Remaining: 1, LastType: -1})
	}
	st := state(jobs, []float64{10, 10, 50, 50, 50, 50})
	md, c := p.build(st, jobs, false, nil, nil, true)
	// A relaxation's point: every job at 0.5 on the fast type (0) in both
	// binary periods.
	res := solver.Result{HasSolution: true}
	x := make([]float64, md.NumVars())
	for k := range jobs {
		for q := range 2 {
			x[c.x[[3]int{k, 0, q}]] = 0.5
		}
	}
	res.X = x
	for _, up := range []bool{true, false} {
		fix := p.round(st, jobs, c, res, up)
		// up: each job's 0.5 + 0.5 = 1 binary period, on type 0, the
		// earlier period on a tie: three runs in period 0 on one node, the
		// two of higher ID dropped. Half: 0.5 >= 1/2 fixes all three in
		// both periods, capped to job 0 in each.
		want := map[bool][2]int{true: {1, 0}, false: {1, 1}}[up]
		for q := range 2 {
			ones := 0
			for k := range jobs {
				ones += int(fix[[3]int{k, 0, q}] + fix[[3]int{k, 1, q}])
			}
			if ones != want[q] || want[q] == 1 && fix[[3]int{0, 0, q}] != 1 {
				t.Errorf("up %v, period %d: %d runs fixed (job 0: %v), want %d (job 0)", up, q, ones, fix[[3]int{0, 0, q}], want[q])
			}
		}
	}
}
