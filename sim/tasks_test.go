package sim_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

func online(t *testing.T) *policy.Online {
	t.Helper()
	bf, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
	p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "bestfit", Scorer: bf, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return &policy.Online{Placer: p}
}

// checkEnergyIsIntegral checks that a run's energy is the integral of its
// piecewise-constant sampled power (idle0: the power before the first
// sample) and returns the energy.
func checkEnergyIsIntegral(t *testing.T, res *sim.Result, idle0 hw.Watts) float64 {
	t.Helper()
	var integral float64
	prevT, prevP := job.Time(0), float64(idle0)
	for _, s := range res.Samples {
		integral += prevP * (s.At - prevT).Seconds()
		prevT, prevP = s.At, float64(s.CPUW+s.GPUW)
	}
	total := float64(res.CPUEnergy + res.GPUEnergy)
	if math.Abs(integral-total) > 1e-9*total {
		t.Fatalf("energy %v J, integral of power %v J", total, integral)
	}
	return total
}

func randomScenario(seed uint64) (*cluster.Cluster, []job.Task) {
	r := rand.New(rand.NewPCG(seed, 1))
	// Node 0 can host any generated task; the others are random.
	b := clustertest.New()
	b.Node("big").GPUs(8, "G2").CPU(48000)
	models := []string{"T4", "G2", "V100M16", "P100"}
	for i := 1; i < 2+r.IntN(5); i++ {
		b.Node(fmt.Sprintf("n%d", i)).GPUs(1+r.IntN(8), models[r.IntN(len(models))]).CPU(int64(16+r.IntN(4)*32) * 1000)
	}
	var tasks []job.Task
	for i := 0; i < 20+r.IntN(60); i++ {
		d := job.Demand{CPUMilli: int64(1+r.IntN(8)) * 1000, MemMiB: 1024}
		switch r.IntN(3) {
		case 0:
			d.GPUCount, d.GPUMilli = 1, int64(50+r.IntN(900))
		case 1:
			d.GPUCount, d.GPUMilli = 1+r.IntN(2), 1000
		}
		tasks = append(tasks, job.Task{ID: job.ID(i), Name: fmt.Sprintf("t%d", i), Demand: d, Class: -1,
			Submit: job.Time(r.IntN(100000)), Work: float64(1 + r.IntN(300))})
	}
	return b.Build(), tasks
}

// Properties over random replay runs: no over-allocation (checked after
// every time step), every task ends (at most once: the kernel refuses a
// second end), energy equals the integral of the sampled power, and
// dynamic plus idle energy adds up.
func TestReplayProperties(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			c, tasks := randomScenario(seed)
			var idle power.Breakdown
			for _, n := range c.Nodes {
				p := power.PWR{}.NodePower(n)
				idle.CPU, idle.GPU = idle.CPU+p.CPU, idle.GPU+p.GPU
			}
			e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, CheckInvariants: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(tasks)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Tasks {
				if r.End < 0 {
					t.Fatalf("task %d never ended (start %d)", r.ID, r.Start)
				}
				if r.End < r.Start || r.Start < r.Submit {
					t.Fatalf("task %d: submit %d start %d end %d", r.ID, r.Submit, r.Start, r.End)
				}
			}
			if c.NumPlaced() != 0 {
				t.Fatalf("%d tasks still placed at the end", c.NumPlaced())
			}
			total := checkEnergyIsIntegral(t, res, idle.Total())
			// All nodes stay on: idle energy is idle power times the run length.
			wantIdle := float64(idle.Total()) * res.End.Seconds()
			if math.Abs(float64(res.IdleEnergy)-wantIdle) > 1e-6*total {
				t.Fatalf("idle energy %v J, want %v J", res.IdleEnergy, wantIdle)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	run := func() []byte {
		c, tasks := randomScenario(7)
		e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(tasks)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return b
	}
	a, b := run(), run()
	if string(a) != string(b) {
		t.Fatal("two runs of the same scenario differ")
	}
}

type badScheduler struct{}

func (badScheduler) Schedule(st *policy.State) []policy.Action {
	if len(st.Queue) == 0 {
		return nil
	}
	return []policy.Action{policy.Start{Task: st.Queue[0].ID, Node: 0, GPUs: []int{0, 0}}}
}

func TestInvalidActionFailsLoudly(t *testing.T) {
	c := clustertest.New().Node("n0").GPUs(2, "T4").Build()
	tasks := []job.Task{{ID: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 2, GPUMilli: 1000}, Class: -1, Work: 1}}
	e, _ := sim.New(c, badScheduler{}, sim.Options{Mode: sim.Replay})
	if _, err := e.Run(tasks); err == nil {
		t.Fatal("a double-allocated GPU must stop the run")
	}
}

