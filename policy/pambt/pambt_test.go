package pambt

import (
	"testing"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/slottest"
)

// TestPAMBT: every node stays on, inference stays within its bound, and a
// job that can no longer meet its deadline on any node is rejected (job
// 3: 4 epochs by slot 3 from slot 2 needs 4 fast slots).
func TestPAMBT(t *testing.T) {
	r := slottest.Week(t, New())
	for _, s := range r.Samples {
		if s.On[0]+s.On[1] != 6 {
			t.Fatalf("slot %d: %v on, want all 6", s.Slot, s.On)
		}
	}
	if !r.Jobs[3].Rejected {
		t.Errorf("job 3 %+v not rejected", r.Jobs[3])
	}
	for _, j := range r.Jobs[:3] {
		if !j.Done || j.Lateness != 0 {
			t.Errorf("job %+v: want done by its deadline", j)
		}
	}
	if r.ViolatingRequests != 0 {
		t.Errorf("%v requests over the bound", r.ViolatingRequests)
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
