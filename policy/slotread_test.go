package policy_test

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
)

// twoTypes is one model on a fast and a slow node, bound 1 s: caps
// 100 - 100/(100x1-1) = 98.99 and 50 - 50/(50x1-1) = 48.98 req/s per node.
func twoTypes() *policy.SlotModels {
	return &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 1, F: 2, Idle: 50}, {Name: "slow", Count: 1, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.5}}, Mu: [][]float64{{100, 50}}, Bound: []float64{1},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 50}}, InferPerReqW: [][]float64{{0.1, 0.1}},
	}
}

// TestConcentrate: the engine counts every request of a node group over
// the bound. Caps: fast 98.99, slow 48.98 req/s per node.
//   - room: fast 1 node with 120 (21.01 over), slow 1 node with 10 (38.98
//     room): the excess moves to slow, nothing violates;
//   - no room: fast 1 node with 120, slow 1 node with 60: 32.03 over in
//     all; the slow group (48.98, the least load once both are at
//     capacity) takes it: 81.01 req/s violate instead of 180.
//
// As planned, the loads are left alone; neither reading changes the
// decision it is given.
func TestConcentrate(t *testing.T) {
	m := twoTypes()
	cf, cs := m.Cap(0, 0), m.Cap(0, 1)
	for _, c := range []struct {
		name       string
		load, want []float64
	}{
		{"room elsewhere", []float64{120, 10}, []float64{cf, 130 - cf}},
		{"no room", []float64{120, 60}, []float64{cf, 180 - cf}},
		{"within the bound: unchanged", []float64{90, 40}, []float64{90, 40}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range []policy.PlanReading{"", policy.Concentrate, policy.AsPlanned} {
				d := policy.NewSlotDecision(m)
				d.Infer[0] = []int{1, 1}
				copy(d.Load[0], c.load)
				got := r.Read(m, d)
				want := c.want
				if r == policy.AsPlanned {
					want = c.load
				}
				for ty := range 2 {
					if math.Abs(got.Load[0][ty]-want[ty]) > 1e-9 {
						t.Fatalf("reading %q: loads %v, want %v (caps %.2f, %.2f)", r, got.Load[0], want, cf, cs)
					}
					if d.Load[0][ty] != c.load[ty] {
						t.Fatalf("reading %q changed the decision it was given: %v", r, d.Load[0])
					}
				}
			}
		})
	}
	if err := policy.PlanReading("spread").Validate(); err == nil {
		t.Error(`reading "spread" validated`)
	}
}