func TestInflationNeverLeaves(t *testing.T) {
	c := clustertest.New().Node("n0").GPUs(2, "T4").Build()
	var tasks []job.Task
	for i := 0; i < 5; i++ {
		tasks = append(tasks, job.Task{ID: job.ID(i), Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 600}, Class: 0})
	}
	e, _ := sim.New(c, online(t), sim.Options{Mode: sim.Inflation, CheckInvariants: true})
	res, err := e.Run(tasks)
	if err != nil {
		t.Fatal(err)
	}
	// Two 600-milli tasks fit (one per GPU); the other three fail.
	last := res.Samples[len(res.Samples)-1]
	if len(res.Samples) != 5 || last.Failed != 3 || last.AllocGPUMilli != 1200 || last.ArrivedGPUMilli != 3000 {
		t.Fatalf("last sample %+v (%d samples)", last, len(res.Samples))
	}
}

type policyFunc func(*policy.State) []policy.Action

func (f policyFunc) Schedule(st *policy.State) []policy.Action { return f(st) }

// A policy that draws from State.Rand gets the same draws for the same seed.
func TestSeededRandomness(t *testing.T) {
	draws := func(seed uint64) []uint64 {
		var got []uint64
		e, _ := sim.New(clustertest.New().Node("n").Build(), policyFunc(func(st *policy.State) []policy.Action {
			got = append(got, st.Rand.Uint64())
			return nil
		}), sim.Options{Mode: sim.Replay, Seed: seed})
		if _, err := e.Run([]job.Task{{ID: 0, Class: -1}, {ID: 1, Class: -1, Submit: 5}}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	a, b, c := draws(1), draws(1), draws(2)
	if len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatalf("seed 1: %v and %v; seed 2: %v", a, b, c)
	}
}

// Under a power limit the engine refuses a start that takes the estimated
// cluster power over it, and Online's runs stay within it at every step.
func TestPowerLimit(t *testing.T) {
	// One node, 1 T4, one 32-vCPU socket: idle 25 W; a 1-vCPU task adds 105 W.
	c := clustertest.New().Node("n0").GPUs(1, "T4").Build()
	greedy := policyFunc(func(st *policy.State) []policy.Action {
		if len(st.Queue) == 0 {
			return nil
		}
		return []policy.Action{policy.Start{Task: st.Queue[0].ID, Node: 0}}
	})
	e, _ := sim.New(c, greedy, sim.Options{Mode: sim.Replay, PowerLimit: 100})
	_, err := e.Run([]job.Task{{ID: 0, Class: -1, Demand: job.Demand{CPUMilli: 1000}, Work: 1}})
	if !errors.Is(err, sim.ErrPolicy) {
		t.Fatalf("start over the limit: %v, want ErrPolicy", err)
	}
	waits := func(r *sim.Result) (w job.Time) {
		for _, x := range r.Tasks {
			w += x.Start - x.Submit
		}
		return w
	}
	bound := 0
	for seed := uint64(0); seed < 20; seed++ {
		c, tasks := randomScenario(seed)
		free, _ := sim.New(c, online(t), sim.Options{Mode: sim.Replay})
		unlimited, err := free.Run(tasks)
		if err != nil {
			t.Fatal(err)
		}
		c, tasks = randomScenario(seed)
		var idle float64
		for _, n := range c.Nodes {
			idle += float64(power.PWR{}.NodePower(n).Total())
		}
		limit := power.Limit(idle + 600)
		e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, PowerLimit: limit, CheckInvariants: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(tasks)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, s := range res.Samples {
			if w := s.CPUW + s.GPUW; !limit.AllowsRecomputed(w) {
				t.Fatalf("seed %d at %d ms: %v W over the %v W limit", seed, s.At, w, limit)
			}
		}
		if waits(res) > waits(unlimited) {
			bound++
		}
	}
	if bound < 5 {
		t.Errorf("the limit made tasks wait in %d of 20 runs; the test needs a limit that binds", bound)
	}
}

// The engine hands Options.Meter to the policy's power gate: in inflation
// mode under a 400 W limit, a task with one vCPU and one whole GPU starts
// on the T4 node a (70 + 165 = 235 W, policy.TestPowerGateMeasured) with
// estimates, and is rejected when node b measures 250 W (25 + 250 + 165 =
// 440 W on a, more on b).
func TestEngineMeasuredGate(t *testing.T) {
	for _, m := range []power.Readings{nil, {"b": {Watts: 250, Scope: power.ScopeNode}}} {
		c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
		sc, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
		pl, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "b", Scorer: sc, Weight: 1}})
		if err != nil {
			t.Fatal(err)
		}
		o := sim.Options{Mode: sim.Inflation, Power: power.PWR{}, PowerLimit: 400, CheckInvariants: true}
		if m != nil {
			o.Meter = m
		}
		e, err := sim.New(c, &policy.Online{Placer: pl}, o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run([]job.Task{{ID: 0, Class: -1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: job.MilliPerGPU}, Work: 10}})
		if err != nil {
			t.Fatal(err)
		}
		r := res.Tasks[0]
		if started := r.Start >= 0; started != (m == nil) || r.Rejected != (m != nil) {
			t.Errorf("meter %v: task %+v", m, r)
		}
	}
}

