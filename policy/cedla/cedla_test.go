package cedla

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/slottest"
	"github.com/wattsched/wattsched/solver"
)

// tiny is two node types of one node each (a fast one drawing more, a
// slow one drawing less), one model, no inference load.
func tiny() *policy.SlotModels {
	return &policy.SlotModels{
		Models: []string{"m"},
		Types:  []policy.SlotType{{Name: "fast", Count: 1, F: 2, Idle: 50}, {Name: "slow", Count: 1, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 0.5}}, Mu: [][]float64{{100, 50}}, Bound: []float64{1},
		TrainW: [][]hw.Watts{{250, 150}}, InferBaseW: [][]float64{{60, 50}}, InferPerReqW: [][]float64{{0.1, 0.1}},
		Restart: 0.0005, TurnOn: 0.001,
	}
}

func state(jobs []policy.SlotJobState, price []float64) *policy.SlotState {
	st := &policy.SlotState{Slot: 0, Horizon: len(price), Models: tiny(), Jobs: jobs, Price: price, On: []int{0, 0}}
	for range price {
		st.Load = append(st.Load, []float64{0})
	}
	return st
}

// TestOptimalAgainstBruteForce: on small instances HiGHS's plan has the
// objective of the brute-force enumeration of every binary assignment.
func TestOptimalAgainstBruteForce(t *testing.T) {
	needHiGHS(t)
	cases := []struct {
		name  string
		jobs  []policy.SlotJobState
		price []float64
		mode  Mode
	}{
		{"one job, cheap last slot", []policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 1, Deadline: 2, Epochs: 1}, Remaining: 1, LastType: -1}}, []float64{50, 40, 10}, Hard},
		{"two jobs compete", []policy.SlotJobState{
			{SlotJob: policy.SlotJob{ID: 1, Deadline: 1, Epochs: 1.5}, Remaining: 1.5, LastType: -1},
			{SlotJob: policy.SlotJob{ID: 2, Deadline: 2, Epochs: 0.5}, Remaining: 0.5, LastType: 0}}, []float64{30, 20, 25}, Hard},
		{"soft: late is cheaper than nothing", []policy.SlotJobState{
			{SlotJob: policy.SlotJob{ID: 1, Deadline: 0, Epochs: 2}, Remaining: 2, LastType: -1}}, []float64{30, 20, 25}, Soft},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Args{}.Default()
			a.Mode, a.RelGap, a.SafetyNet = c.mode, 0, 10*time.Second
			hi, err := New(a, solver.HiGHS(), 60)
			if err != nil {
				t.Fatal(err)
			}
			bf, _ := New(a, solver.BruteForce(), 60)
			ph, err := hi.Plan(state(c.jobs, c.price))
			if err != nil {
				t.Fatal(err)
			}
			pb, err := bf.Plan(state(c.jobs, c.price))
			if err != nil {
				t.Fatal(err)
			}
			if ph.Info.Status != "optimal" || pb.Info.Status != "optimal" {
				t.Fatalf("status HiGHS %s, brute force %s", ph.Info.Status, pb.Info.Status)
			}
			if d := math.Abs(ph.Info.Objective - pb.Info.Objective); d > 1e-7*math.Max(1, math.Abs(pb.Info.Objective)) {
				t.Errorf("objective HiGHS %.9g, brute force %.9g", ph.Info.Objective, pb.Info.Objective)
			}
			if len(ph.Reject) != len(pb.Reject) {
				t.Errorf("rejections HiGHS %v, brute force %v", ph.Reject, pb.Reject)
			}
		})
	}
}

// TestCheapSlot: one job needing one epoch, deadline slot 2; the fast
// node does an epoch per slot, so the plan runs it once, in the cheapest
// slot (price 10), on the fast node: 2 x 50/40 = 2.5 slow-node slots would
// not fit in the window after its arrival... the slow node needs two
// slots (0.5 epochs each) at prices 40 and 10 with 150 W vs one 250 W
// slot at 10: 250 x 10 < 150 x (40 + 10).
func TestCheapSlot(t *testing.T) {
	needHiGHS(t)
	a := Args{}.Default()
	a.Mode = Hard
	p, _ := New(a, solver.HiGHS(), 0)
	plan, err := p.Plan(state([]policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 7, Deadline: 2, Epochs: 1}, Remaining: 1, LastType: -1}}, []float64{50, 40, 10}))
	if err != nil {
		t.Fatal(err)
	}
	for tau, d := range plan.Slots {
		want := 0
		if tau == 2 {
			want = 1
		}
		if len(d.Train) != want || want == 1 && (d.Train[0] != policy.SlotRun{Job: 7, Type: 0}) || d.On[0] != want || d.On[1] != 0 {
			t.Errorf("slot %d: train %v, on %v; want the job on the fast node only in slot 2", tau, d.Train, d.On)
		}
	}
}

