package eprons

import (
	"testing"

	"github.com/wattsched/wattsched/policy/slottest"
)

// TestEPRONS: inference goes to the type with the fewest watts per
// request/s within the bound, idle nodes are off, and jobs run on the
// frugal (slow) type without pause.
func TestEPRONS(t *testing.T) {
	r := slottest.Week(t, New())
	last := r.Samples[len(r.Samples)-1]
	// Slot 15, jobs done: only inference nodes are on. Cap fast = 40 -
	// 40/(0.2*40-1) = 34.3 req/s, 60 + 2*34.3 W = 128.6 W -> 3.75 W per
	// req/s; slow: 20 - 20/3 = 13.3, 45 + 3*13.3 = 85 W -> 6.4 W per
	// req/s: one fast node serves the 30 req/s.
	if last.On[0] != 1 || last.On[1] != 0 {
		t.Errorf("last slot on %v, want one fast node", last.On)
	}
	for _, j := range r.Jobs {
		if j.Starts != 1 {
			t.Errorf("job %+v: want one start", j)
		}
	}
	if r.ViolatingRequests != 0 {
		t.Errorf("%v requests over the bound", r.ViolatingRequests)
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