// Options.MeterAt gives the gate the readings at each decision's time. In
// replay under a 400 W limit, task 0 (one vCPU, one whole GPU, +165 W)
// arrives at 0 s while node b measures 250 W (until 5 s): 25 + 250 + 165 =
// 440 W > 400 W on a, more on b, so it waits. Nothing happens at 5 s; the
// next decision is at task 1's arrival at 10 s, when b has no reading and
// the estimates (70 + 165 = 235 W) admit task 0. Without a meter task 0
// starts at once.
func TestEngineMeterAt(t *testing.T) {
	for _, timed := range []bool{false, true} {
		c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
		sc, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
		pl, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "b", Scorer: sc, Weight: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var asked []job.Time
		o := sim.Options{Mode: sim.Replay, Power: power.PWR{}, PowerLimit: 400, CheckInvariants: true}
		if timed {
			o.Meter = power.Readings{"a": {Watts: 1e6, Scope: power.ScopeNode}} // ignored: MeterAt takes its place
			o.MeterAt = func(now job.Time) policy.Meter {
				asked = append(asked, now)
				if now < 5000 {
					return power.Readings{"b": {Watts: 250, Scope: power.ScopeNode}}
				}
				return power.Readings{}
			}
		}
		e, err := sim.New(c, &policy.Online{Placer: pl}, o)
		if err != nil {
			t.Fatal(err)
		}
		d := job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: job.MilliPerGPU}
		res, err := e.Run([]job.Task{{ID: 0, Class: -1, Demand: d, Work: 60}, {ID: 1, Class: -1, Demand: d, Submit: 10000, Work: 60}})
		if err != nil {
			t.Fatal(err)
		}
		want := job.Time(0)
		if timed {
			want = 10000
		}
		if got := res.Tasks[0].Start; got != want {
			t.Errorf("timed meter %v: task 0 starts at %d ms, want %d (MeterAt asked at %v)", timed, got, want, asked)
		}
		if timed && (len(asked) < 2 || asked[0] != 0 || asked[1] != 10000) {
			t.Errorf("MeterAt asked at %v, want 0 then 10000 first", asked)
		}
	}
}

