package cedla

import (
	"slices"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/solver"
)

// TestAdmittedNeverRejected: Problem 1 decides a job once, at its first
// plan (Sec. 2.3, Alg. 1). On tiny() (fast: 1 epoch per slot, slow: 0.5;
// no restart loss) job 0 (priority 0, 3.5 epochs due in slot 3) arrives
// in slot 0 and is admitted: the fast node's 4 slots do 4 >= 3.5. Job 1
// (priority 5, 2.5 epochs due in slot 3) arrives in slot 1: job 0 has
// 2.5 left, and slots 1-3 hold 3 fast + 1.5 slow epochs on one node per
// job and slot, so only one of the two can make it. Rejecting by priority
// alone would drop job 0, which has run (the former behaviour); the job
// rejected must be job 1, the new one, and job 0 must finish in time.
func TestAdmittedNeverRejected(t *testing.T) {
	needHiGHS(t)
	a := Args{}.Default()
	a.Mode = Hard
	p, err := New(a, solver.HiGHS(), 0)
	if err != nil {
		t.Fatal(err)
	}
	m := tiny()
	o := sim.SlottedOptions{Models: m, Slots: 4, Lookahead: 4, Every: 1, Planner: p,
		Jobs:  []policy.SlotJob{{ID: 0, Arrival: 0, Deadline: 3, Epochs: 3.5}, {ID: 1, Arrival: 1, Deadline: 3, Epochs: 2.5, Priority: 5}},
		Truth: sim.SlotTruth{TrainW: m.TrainW, InferW: func(i, t int, l float64) hw.Watts { return hw.Watts(m.InferBaseW[i][t] + m.InferPerReqW[i][t]*l) }}}
	for range 8 {
		o.Load = append(o.Load, []float64{0})
		o.Price = append(o.Price, 25)
	}
	r, err := sim.RunSlotted(o)
	if err != nil {
		t.Fatal(err)
	}
	j0, j1 := r.Jobs[0], r.Jobs[1]
	if j0.Rejected || !j0.Done || j0.Lateness != 0 {
		t.Errorf("job 0 (admitted in slot 0): %+v, want done by its deadline, never rejected", j0)
	}
	if !j1.Rejected || j1.Slots != 0 {
		t.Errorf("job 1 (new in slot 1): %+v, want rejected before it ran", j1)
	}
}

// TestAdmittedLateIsSoftened: an admitted job that Problem 1 can no longer
// finish by its deadline (3 epochs left, due in slot 1; the fast node does
// 2 by then) is not rejected: its deadline row is soft in this plan (the
// plan records it in Softened), it may run until slot 1 + ceil(0.5 x 2) =
// 2 at the late penalty, which fits 3 epochs, so the plan runs it in slots
// 0-2. The same job not yet admitted is rejected at once.
func TestAdmittedLateIsSoftened(t *testing.T) {
	needHiGHS(t)
	a := Args{}.Default()
	a.Mode = Hard
	p, _ := New(a, solver.HiGHS(), 0)
	job := policy.SlotJobState{SlotJob: policy.SlotJob{ID: 5, Deadline: 1, Epochs: 3}, Remaining: 3, LastType: -1, Admitted: true}
	plan, err := p.Plan(state([]policy.SlotJobState{job}, []float64{20, 20, 20}))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Reject) != 0 || !slices.Equal(plan.Info.Softened, []int{5}) {
		t.Fatalf("admitted: rejected %v, softened %v; want none rejected, job 5 softened", plan.Reject, plan.Info.Softened)
	}
	for tau := range 3 {
		if d := plan.Slots[tau]; len(d.Train) != 1 || d.Train[0].Job != 5 {
			t.Errorf("slot %d trains %v, want job 5 (late is better than never)", tau, d.Train)
		}
	}
	job.Admitted = false
	plan, err = p.Plan(state([]policy.SlotJobState{job}, []float64{20, 20, 20}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plan.Reject, []int{5}) || len(plan.Info.Softened) != 0 {
		t.Errorf("new: rejected %v, softened %v; want job 5 rejected", plan.Reject, plan.Info.Softened)
	}
}
