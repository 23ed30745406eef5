package vahrm_test

import (
	"math/rand/v2"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/vahrm"
	"github.com/wattsched/wattsched/power"
)

// fourNodes: 1 CPU + 1 GPU per node, one CPU job type; the CPUs of nodes
// 0-3 draw 130, 100, 120, 110 W on it, the idle GPUs 20 W.
func fourNodes() *power.HPCNodes {
	return &power.HPCNodes{CPUsPerNode: 1, GPUsPerNode: 1, CPUIdle: 10, GPUIdle: 20, CPUTDP: 150, GPUTDP: 300,
		CPU: [][]float64{{130}, {100}, {120}, {110}}, GPU: [][]float64{{20}, {20}, {20}, {20}}, GPUJob: []bool{false}}
}

func state(queue []*policy.HPCJob, free []bool, now job.Time) *policy.HPCState {
	st := &policy.HPCState{Now: now, Queue: queue, Free: free, IdleNode: 30, NodeTDP: 450, Rand: rand.New(rand.NewPCG(1, 2))}
	for _, f := range free {
		if f {
			st.FreeCount++
		}
	}
	st.Predicted = hw.Watts(len(free)) * st.IdleNode
	return st
}

func ids(starts []policy.HPCStart) []int {
	var out []int
	for _, s := range starts {
		out = append(out, s.Job)
	}
	return out
}

func TestPriorityOrdersByEnergyOrWait(t *testing.T) {
	// Two jobs want 2 of the 2 free nodes: only one can start.
	old := &policy.HPCJob{ID: 0, Submit: 0, Runtime: 1000, Nodes: 2}           // waited 100 s, small energy
	big := &policy.HPCJob{ID: 1, Submit: 99_000, Runtime: 1_000_000, Nodes: 2} // waited 1 s, large energy
	free := []bool{true, true, false, false}
	for _, units := range []string{vahrm.UnitsQueue, vahrm.UnitsRaw} {
		for _, tc := range []struct {
			beta float64
			want int
		}{{0, 0}, {1, 1}} {
			p, err := vahrm.New(vahrm.Args{Beta: tc.beta, BetaUnits: units, WaitLimitS: 1e6}, policy.HPCDeps{Pred: fourNodes()})
			if err != nil {
				t.Fatal(err)
			}
			got := ids(p.ScheduleHPC(state([]*policy.HPCJob{old, big}, free, 100_000)))
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("%s beta %v: started %v, want [%d]", units, tc.beta, got, tc.want)
			}
		}
	}
}

// At the paper's beta = (1/4)^6, raw joules outweigh raw seconds: a job of
// 2 nodes x 10,000 s that waited 1 s goes before one that waited 100 s.
// Normalised to the queue, the same beta leaves the order to waiting time.
func TestBetaUnits(t *testing.T) {
	old := &policy.HPCJob{ID: 0, Submit: 0, Runtime: 1000, Nodes: 2}
	big := &policy.HPCJob{ID: 1, Submit: 99_000, Runtime: 10_000_000, Nodes: 2}
	free := []bool{true, true, false, false}
	for _, tc := range []struct {
		units string
		want  int
	}{{vahrm.UnitsRaw, 1}, {vahrm.UnitsQueue, 0}} {
		a := vahrm.Args{}.Default()
		a.BetaUnits = tc.units
		p, err := vahrm.New(a, policy.HPCDeps{Pred: fourNodes()})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(p.ScheduleHPC(state([]*policy.HPCJob{old, big}, free, 100_000)))
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: started %v, want [%d]", tc.units, got, tc.want)
		}
		// Normalised terms lie in 0..1: the largest energy and the longest
		// wait of the queue each count 1.
		eS, wS := p.Scales([]*policy.HPCJob{old, big}, 100_000, 450)
		for _, j := range []*policy.HPCJob{old, big} {
			pr := p.Priority(j, 100_000, 450, eS, wS)
			if tc.units == vahrm.UnitsQueue && (pr < 0 || pr > 1) {
				t.Errorf("queue units: priority %v of job %d outside 0..1", pr, j.ID)
			}
		}
		if tc.units == vahrm.UnitsRaw && (eS != 1 || wS != 1) {
			t.Errorf("raw units: scales %v, %v, want 1, 1", eS, wS)
		}
	}
}