// A replay stops at the first event past Options.Horizon, naming it; a run
// that stays within the horizon (up to its last millisecond) is not
// touched, and its hourly ledger never grows past the horizon's hours.
func TestReplayHorizon(t *testing.T) {
	hour := job.Time(3600 * 1000)
	// Two tasks of the node's one GPU for 2 h each, both submitted at 0:
	// the second waits and ends at 4 h.
	tasks := func() []job.Task {
		d := job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}
		return []job.Task{{ID: 0, Name: "a", Class: -1, Demand: d, Work: 7200}, {ID: 1, Name: "b", Class: -1, Demand: d, Work: 7200}}
	}
	cases := []struct {
		name    string
		horizon job.Time
		want    string // "" = no error
	}{
		{"none", 0, ""},
		{"exactly the end", 4 * hour, ""},
		{"one ms short", 4*hour - 1, "task 1 (b) ends at 4.0 h, past the end of prices at 4.0 h after time 0 (0 tasks still queued): the run could not be priced"},
		{"before the first end", 1 * hour, "task 0 (a) ends at 2.0 h, past the end of prices at 1.0 h after time 0 (1 tasks still queued)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := sim.New(clustertest.New().Node("n0").GPUs(1, "T4").Build(), online(t),
				sim.Options{Mode: sim.Replay, Horizon: c.horizon, HorizonWhat: "the end of prices"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(tasks())
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if res.End != 4*hour || len(res.Hourly) != 4 {
					t.Errorf("end %d ms, %d hours booked; want 4 h and 4", res.End, len(res.Hourly))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestGPUBusyEnergyByHand: one node with 4 P100 (idle 25 W, TDP 250 W
// under PWR). Task a takes half a GPU over [0, 100) s, task b a whole GPU
// over [50, 150) s (on another GPU: a's has half left). Busy GPUs: one
// over [0, 50), two over [50, 100), one over [100, 150): 250 W x (50 +
// 2x50 + 50) s = 50,000 J; the idle GPUs' 25 W each is not in it.
func TestGPUBusyEnergyByHand(t *testing.T) {
	c := clustertest.New().Node("n").GPUs(4, "P100").CPU(32000).Build()
	tasks := []job.Task{
		{ID: 1, Name: "a", Demand: job.Demand{CPUMilli: 1000, MemMiB: 1, GPUCount: 1, GPUMilli: 500}, Class: -1, Submit: 0, Work: 100},
		{ID: 2, Name: "b", Demand: job.Demand{CPUMilli: 1000, MemMiB: 1, GPUCount: 1, GPUMilli: 1000}, Class: -1, Submit: 50000, Work: 100},
	}
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(tasks)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GPUBusyEnergy) != 1 || math.Abs(float64(res.GPUBusyEnergy[0])-50000) > 1e-6 {
		t.Errorf("busy GPU energy %v J, want [50000]", res.GPUBusyEnergy)
	}
	// GPU energy: the busy part plus 25 W for each idle GPU-second (4 x
	// 150 - 200 = 400 GPU-s idle): 50,000 + 10,000 J.
	if math.Abs(float64(res.GPUEnergy)-60000) > 1e-6 {
		t.Errorf("GPU energy %v J, want 60000", res.GPUEnergy)
	}
}

// TestBusyGroupsByHand: two nodes in two groups, a with 2 P100 (group 0,
// 250 W busy under PWR) and b with a V100M16 (group 1, 300 W); three
// whole-GPU tasks fill them: the last sample carries [2x250, 300] =
// [500, 300] W, and every sample's groups add up to 250 W per busy P100
// and 300 W per busy V100.
func TestBusyGroupsByHand(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(2, "P100").CPU(32000).Node("b").GPUs(1, "V100M16").CPU(32000).Build()
	d := job.Demand{CPUMilli: 1000, MemMiB: 1, GPUCount: 1, GPUMilli: 1000}
	var tasks []job.Task
	for i := range 3 {
		tasks = append(tasks, job.Task{ID: job.ID(i), Name: fmt.Sprint("t", i), Demand: d, Class: -1, Work: 10})
	}
	group := func(n *cluster.Node) int {
		if n.Name == "a" {
			return 0
		}
		return 1
	}
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Inflation, BusyGroup: group, BusyGroups: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(tasks)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Samples); n != 3 || fmt.Sprint(res.Samples[n-1].BusyGPUW) != "[500 300]" {
		t.Fatalf("samples %+v, want the last at [500 300] W", res.Samples)
	}
	for _, s := range res.Samples {
		if g := s.BusyGPUW; (g[0] != 0 && g[0] != 250 && g[0] != 500) || (g[1] != 0 && g[1] != 300) || g[0]/250+g[1]/300 != hw.Watts(s.Arrived) {
			t.Errorf("after %d arrivals: busy GPU power per group %v", s.Arrived, g)
		}
	}
}
