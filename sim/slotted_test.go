package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
)

// fixed replays a list of decisions, one per slot.
type fixed struct {
	slots  []policy.SlotDecision
	reject map[int][]int
	calls  int
}

func (f *fixed) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	f.calls++
	return &policy.SlotPlan{Slots: []policy.SlotDecision{f.slots[st.Slot]}, Reject: f.reject[st.Slot]}, nil
}

func twoTypes() *policy.SlotModels {
	return &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 2, F: 2, Idle: 50}, {Name: "slow", Count: 1, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.5}}, Mu: [][]float64{{100, 50}}, Bound: []float64{0.1},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 50}}, InferPerReqW: [][]float64{{0.1, 0.1}},
	}
}

func dec(on []int, train []policy.SlotRun, infer []int, load []float64) policy.SlotDecision {
	return policy.SlotDecision{On: on, Train: train, Infer: [][]int{infer}, Load: [][]float64{load}}
}

func opts(p policy.SlotPlanner, jobs []policy.SlotJob, load []float64, slots int) SlottedOptions {
	o := SlottedOptions{Models: twoTypes(), Jobs: jobs, Slots: slots, Lookahead: 1, Every: 1, Planner: p,
		Truth: SlotTruth{TrainW: [][]hw.Watts{{300, 200}}, InferW: func(i, t int, l float64) hw.Watts { return hw.Watts(100 + l) }, RestartSeconds: 90, Boot: 1000}}
	for h := range slots + 1 {
		o.Load = append(o.Load, []float64{load[min(h, len(load)-1)]})
		o.Price = append(o.Price, 20)
	}
	return o
}

// TestSlottedEnergyAndProgress: one job of 1.8 epochs on the fast type
// (1 epoch per slot, 90 s restart): slot 0 does 1 - 90/900 = 0.9 epochs,
// slot 1 (same node, no restart) the last 0.9: done in slot 1. Inference
// of 10 req/s on the slow node both slots.
// Energy: three boots of 1000 J (two fast nodes and the slow one in slot
// 0); slot 0: job node 300 W x 900 s; other fast node idle 50 W x 900 s;
// slow node (100 + 10) W x 900 s; slot 1: job node 300 W x 810 s + 50 W x
// 90 s idle after the job ends; slow node 110 W x 900 s; the second fast
// node is off.
func TestSlottedEnergyAndProgress(t *testing.T) {
	p := &fixed{slots: []policy.SlotDecision{
		dec([]int{2, 1}, []policy.SlotRun{{Job: 5, Type: 0}}, []int{0, 1}, []float64{0, 10}),
		dec([]int{1, 1}, []policy.SlotRun{{Job: 5, Type: 0}}, []int{0, 1}, []float64{0, 10}),
	}}
	r, err := RunSlotted(opts(p, []policy.SlotJob{{ID: 5, Deadline: 1, Epochs: 1.8}}, []float64{10}, 2))
	if err != nil {
		t.Fatal(err)
	}
	j := r.Jobs[0]
	if !j.Done || j.Finish != 1 || j.Starts != 1 || j.Lateness != 0 {
		t.Errorf("job %+v, want done in slot 1 after one start", j)
	}
	want := 3*1000.0 + 300*900 + 50*900 + 110*900 + 300*810 + 50*90 + 110*900
	if got := float64(r.Ledger.Total()); math.Abs(got-want) > 1e-6 {
		t.Errorf("energy %v J, want %v", got, want)
	}
	if r.TurnOns != 3 || r.Requests != 2*10*900 || r.ViolatingRequests != 0 {
		t.Errorf("turn-ons %d, requests %v, violating %v", r.TurnOns, r.Requests, r.ViolatingRequests)
	}
	// Price 20 is in the band [20, 30).
	if r.TrainSlotsByPrice[1] != 2 || r.TrainSlotsByPrice[0] != 0 {
		t.Errorf("training slots by price %v, want both in [20, 30)", r.TrainSlotsByPrice)
	}
}