func TestCheapestNodesAndPowerCap(t *testing.T) {
	p, _ := vahrm.New(vahrm.Args{}.Default(), policy.HPCDeps{Pred: fourNodes()})
	j := &policy.HPCJob{ID: 7, Runtime: 1000, Nodes: 2}
	st := state([]*policy.HPCJob{j}, []bool{true, true, true, true}, 0)
	s := p.ScheduleHPC(st)
	// Cheapest nodes: 1 (100 W + 20) and 3 (110 + 20).
	if len(s) != 1 || s[0].Nodes[0] != 1 || s[0].Nodes[1] != 3 || s[0].Pred != 250 {
		t.Fatalf("starts %+v, want job 7 on nodes 1 and 3 at 250 W", s)
	}
	// Predicted system power would be 4*30 - 2*30 + 250 = 310 W: a 300 W cap refuses it.
	st.PowerLimit = 300
	if s := p.ScheduleHPC(st); len(s) != 0 {
		t.Fatalf("started %+v above the cap", s)
	}
	st.PowerLimit = 310
	if s := p.ScheduleHPC(st); len(s) != 1 {
		t.Fatal("a start exactly at the cap must be allowed")
	}
}

func TestUnmovableJobBlocksOthers(t *testing.T) {
	p, _ := vahrm.New(vahrm.Args{Beta: 0.5, BetaUnits: vahrm.UnitsQueue, WaitLimitS: 10}, policy.HPCDeps{Pred: fourNodes()})
	stuck := &policy.HPCJob{ID: 0, Submit: 0, Runtime: 1000, Nodes: 3} // waited 20 s > 10 s
	small := &policy.HPCJob{ID: 1, Submit: 19_000, Runtime: 1000, Nodes: 1}
	free := []bool{true, true, false, false}
	if got := ids(p.ScheduleHPC(state([]*policy.HPCJob{stuck, small}, free, 20_000))); len(got) != 0 {
		t.Fatalf("started %v while an unmovable job waits for nodes", got)
	}
	free = []bool{true, true, true, false}
	if got := ids(p.ScheduleHPC(state([]*policy.HPCJob{stuck, small}, free, 20_000))); len(got) != 1 || got[0] != 0 {
		t.Fatalf("started %v, want the unmovable job first", got)
	}
}

func TestFirstRunAtTDPProfiled(t *testing.T) {
	p, _ := vahrm.New(vahrm.Args{}.Default(), policy.HPCDeps{Pred: fourNodes()})
	j := &policy.HPCJob{ID: 3, Runtime: 1000, Nodes: 1, FirstRun: true}
	s := p.ScheduleHPC(state([]*policy.HPCJob{j}, []bool{true, true, true, true}, 0))
	if len(s) != 1 || !s[0].Profile || s[0].Pred != 450 {
		t.Fatalf("starts %+v, want a profiled start at node TDP", s)
	}
}

func TestArgsValidate(t *testing.T) {
	for _, a := range []vahrm.Args{{Beta: -0.1, BetaUnits: vahrm.UnitsRaw, WaitLimitS: 1}, {Beta: 1.5, BetaUnits: vahrm.UnitsRaw, WaitLimitS: 1},
		{Beta: 0.5, BetaUnits: vahrm.UnitsRaw}, {Beta: 0.5, BetaUnits: "joules", WaitLimitS: 1}} {
		if err := a.Validate(); err == nil {
			t.Errorf("%+v: want an error", a)
		}
	}
	if err := (vahrm.Args{}).Default().Validate(); err != nil {
		t.Error(err)
	}
}
