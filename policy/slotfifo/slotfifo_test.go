package slotfifo

import (
	"testing"

	"github.com/wattsched/wattsched/policy/slottest"
)

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
// models, every plan is valid and every request violates the bound.
func TestOverload(t *testing.T) {
	for _, c := range slottest.Clusters {
		r := slottest.Overload(t, New(), c[0], c[1], 1, slottest.MaxLoad)
		if r.Requests == 0 || r.ViolatingRequests != r.Requests {
			t.Errorf("%v nodes: %v of %v requests violate the bound, want all", c, r.ViolatingRequests, r.Requests)
		}
	}
}