// TestHardRejectsByPriority: two jobs that each need the fast node's only
// slot before their deadline: the hard problem is infeasible and the job
// of lower priority is rejected.
func TestHardRejectsByPriority(t *testing.T) {
	needHiGHS(t)
	a := Args{}.Default()
	a.Mode = Hard
	p, _ := New(a, solver.HiGHS(), 0)
	jobs := []policy.SlotJobState{
		{SlotJob: policy.SlotJob{ID: 1, Deadline: 0, Epochs: 1, Priority: 2}, Remaining: 1, LastType: -1},
		{SlotJob: policy.SlotJob{ID: 2, Deadline: 0, Epochs: 1, Priority: 0}, Remaining: 1, LastType: -1},
	}
	plan, err := p.Plan(state(jobs, []float64{20, 20}))
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Info.Infeasible || len(plan.Reject) != 1 || plan.Reject[0] != 2 {
		t.Fatalf("infeasible %v, rejected %v; want job 2 (priority 0) rejected", plan.Info.Infeasible, plan.Reject)
	}
	// Problem 2 instead runs the second job late (slot 1, on the fast node).
	a.Mode = Soft
	ps, _ := New(a, solver.HiGHS(), 0)
	plan, err = ps.Plan(state(jobs, []float64{20, 20}))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Reject) != 0 || len(plan.Slots[1].Train) != 1 {
		t.Fatalf("soft: rejected %v, slot 1 runs %v; want no rejection and one late run", plan.Reject, plan.Slots[1].Train)
	}
}

func TestArgsValidate(t *testing.T) {
	if err := (Args{}).Default().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Args{}.Default()
	bad.Mode = "x"
	if bad.Validate() == nil {
		t.Error("mode x accepted")
	}
	bad = Args{}.Default()
	bad.RelGap = 1
	if bad.Validate() == nil {
		t.Error("gap 1 accepted")
	}
}

// needHiGHS skips, saying why, where the build has no HiGHS (plain go test
// without the highs tag); make test always has it.
func needHiGHS(t *testing.T) {
	t.Helper()
	if !solver.Available() {
		t.Skip("built without HiGHS (build tag highs): make test runs this test")
	}
}

func TestPeriods(t *testing.T) {
	per, of := Args{BinarySlots: 4, BlockSlots: 4}.periods(13)
	want := []period{{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 4}, {8, 4}, {12, 1}}
	if !slices.Equal(per, want) {
		t.Fatalf("periods %v, want %v", per, want)
	}
	if !slices.Equal(of, []int{0, 1, 2, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6}) {
		t.Fatalf("period of each slot %v", of)
	}
	per, _ = Args{BinarySlots: 1, BlockAfter: 3, BlockSlots: 2}.periods(6)
	if !slices.Equal(per, []period{{0, 1}, {1, 1}, {2, 1}, {3, 2}, {5, 1}}) {
		t.Fatalf("blocks after slot 3: %v", per)
	}
	per, _ = Args{BinarySlots: 4}.periods(6)
	if len(per) != 6 {
		t.Fatalf("without blocks: %v, want one period per slot", per)
	}
	bad := Args{}.Default()
	bad.BlockSlots = 4
	if bad.Validate() == nil {
		t.Error("block_slots without binary_slots accepted")
	}
}

