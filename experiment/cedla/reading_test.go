package cedla

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	pcedla "github.com/wattsched/wattsched/policy/cedla"
	"github.com/wattsched/wattsched/policy/eprons"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/solver"
)

// split asks its planner for a plan and replaces every decision with the
// same one (d), keeping the rest of the plan (CE-DLA's solver statistics,
// EPRONS's none), so that two systems hand the engine the same decisions.
type split struct {
	p policy.SlotPlanner
	d policy.SlotDecision
}

func (s split) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	p, err := s.p.Plan(st)
	if err != nil {
		return nil, err
	}
	q := *p
	q.Slots = make([]policy.SlotDecision, len(p.Slots))
	for k := range q.Slots {
		q.Slots[k] = s.d
	}
	return &q, nil
}

// TestSameReadingForEverySystem: the same decisions, handed to the engine
// by CE-DLA and by EPRONS, are read by the same step. One model, a fast
// and a slow node (mu 100 and 50 req/s, bound 1 s: latency-bound caps 100
// - 100/99 = 98.99 and 50 - 50/49 = 48.98 req/s); the decision puts all
// 120 req/s on the fast node. Concentrate (the default) serves 98.99 on
// it and 21.01 on the slow one, and no request violates the bound; as
// planned, 120 stay on the fast node and all of them violate it.
func TestSameReadingForEverySystem(t *testing.T) {
	if !solver.Available() {
		t.Skip("built without HiGHS (build tag highs): make test runs this test")
	}
	m := &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 1, F: 2, Idle: 50}, {Name: "slow", Count: 1, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.5}}, Mu: [][]float64{{100, 50}}, Bound: []float64{1},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 50}}, InferPerReqW: [][]float64{{0.1, 0.1}},
	}
	d := policy.SlotDecision{On: []int{1, 1}, Infer: [][]int{{1, 1}}, Load: [][]float64{{120, 0}}}
	a := pcedla.Args{}.Default()
	a.Mode = pcedla.Hard
	ce, err := pcedla.New(a, solver.HiGHS(), 0)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := eprons.New(eprons.Args{}.Default())
	if err != nil {
		t.Fatal(err)
	}
	cf := 100 - 100.0/99
	for _, c := range []struct {
		reading   policy.PlanReading
		want      []float64
		violating float64
	}{{"", []float64{cf, 120 - cf}, 0}, {policy.AsPlanned, []float64{120, 0}, 120 * 900 * 2}} {
		for name, p := range map[string]policy.SlotPlanner{"CE-DLA hard": ce, "EPRONS": ep} {
			o := sim.SlottedOptions{Models: m, Slots: 2, Lookahead: 2, Every: 1, Planner: split{p, d}, Reading: c.reading,
				Truth: sim.SlotTruth{TrainW: m.TrainW, InferW: func(i, t int, l float64) hw.Watts { return hw.Watts(m.InferBaseW[i][t] + m.InferPerReqW[i][t]*l) }}}
			for range 4 {
				o.Load = append(o.Load, []float64{120})
				o.Price = append(o.Price, 25)
			}
			var got [][]float64
			o.Record = func(_ int, nodes []sim.SlotNode) {
				row := make([]float64, 2)
				for _, n := range nodes {
					if n.Model == 0 {
						row[n.Type] = n.Lambda
					}
				}
				got = append(got, row)
			}
			r, err := sim.RunSlotted(o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for h, row := range got {
				for ty := range 2 {
					if math.Abs(row[ty]-c.want[ty]) > 1e-9 {
						t.Errorf("%s, reading %q, slot %d: node loads %v req/s, want %v", name, c.reading, h, row, c.want)
					}
				}
			}
			if math.Abs(r.ViolatingRequests-c.violating) > 1e-6 {
				t.Errorf("%s, reading %q: %v requests over the bound, want %v", name, c.reading, r.ViolatingRequests, c.violating)
			}
		}
	}
}