// TestSlottedLatency: 45 req/s on one slow node (mu 50): latency
// 1/(50-45) + 1/50 = 0.22 s > 0.1 s bound: every request violates.
func TestSlottedLatency(t *testing.T) {
	p := &fixed{slots: []policy.SlotDecision{dec([]int{0, 1}, nil, []int{0, 1}, []float64{0, 45})}}
	r, err := RunSlotted(opts(p, nil, []float64{45}, 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.ViolatingRequests != 45*900 || r.Requests != 45*900 {
		t.Errorf("violating %v of %v requests, want all 40500", r.ViolatingRequests, r.Requests)
	}
}

// TestSlottedRejectsBadPlans: each plan breaks one rule of the model.
func TestSlottedRejectsBadPlans(t *testing.T) {
	job := []policy.SlotJob{{ID: 1, Arrival: 1, Deadline: 3, Epochs: 1}}
	for name, d := range map[string]policy.SlotDecision{
		"more nodes busy than on":  dec([]int{0, 1}, []policy.SlotRun{{Job: 1, Type: 0}}, []int{0, 1}, []float64{0, 5}),
		"job before arrival":       dec([]int{1, 1}, []policy.SlotRun{{Job: 1, Type: 0}}, []int{0, 1}, []float64{0, 5}),
		"unknown job":              dec([]int{1, 1}, []policy.SlotRun{{Job: 9, Type: 0}}, []int{0, 1}, []float64{0, 5}),
		"load not served in full":  dec([]int{0, 1}, nil, []int{0, 1}, []float64{0, 4}),
		"load on no node":          dec([]int{0, 1}, nil, []int{0, 0}, []float64{0, 5}),
		"more on than exist":       dec([]int{3, 1}, nil, []int{0, 1}, []float64{0, 5}),
		"job on two types at once": dec([]int{1, 1}, []policy.SlotRun{{Job: 1, Type: 0}, {Job: 1, Type: 1}}, []int{0, 0}, []float64{5, 0}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := RunSlotted(opts(&fixed{slots: []policy.SlotDecision{d}}, job, []float64{5}, 1))
			if !errors.Is(err, ErrSlotPlan) {
				t.Errorf("err %v, want ErrSlotPlan", err)
			}
		})
	}
}

// TestSlottedRejectionAndLateness: a rejected job never runs again; an
// unfinished job is late by the slots after its deadline.
func TestSlottedRejectionAndLateness(t *testing.T) {
	jobs := []policy.SlotJob{{ID: 1, Deadline: 0, Epochs: 5}, {ID: 2, Deadline: 0, Epochs: 5}}
	idle := dec([]int{0, 1}, nil, []int{0, 1}, []float64{0, 5})
	p := &fixed{slots: []policy.SlotDecision{idle, idle, idle}, reject: map[int][]int{0: {2}}}
	r, err := RunSlotted(opts(p, jobs, []float64{5}, 3))
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs[0].Done || r.Jobs[0].Lateness != 2 || !r.Jobs[1].Rejected {
		t.Errorf("jobs %+v", r.Jobs)
	}
	bad := &fixed{slots: []policy.SlotDecision{idle, dec([]int{1, 1}, []policy.SlotRun{{Job: 2, Type: 0}}, []int{0, 1}, []float64{0, 5})}, reject: map[int][]int{0: {2}}}
	if _, err := RunSlotted(opts(bad, jobs, []float64{5}, 2)); !errors.Is(err, ErrSlotPlan) {
		t.Errorf("a rejected job ran: err %v", err)
	}
}

// TestSlottedAdmitOnce: a job is admitted or rejected at its first plan.
// Job 1 arrives in slot 0 and the plan of slot 0 does not reject it: it is
// admitted, and the plan of slot 1 that rejects it violates the model.
// Job 2 arrives in slot 1: that plan may reject it. The planner sees
// Admitted on job 1 from slot 1 on, not on job 2 in its first plan.
func TestSlottedAdmitOnce(t *testing.T) {
	jobs := []policy.SlotJob{{ID: 1, Deadline: 3, Epochs: 5}, {ID: 2, Arrival: 1, Deadline: 3, Epochs: 5}}
	idle := dec([]int{0, 1}, nil, []int{0, 1}, []float64{0, 5})
	slots := []policy.SlotDecision{idle, idle, idle}
	for _, c := range []struct {
		name   string
		reject []int
		ok     bool
	}{{"new job rejected at its first plan", []int{2}, true}, {"admitted job rejected later", []int{1}, false}} {
		t.Run(c.name, func(t *testing.T) {
			var seen [][]policy.SlotJobState
			p := &watch{fixed: fixed{slots: slots, reject: map[int][]int{1: c.reject}}, seen: &seen}
			_, err := RunSlotted(opts(p, jobs, []float64{5}, 3))
			if c.ok && err != nil || !c.ok && !errors.Is(err, ErrSlotPlan) {
				t.Fatalf("err %v, want ok %v (ErrSlotPlan otherwise)", err, c.ok)
			}
			if len(seen) < 2 || !seen[1][0].Admitted || seen[1][1].Admitted || seen[0][0].Admitted {
				t.Errorf("states seen %+v: want job 1 admitted from slot 1, job 2 new in slot 1", seen)
			}
		})
	}
}

// watch is fixed that records the jobs of every state it plans.
type watch struct {
	fixed
	seen *[][]policy.SlotJobState
}

func (w *watch) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	*w.seen = append(*w.seen, append([]policy.SlotJobState(nil), st.Jobs...))
	return w.fixed.Plan(st)
}