// TestBlocksAgainstBruteForce: with the relaxed future in blocks the
// program is still solved to optimality (same objective as enumerating the
// binary slots), and a block that holds a job's deadline never runs the job
// past it in the plan's slots.
func TestBlocksAgainstBruteForce(t *testing.T) {
	needHiGHS(t)
	price := []float64{50, 10, 10, 30, 30, 30}
	for _, c := range []struct {
		name string
		jobs []policy.SlotJobState
		mode Mode
	}{
		{"deadline inside a block", []policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 1, Deadline: 2, Epochs: 2.5}, Remaining: 2.5, LastType: -1}}, Hard},
		{"two jobs, soft", []policy.SlotJobState{
			{SlotJob: policy.SlotJob{ID: 1, Deadline: 3, Epochs: 2}, Remaining: 2, LastType: 0},
			{SlotJob: policy.SlotJob{ID: 2, Arrival: 0, Deadline: 1, Epochs: 1}, Remaining: 1, LastType: -1}}, Soft},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Args{}.Default()
			a.Mode, a.RelGap, a.SafetyNet, a.BinarySlots, a.BlockSlots = c.mode, 0, 10*time.Second, 1, 4
			hi, _ := New(a, solver.HiGHS(), 60)
			bf, _ := New(a, solver.BruteForce(), 60)
			ph, err := hi.Plan(state(c.jobs, price))
			if err != nil {
				t.Fatal(err)
			}
			pb, err := bf.Plan(state(c.jobs, price))
			if err != nil {
				t.Fatal(err)
			}
			a.BlockSlots = 0
			perSlot, _ := New(a, solver.HiGHS(), 60)
			ps, err := perSlot.Plan(state(c.jobs, price))
			if err != nil {
				t.Fatal(err)
			}
			if ph.Info.Vars >= ps.Info.Vars {
				t.Errorf("%d columns in blocks, %d per slot: the blocks did not shrink the program", ph.Info.Vars, ps.Info.Vars)
			}
			if d := math.Abs(ph.Info.Objective - pb.Info.Objective); d > 1e-7*math.Max(1, math.Abs(pb.Info.Objective)) {
				t.Errorf("objective HiGHS %.9g, brute force %.9g", ph.Info.Objective, pb.Info.Objective)
			}
			for tau, d := range ph.Slots {
				for _, r := range d.Train {
					for _, j := range c.jobs {
						if r.Job == j.ID && tau > hi.lastSlot(j) {
							t.Errorf("slot %d runs job %d, whose last slot is %d", tau, j.ID, hi.lastSlot(j))
						}
					}
				}
			}
		})
	}
}

// On a cluster where every node is busy, rounding three models' inference
// up to a node each overfills a type: repair pauses a training run
// elsewhere and moves a model there, so every model keeps a node and no
// type holds more busy nodes than it has.
func TestRepairPausesTrainingWhenFull(t *testing.T) {
	m := &policy.SlotModels{
		Models: []string{"a", "b", "c"},
		Types:  []policy.SlotType{{Name: "x", Count: 2, F: 1, Idle: 40}, {Name: "y", Count: 2, F: 1, Idle: 40}},
		Epochs: [][]float64{{1, 1}, {1, 1}, {1, 1}}, Mu: [][]float64{{100, 100}, {100, 100}, {100, 100}}, Bound: []float64{1, 1, 1},
		TrainW: [][]hw.Watts{{200, 200}, {200, 200}, {200, 200}}, InferBaseW: [][]float64{{60, 60}, {60, 60}, {60, 60}}, InferPerReqW: [][]float64{{0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}},
	}
	d := policy.NewSlotDecision(m)
	d.Train = []policy.SlotRun{{Job: 1, Type: 0}, {Job: 2, Type: 0}}
	for i := range 3 {
		d.Infer[i][1], d.Load[i][1] = 1, 10
	}
	busy := []int{2, 3}
	repair(m, &d, busy)
	for ty := range 2 {
		n := 0
		for _, r := range d.Train {
			if r.Type == ty {
				n++
			}
		}
		for i := range 3 {
			n += d.Infer[i][ty]
		}
		if n > 2 {
			t.Errorf("type %d: %d busy nodes, has 2 (train %v, infer %v)", ty, n, d.Train, d.Infer)
		}
	}
	for i := range 3 {
		if d.Infer[i][0]+d.Infer[i][1] == 0 || math.Abs(d.Load[i][0]+d.Load[i][1]-10) > 1e-9 {
			t.Errorf("model %d: nodes %v, load %v; want a node and all 10 requests/s", i, d.Infer[i], d.Load[i])
		}
	}
	if len(d.Train) != 1 {
		t.Errorf("training %v, want one run paused", d.Train)
	}
}

// At the largest load a scenario allows, on clusters as small as the
// models, both problems' plans are valid (the engine accepts every
// decision) and all requests but those of groups kept at capacity violate
// the bound. The program then puts
// load on node types where it turns no node on (the excess columns carry
// it), which the plan once turned into more busy nodes than a type has.
func TestOverload(t *testing.T) {
	needHiGHS(t)
	for _, mode := range []Mode{Soft, Hard} {
		for _, c := range slottest.Clusters {
			a := Args{}.Default()
			a.Mode, a.SafetyNet, a.BinarySlots = mode, time.Minute, 1
			p, err := New(a, solver.HiGHS(), 60)
			if err != nil {
				t.Fatal(err)
			}
			r := slottest.Overload(t, p, c[0], c[1], 4, slottest.MaxLoad)
			// The engine's default reading (concentrate) keeps the groups
			// it can at capacity and puts the excess on one: all but
			// those few requests violate.
			if r.Requests == 0 || r.ViolatingRequests < 0.9999*r.Requests || r.ViolatingRequests > r.Requests {
				t.Errorf("%s, %v nodes: %v of %v requests violate the bound, want all but those of groups at capacity (>= 99.99%%)", mode, c, r.ViolatingRequests, r.Requests)
			}
		}
	}
}

