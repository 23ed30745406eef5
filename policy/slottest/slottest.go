// Package slottest holds the small cluster and workload the slotted
// planners' tests run through the slotted engine.
package slottest

import (
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/sim"
)

// Week runs the planner on a small cluster (two types of 3 nodes: fast
// and power-hungry, slow and frugal) with 4 jobs and 30 requests/s for 16
// slots through the engine, which rejects any invalid decision.
func Week(t testing.TB, p policy.SlotPlanner) *sim.SlottedResult {
	t.Helper()
	m := &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 3, F: 2, Idle: 50}, {Name: "slow", Count: 3, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.4}}, Mu: [][]float64{{40, 20}}, Bound: []float64{0.2},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 45}}, InferPerReqW: [][]float64{{2, 3}},
	}
	jobs := []policy.SlotJob{{ID: 0, Arrival: 0, Deadline: 3, Epochs: 2}, {ID: 1, Arrival: 1, Deadline: 2, Epochs: 1},
		{ID: 2, Arrival: 2, Deadline: 12, Epochs: 3}, {ID: 3, Arrival: 2, Deadline: 3, Epochs: 4}}
	o := sim.SlottedOptions{Models: m, Jobs: jobs, Slots: 16, Lookahead: 1, Every: 1, Planner: p,
		Truth: sim.SlotTruth{TrainW: m.TrainW, InferW: func(i, t int, l float64) hw.Watts { return hw.Watts(m.InferBaseW[i][t] + m.InferPerReqW[i][t]*l) }}}
	for range 17 {
		o.Load = append(o.Load, []float64{30})
		o.Price = append(o.Price, 25)
	}
	r, err := sim.RunSlotted(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
