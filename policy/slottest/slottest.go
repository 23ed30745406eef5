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

// MaxLoad is the largest inference load a scenario may give, in
// requests/s per model: 1e8 requests/min (docs/scenarios.md).
const MaxLoad = 1e8 / 60

// Overload runs the planner through the engine (which rejects any invalid
// decision) on a cluster of three models and two node types with the
// given node counts, 4 training jobs and load requests/s of every model in
// each of 12 slots, planning every slot over a window of look slots. At
// MaxLoad no node can meet a latency bound: every plan must still be valid.
// The engine reads the plans by its default reading (concentrate).
func Overload(t testing.TB, p policy.SlotPlanner, fast, slow, look int, load float64) *sim.SlottedResult {
	t.Helper()
	return OverloadRead(t, p, fast, slow, look, load, "")
}

// OverloadRead is Overload with the engine reading plans by r.
func OverloadRead(t testing.TB, p policy.SlotPlanner, fast, slow, look int, load float64, reading policy.PlanReading) *sim.SlottedResult {
	t.Helper()
	m := &policy.SlotModels{
		Models: []string{"a", "b", "c"},
		Types:  []policy.SlotType{{Name: "fast", Count: fast, F: 2, Idle: 50}, {Name: "slow", Count: slow, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.4}, {0.8, 0.3}, {1.2, 0.5}}, Mu: [][]float64{{40, 20}, {30, 15}, {60, 25}}, Bound: []float64{0.2, 0.25, 0.15},
		TrainW:       [][]hw.Watts{{250, 150}, {240, 140}, {260, 160}},
		InferBaseW:   [][]float64{{60, 45}, {55, 40}, {65, 50}},
		InferPerReqW: [][]float64{{2, 3}, {2, 3}, {1, 2}},
		Restart:      0.0005, TurnOn: 0.001,
	}
	jobs := []policy.SlotJob{{ID: 0, Arrival: 0, Deadline: 3, Epochs: 2}, {ID: 1, Model: 1, Arrival: 1, Deadline: 6, Epochs: 1},
		{ID: 2, Model: 2, Arrival: 2, Deadline: 10, Epochs: 3}, {ID: 3, Arrival: 2, Deadline: 3, Epochs: 4}}
	o := sim.SlottedOptions{Models: m, Jobs: jobs, Slots: 12, Lookahead: look, Every: 1, Planner: p, Reading: reading,
		Truth: sim.SlotTruth{TrainW: m.TrainW, InferW: func(i, t int, l float64) hw.Watts { return hw.Watts(m.InferBaseW[i][t] + m.InferPerReqW[i][t]*l) }}}
	for range 12 + look {
		o.Load = append(o.Load, []float64{load, load, load})
		o.Price = append(o.Price, 25)
	}
	r, err := sim.RunSlotted(o)
	if err != nil {
		t.Fatalf("%d fast + %d slow nodes, %.6g requests/s per model: %v", fast, slow, load, err)
	}
	return r
}

// Clusters are the node counts (fast, slow) Overload is run with by the
// planners' tests: as many nodes as models, on one type or two, and more.
var Clusters = [][2]int{{3, 0}, {0, 3}, {1, 2}, {2, 2}, {4, 4}}