// TestHardLatency: Problem 1 keeps eq. 29 hard for the admitted set. The
// fast node takes 100 - 100/(100x1-1) = 98.99 req/s within the 1 s bound,
// the slow one 50 - 50/(50x1-1) = 48.98. A job due in slot 0 needs the
// fast node's whole slot (1 epoch; the slow node does 0.5).
//   - 90 req/s fits on the fast node alone (no excess), but not on the
//     slow one (excess 41.02): the job would push inference past the bound,
//     so it is rejected, and inference keeps the fast node within it.
//   - 150 req/s exceeds both nodes (excess 150 - 147.97 = 2.03): that
//     slack is allowed, no more; the job still cannot take the fast node
//     (excess 101.02) and is rejected.
//
// Problem 2 prices the excess instead and runs the job.
func TestHardLatency(t *testing.T) {
	needHiGHS(t)
	capSum := (100 - 100.0/99) + (50 - 50.0/49)
	for _, c := range []struct {
		name       string
		load       float64
		wantExcess float64
	}{
		{"inference alone fits: no slack", 90, 0},
		{"inference alone exceeds the cluster: its excess only", 150, 150 - capSum},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Args{}.Default()
			a.Mode, a.RelGap = Hard, 0
			p, err := New(a, solver.HiGHS(), 0)
			if err != nil {
				t.Fatal(err)
			}
			jobs := []policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 3, Deadline: 0, Epochs: 1}, Remaining: 1, LastType: -1}}
			st := state(jobs, []float64{20})
			st.Load[0][0] = c.load
			ex, err := p.inferenceExcess(st, solver.Options{}, &policy.PlanInfo{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ex) != 1 || math.Abs(ex[0]-c.wantExcess) > 1e-6 {
				t.Fatalf("inference excess %v, want [%.4f]", ex, c.wantExcess)
			}
			plan, err := p.Plan(st)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(plan.Reject, []int{3}) || len(plan.Slots[0].Train) != 0 {
				t.Fatalf("rejected %v, slot 0 trains %v; want job 3 rejected", plan.Reject, plan.Slots[0].Train)
			}
			d := plan.Slots[0]
			var over float64
			for ty := range 2 {
				if n := d.Infer[0][ty]; n > 0 {
					over += math.Max(d.Load[0][ty]-float64(n)*st.Models.Cap(0, ty), 0)
				}
			}
			if math.Abs(over-c.wantExcess) > 1e-6 {
				t.Errorf("load over the bound %.4f req/s (infer %v, load %v), want %.4f", over, d.Infer[0], d.Load[0], c.wantExcess)
			}
			// Problem 2 pays for the excess and runs the job on the fast node.
			a.Mode = Soft
			ps, _ := New(a, solver.HiGHS(), 0)
			sp, err := ps.Plan(st)
			if err != nil {
				t.Fatal(err)
			}
			if len(sp.Reject) != 0 || len(sp.Slots[0].Train) != 1 {
				t.Errorf("soft: rejected %v, slot 0 trains %v; want the job run", sp.Reject, sp.Slots[0].Train)
			}
		})
	}
}

// TestRejectWhenPlanCannotFinish: 3 epochs left, due in slot 1; the
// fastest node does 1 epoch per slot, so 2 slots do 2 < 3: Problem 1
// rejects the job in slot 0, not when slot 1 has passed. Problem 2 may run
// it late until slot 1 + ceil(0.5 x 2) = 2, which fits 3 epochs: kept.
func TestRejectWhenPlanCannotFinish(t *testing.T) {
	needHiGHS(t)
	jobs := []policy.SlotJobState{{SlotJob: policy.SlotJob{ID: 5, Deadline: 1, Epochs: 3}, Remaining: 3, LastType: -1}}
	for _, c := range []struct {
		mode Mode
		want []int
	}{{Hard, []int{5}}, {Soft, nil}} {
		t.Run(string(c.mode), func(t *testing.T) {
			a := Args{}.Default()
			a.Mode = c.mode
			p, _ := New(a, solver.HiGHS(), 0)
			plan, err := p.Plan(state(jobs, []float64{20, 20, 20}))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(plan.Reject, c.want) {
				t.Fatalf("rejected %v in slot 0, want %v", plan.Reject, c.want)
			}
		})
	}
}
