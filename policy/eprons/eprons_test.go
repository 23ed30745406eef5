package eprons

import (
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/slottest"
)

func mustNew(t *testing.T, tr Training) *Policy {
	t.Helper()
	p, err := New(Args{Training: tr})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTraining: a new job goes to the free type of least energy per epoch
// (fast: 250 W / 1 epoch per slot = 250 < slow: 150 W / 0.4 = 375), or,
// with least-power, to the type of least draw (slow: 150 < 250 W); the
// 30 req/s of inference take one fast node first (3.75 W per req/s).
func TestTraining(t *testing.T) {
	m := &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 3, F: 2, Idle: 50}, {Name: "slow", Count: 3, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.4}}, Mu: [][]float64{{40, 20}}, Bound: []float64{0.2},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 45}}, InferPerReqW: [][]float64{{2, 3}},
	}
	st := &policy.SlotState{Models: m, Horizon: 1, Load: [][]float64{{30}}, Price: []float64{25}, On: []int{0, 0},
		Jobs: []policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 4, Deadline: 5, Epochs: 2}, Remaining: 2, LastType: -1}}}
	for _, c := range []struct {
		tr   Training
		want int
	}{{LeastEnergy, 0}, {LeastPower, 1}} {
		t.Run(string(c.tr), func(t *testing.T) {
			plan, err := mustNew(t, c.tr).Plan(st)
			if err != nil {
				t.Fatal(err)
			}
			if got := plan.Slots[0].Train; len(got) != 1 || got[0] != (policy.SlotRun{Job: 4, Type: c.want}) {
				t.Errorf("trains %v, want job 4 on type %d", got, c.want)
			}
		})
	}
	if _, err := New(Args{Training: "fastest"}); err == nil {
		t.Error(`New(training "fastest"): no error`)
	}
}

// TestEPRONS: inference goes to the type with the fewest watts per
// request/s within the bound, idle nodes are off, and jobs run without
// pause.
func TestEPRONS(t *testing.T) {
	r := slottest.Week(t, mustNew(t, LeastEnergy))
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
// models, every plan is valid. Read as planned, every request violates the
// bound; read by the default (concentrate), all but those of the groups
// kept at capacity do (>= 99.99%).
func TestOverload(t *testing.T) {
	for _, c := range slottest.Clusters {
		r := slottest.OverloadRead(t, mustNew(t, LeastEnergy), c[0], c[1], 1, slottest.MaxLoad, policy.AsPlanned)
		if r.Requests == 0 || r.ViolatingRequests != r.Requests {
			t.Errorf("as planned, %v nodes: %v of %v requests violate the bound, want all", c, r.ViolatingRequests, r.Requests)
		}
		r = slottest.Overload(t, mustNew(t, LeastEnergy), c[0], c[1], 1, slottest.MaxLoad)
		if r.Requests == 0 || r.ViolatingRequests < 0.9999*r.Requests || r.ViolatingRequests > r.Requests {
			t.Errorf("concentrated, %v nodes: %v of %v requests violate the bound, want all but those of groups at capacity", c, r.ViolatingRequests, r.Requests)
		}
	}
}

// TestPause: EPRONS places inference first, so a running job whose node
// type inference fills is paused. One fast and one slow node; 40 req/s
// (fast cap 40 - 40/(0.2 x 40 - 1) = 34.3, slow 13.3 req/s): inference
// takes the fast node (fewest watts per req/s) and the slow one for the
// 5.7 left, and job 4, which ran on the fast node, is paused. With the
// no_pause diagnostic the job keeps the fast node and inference gets the
// slow one (over its bound).
func TestPause(t *testing.T) {
	m := &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 1, F: 2, Idle: 50}, {Name: "slow", Count: 1, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.4}}, Mu: [][]float64{{40, 20}}, Bound: []float64{0.2},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 45}}, InferPerReqW: [][]float64{{2, 3}},
	}
	st := &policy.SlotState{Models: m, Horizon: 1, Load: [][]float64{{40}}, Price: []float64{25}, On: []int{1, 1},
		Jobs: []policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 4, Deadline: 5, Epochs: 2}, Remaining: 1, LastType: 0, Admitted: true}}}
	for _, c := range []struct {
		noPause bool
		want    []policy.SlotRun
		infer   []int
	}{{false, nil, []int{1, 1}}, {true, []policy.SlotRun{{Job: 4, Type: 0}}, []int{0, 1}}} {
		p, err := New(Args{Training: LeastEnergy, NoPause: c.noPause})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := p.Plan(st)
		if err != nil {
			t.Fatal(err)
		}
		d := plan.Slots[0]
		if len(d.Train) != len(c.want) || len(c.want) == 1 && d.Train[0] != c.want[0] || d.Infer[0][0] != c.infer[0] || d.Infer[0][1] != c.infer[1] {
			t.Errorf("no_pause %v: trains %v, inference nodes %v; want %v and %v", c.noPause, d.Train, d.Infer[0], c.want, c.infer)
		}
	}
}
