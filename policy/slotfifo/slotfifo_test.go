package slotfifo

import (
	"slices"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/slottest"
)

// TestSpreadsOverTypes: new jobs go in arrival order to the type with the
// most free nodes (ties: the first type), never the slowest type first:
// with 3 fast and 4 slow nodes and no inference, jobs 0-3 go to slow,
// fast, slow, fast (free 3/4 -> 3/3 -> 2/3 -> 2/2 -> 1/2).
func TestSpreadsOverTypes(t *testing.T) {
	m := &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 3, F: 2, Idle: 50}, {Name: "slow", Count: 4, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.4}}, Mu: [][]float64{{40, 20}}, Bound: []float64{0.2},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 45}}, InferPerReqW: [][]float64{{2, 3}},
	}
	st := &policy.SlotState{Models: m, Horizon: 1, Load: [][]float64{{0}}, Price: []float64{25}, On: []int{0, 0}}
	for id := range 4 {
		st.Jobs = append(st.Jobs, policy.SlotJobState{SlotJob: policy.SlotJob{ID: id, Deadline: 5, Epochs: 1}, Remaining: 1, LastType: -1})
	}
	plan, err := New().Plan(st)
	if err != nil {
		t.Fatal(err)
	}
	want := []policy.SlotRun{{Job: 0, Type: 1}, {Job: 1, Type: 0}, {Job: 2, Type: 1}, {Job: 3, Type: 0}}
	if got := plan.Slots[0].Train; !slices.Equal(got, want) {
		t.Errorf("trains %v, want %v", got, want)
	}
}

// TestFIFO: every node stays on (no DRS) and jobs run without pause in
// arrival order until done.
func TestFIFO(t *testing.T) {
	r := slottest.Week(t, New())
	for _, s := range r.Samples {
		if s.On[0]+s.On[1] != 6 {
			t.Fatalf("slot %d: %v on, want all 6", s.Slot, s.On)
		}
	}
	for _, j := range r.Jobs {
		if !j.Done || j.Starts != 1 || j.Rejected {
			t.Errorf("job %+v: want done after one start", j)
		}
	}
}

// At the largest load a scenario allows, on clusters as small as the
// models, every plan is valid. Read as planned, every request violates the
// bound; read by the default (concentrate), all but those of the groups
// kept at capacity do (>= 99.99%).
func TestOverload(t *testing.T) {
	for _, c := range slottest.Clusters {
		r := slottest.OverloadRead(t, New(), c[0], c[1], 1, slottest.MaxLoad, policy.AsPlanned)
		if r.Requests == 0 || r.ViolatingRequests != r.Requests {
			t.Errorf("as planned, %v nodes: %v of %v requests violate the bound, want all", c, r.ViolatingRequests, r.Requests)
		}
		r = slottest.Overload(t, New(), c[0], c[1], 1, slottest.MaxLoad)
		if r.Requests == 0 || r.ViolatingRequests < 0.9999*r.Requests || r.ViolatingRequests > r.Requests {
			t.Errorf("concentrated, %v nodes: %v of %v requests violate the bound, want all but those of groups at capacity", c, r.ViolatingRequests, r.Requests)
		}
	}
}