// TestSlottedReading: the engine reads every decision by o.Reading before
// applying it. 60 req/s on one fast node (cap 100 - 100/(100 x 0.1 - 1) =
// 88.89) and 20 on the slow one (cap 50 - 50/(50 x 0.1 - 1) = 37.5): as
// planned nothing violates; 95 + 0 on fast and slow, as planned, puts 95
// over the fast node's cap (all 95 x 900 requests violate), concentrated
// moves 6.11 to the slow node and none violate.
func TestSlottedReading(t *testing.T) {
	d := dec([]int{1, 1}, nil, []int{1, 1}, []float64{95, 0})
	for _, c := range []struct {
		reading policy.PlanReading
		want    float64
	}{{policy.AsPlanned, 95 * 900}, {policy.Concentrate, 0}, {"", 0}} {
		o := opts(&fixed{slots: []policy.SlotDecision{d}}, nil, []float64{95}, 1)
		o.Reading = c.reading
		var lambda []float64
		o.Record = func(_ int, nodes []SlotNode) {
			for _, n := range nodes {
				if n.Model >= 0 {
					lambda = append(lambda, n.Lambda)
				}
			}
		}
		r, err := RunSlotted(o)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.ViolatingRequests-c.want) > 1e-6 {
			t.Errorf("reading %q: %v violating requests (node loads %v), want %v", c.reading, r.ViolatingRequests, lambda, c.want)
		}
		if d.Load[0][0] != 95 {
			t.Fatalf("reading %q changed the planner's decision: %v", c.reading, d.Load)
		}
	}
	o := opts(&fixed{slots: []policy.SlotDecision{d}}, nil, []float64{95}, 1)
	o.Reading = "spread"
	if _, err := RunSlotted(o); err == nil {
		t.Error(`reading "spread" ran`)
	}
}

// TestSlottedProgress: Progress is called each time another twentieth of
// the slots is applied (50 slots: after slots 3, 5, 8, 10, ..., 50, the
// first done*20/50 that passes each multiple of 50), the last call says
// every slot is done, and the result is the same with and without it.
func TestSlottedProgress(t *testing.T) {
	const slots = 50
	run := func(progress func(done, total int)) *SlottedResult {
		t.Helper()
		p := &fixed{}
		for range slots {
			p.slots = append(p.slots, dec([]int{1, 1}, []policy.SlotRun{{Job: 5, Type: 0}}, []int{0, 1}, []float64{0, 10}))
		}
		o := opts(p, []policy.SlotJob{{ID: 5, Model: 0, Arrival: 0, Deadline: 60, Epochs: 30}}, []float64{10}, slots)
		o.Progress = progress
		r, err := RunSlotted(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var calls [][2]int
	with := run(func(done, total int) { calls = append(calls, [2]int{done, total}) })
	without := run(nil)
	if len(calls) != 20 {
		t.Fatalf("%d progress calls, want 20 (one per twentieth of %d slots): %v", len(calls), slots, calls)
	}
	for k, c := range calls {
		// The k-th twentieth (k+1)/20 of 50 slots is passed at slot
		// ceil(50(k+1)/20).
		if want := (slots*(k+1) + 19) / 20; c != [2]int{want, slots} {
			t.Errorf("call %d: %v, want [%d %d]", k, c, want, slots)
		}
	}
	if diff := cmp.Diff(without, with, cmp.AllowUnexported(SlottedResult{}, Ledger{}, component{})); diff != "" {
		t.Errorf("result with progress differs (-without +with):\n%s", diff)
	}
}
