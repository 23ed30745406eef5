package eaco

import (
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace/gavel"
)

var kA, kB = gavel.Key{Type: "A", Scale: 1}, gavel.Key{Type: "B", Scale: 1}

// A next to B runs at 9/10 = 0.9, B next to A at 4.5/5 = 0.9, A next to
// A at 0.6.
func history() *coloc.History {
	tp, err := gavel.ReadThroughputs("t", []byte(`{"v100": {"('A', 1)": {"null": 10, "('B', 1)": [9, 4.5], "('A', 1)": [6, 6]}, "('B', 1)": {"null": 5}}}`), "v100")
	if err != nil {
		panic(err)
	}
	f := coloc.MeasuredFactors(tp, tp.Pairs)
	return coloc.NewHistory(f, coloc.Fit(f))
}

func newPolicy(t *testing.T) *Policy {
	a := Args{}.Default()
	a.ReserveGPUs = 0
	p, err := New(a, policy.ColocDeps{History: history})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func view(id int, k gavel.Key, set int, deadline job.Time, core float64) *policy.ColocView {
	iso := 10.0
	if k == kB {
		iso = 5
	}
	return &policy.ColocView{Job: &policy.ColocJob{ID: id, Key: k, Steps: 1000, EpochSteps: 10, IsoRate: iso, Deadline: deadline, CoreAvg: core, MemGiB: 2}, Set: set}
}

// state: job 0 (A) alone on set 0 (node 0), job 1 (A) alone on set 1
// (node 1), job 2 (B) waiting; no free GPU.
func state(core0, core1 float64, dl0 job.Time) *policy.ColocState {
	return &policy.ColocState{Nodes: 2, GPUsPerNode: 1, GPUMemGiB: 16,
		Jobs: []*policy.ColocView{view(0, kA, 0, dl0, core0), view(1, kA, 1, policy.NoDeadline, core1), view(2, kB, -1, policy.NoDeadline, 10)},
		Sets: []*policy.ColocSet{{ID: 0, Node: 0, GPUs: []int{0}, Jobs: []int{0}, CoreUtil: core0, MemPeak: 20},
			{ID: 1, Node: 1, GPUs: []int{0}, Jobs: []int{1}, CoreUtil: core1, MemPeak: 20}},
		FreeGPUs: [][]int{nil, nil}}
}

func TestPlacement(t *testing.T) {
	cases := []struct {
		name         string
		core0, core1 float64
		dl0          job.Time
		wantSet      int
	}{
		{"most utilised set first", 40, 20, policy.NoDeadline, 0},
		{"core threshold (80%) excludes set 0", 85, 20, policy.NoDeadline, 1},
		// Job 0 alone needs 1000/10 = 100 s; next to B it runs at 9/s:
		// 1000/9 = 111.1 s > deadline 105 s, so set 0 is refused.
		{"co-tenant deadline", 40, 20, 105_000, 1},
		// 115 s: 111.1 s fits.
		{"co-tenant deadline met", 40, 20, 115_000, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newPolicy(t).ScheduleColoc(state(c.core0, c.core1, c.dl0))
			if len(d.Actions) != 1 || d.Actions[0].Kind != policy.ColocJoin || d.Actions[0].Set != c.wantSet || !d.Actions[0].Observe {
				t.Fatalf("actions %+v, want an observed join of set %d", d.Actions, c.wantSet)
			}
		})
	}
}

func TestObservationUndo(t *testing.T) {
	p := newPolicy(t)
	st := state(40, 20, 115_000)
	d := p.ScheduleColoc(st)
	if len(d.Actions) != 1 || d.Actions[0].Set != 0 {
		t.Fatalf("actions %+v", d.Actions)
	}
	// Measured: job 0 at 0.8 (not 0.9): 1000/8 = 125 s > 115 s -> undo job 2.
	st.Jobs[2].Set = 0
	st.Sets[0].Jobs = []int{0, 2}
	st.Observed = []policy.ColocObservation{{Set: 0, Jobs: []int{0, 2}, Keys: []gavel.Key{kA, kB}, Factors: []float64{0.8, 0.9}}}
	d = p.ScheduleColoc(st)
	if len(d.Actions) == 0 || d.Actions[0].Kind != policy.ColocUndo || d.Actions[0].Job != 2 || p.Undone != 1 {
		t.Fatalf("actions %+v, want undo of job 2", d.Actions)
	}
	// H now holds the measured set: the prediction uses it.
	if f := p.History().Predict([]gavel.Key{kB, kA}); f[1] != 0.8 {
		t.Errorf("history predicts %v, want the recorded 0.8 for A", f)
	}
	// A set that passes is finalised.
	p2 := newPolicy(t)
	p2.ScheduleColoc(state(40, 20, 115_000))
	st.Observed[0].Factors = []float64{0.9, 0.9}
	p2.ScheduleColoc(st)
	if p2.Finalised != 1 || p2.Undone != 0 {
		t.Errorf("finalised %d undone %d, want 1, 0", p2.Finalised, p2.Undone)
	}
}

func TestArgs(t *testing.T) {
	a := Args{}.Default()
	a.Alpha = 2
	if a.Validate() == nil {
		t.Error("alpha 2 accepted")
	}
}

// TestHighPriorityExclusive: a high-priority job never joins a set, and
// no job joins a set that holds one (Sec. 4.2: "immediate, exclusive
// resource allocation"). Without the rule job 2 joins set 0 (most
// utilised, TestPlacement's first case).
func TestHighPriorityExclusive(t *testing.T) {
	cases := []struct {
		name    string
		prio    [3]int
		wantSet int // -1: no join
	}{
		{"none high: joins set 0", [3]int{0, 0, 0}, 0},
		{"set 0 holds a high-priority job: joins set 1", [3]int{1, 0, 0}, 1},
		{"both sets hold one: waits", [3]int{1, 1, 0}, -1},
		{"the waiting job is high-priority: waits for free GPUs", [3]int{0, 0, 1}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := state(40, 20, policy.NoDeadline)
			for i, pr := range c.prio {
				st.Jobs[i].Job.Priority = pr
			}
			d := newPolicy(t).ScheduleColoc(st)
			if c.wantSet < 0 {
				if len(d.Actions) != 0 {
					t.Fatalf("actions %+v, want none", d.Actions)
				}
				return
			}
			if len(d.Actions) != 1 || d.Actions[0].Kind != policy.ColocJoin || d.Actions[0].Set != c.wantSet {
				t.Fatalf("actions %+v, want a join of set %d", d.Actions, c.wantSet)
			}
		})
	}
}

// TestLengthsFromHistory: with lengths: history a job's remaining steps
// come from the jobs that completed before (their median length alone),
// never from its own step count; before any completion, the prior.
func TestLengthsFromHistory(t *testing.T) {
	a := Args{}.Default()
	a.ReserveGPUs, a.Lengths, a.LengthPriorH = 0, LengthsHistory, 1
	p, err := New(a, policy.ColocDeps{History: history})
	if err != nil {
		t.Fatal(err)
	}
	st := state(40, 20, policy.NoDeadline)
	p.ScheduleColoc(st)
	// Nothing completed: the prior, 1 h alone = 3,600 s x 10 steps/s.
	if got := p.remaining(st.Jobs[0], st.Now); got != 36_000 {
		t.Errorf("before any completion: %v steps left, want 36000 (the prior)", got)
	}
	// Job 1 (A, 1,000 steps at 10/s: 100 s alone) completes.
	st.Jobs = []*policy.ColocView{st.Jobs[0], st.Jobs[2]}
	st.Sets = st.Sets[:1]
	p.ScheduleColoc(st)
	// Job 0: 100 s x 10/s = 1,000 predicted, 250 done: 750 left.
	st.Jobs[0].Done = 250
	if got := p.remaining(st.Jobs[0], st.Now); got != 750 {
		t.Errorf("after one completion: %v steps left, want 750", got)
	}
	// Past its predicted length: one more epoch (10 steps).
	st.Jobs[0].Done = 1200
	if got := p.remaining(st.Jobs[0], st.Now); got != 10 {
		t.Errorf("past the prediction: %v steps left, want one epoch (10)", got)
	}
	st.Jobs[0].Job.Steps = 5000 // its own count is never read
	if got := p.remaining(st.Jobs[0], st.Now); got != 10 {
		t.Errorf("own step count changed the prediction: %v", got)
	}
	if l := p.Lengths(); len(l) != 1 || l[0].Job != 1 || l[0].PredictedS != 3600 || l[0].ActualS != 100 {
		t.Errorf("length predictions %+v, want job 1: 3600 s predicted, 100 s real", l)
	}
	// Given lengths read the job.
	g := newPolicy(t)
	if got := g.remaining(st.Jobs[0], st.Now); got != 3800 {
		t.Errorf("given lengths: %v steps left, want 5000-1200", got)
	}
}

// TestBoundFollowsHistory: the bound's verdict on a set is decided anew
// once H records the set's combination with the joining job's key. H
// first records A next to B at 0.3 each: B joining A's set 0 would take
// at least 1/0.3 = 3.3x the time per epoch, so the bound rejects it
// (eq. 1's cost >= 0.5 x 1.87 + 0.5 x 3.33 = 2.6) and job 2 starts
// alone. H then records 0.95 each: job 3 (B) on set 0 costs
// 0.5 x 256 W x 210.5 s / (243 W x 100 s + 213 W x 200 s) + 0.5 x 1.053
// = 0.93 <= 1 and joins it; a kept verdict would have refused it.
func TestBoundFollowsHistory(t *testing.T) {
	p := newPolicy(t)
	pw := coloc.Power{GPUIdle: 100, GPUPerPct: 1, ServerIdle: 100, CPUDyn: 50, CPUPerJobPct: 6, GPUsPerNode: 1}
	set0 := &policy.ColocSet{ID: 0, Node: 0, GPUs: []int{0}, Jobs: []int{0}, CoreUtil: 40, MemPeak: 20}
	seen := func(f float64) []policy.ColocObservation {
		return []policy.ColocObservation{{Set: 7, Jobs: []int{5, 6}, Keys: []gavel.Key{kA, kB}, Factors: []float64{f, f}}}
	}
	st := &policy.ColocState{Nodes: 3, GPUsPerNode: 1, GPUMemGiB: 16, Power: pw, Tracked: true,
		Jobs:     []*policy.ColocView{view(0, kA, 0, policy.NoDeadline, 40), view(2, kB, -1, policy.NoDeadline, 10)},
		Sets:     []*policy.ColocSet{set0},
		FreeGPUs: [][]int{nil, {0}, {0}}, Observed: seen(0.3)}
	d := p.ScheduleColoc(st)
	if len(d.Actions) != 1 || d.Actions[0].Kind != policy.ColocStart || d.Actions[0].Node != 1 || p.Bounds.Blocked != 1 {
		t.Fatalf("actions %+v, bound %+v: want job 2 started alone on node 1, the bound rejecting set 0", d.Actions, p.Bounds)
	}
	st = &policy.ColocState{Nodes: 3, GPUsPerNode: 1, GPUMemGiB: 16, Power: pw, Tracked: true, Changed: []int{1},
		Jobs:     []*policy.ColocView{view(0, kA, 0, policy.NoDeadline, 40), view(2, kB, 1, policy.NoDeadline, 10), view(3, kB, -1, policy.NoDeadline, 10)},
		Sets:     []*policy.ColocSet{set0, {ID: 1, Node: 1, GPUs: []int{0}, Jobs: []int{2}, CoreUtil: 10, MemPeak: 20}},
		FreeGPUs: [][]int{nil, nil, {0}}, Observed: seen(0.95)}
	d = p.ScheduleColoc(st)
	if len(d.Actions) != 1 || d.Actions[0].Kind != policy.ColocJoin || d.Actions[0].Job != 3 || d.Actions[0].Set != 0 {
		t.Fatalf("actions %+v, bound %+v: want job 3 to join set 0", d.Actions, p.Bounds)
	}
}

// TestBoundDecidedAnew: a verdict of the bound is kept until H records
// the set's own combination (its members' predictions) or the
// combination with the joining job's key, and only then. Set 0 holds A
// and B and has no room (95% peak memory), set 1 is over the core
// threshold: each decision tests set 0 for a job of key A, which then
// starts alone.
func TestBoundDecidedAnew(t *testing.T) {
	p := newPolicy(t)
	pw := coloc.Power{GPUIdle: 100, GPUPerPct: 1, ServerIdle: 100, CPUDyn: 50, CPUPerJobPct: 6, GPUsPerNode: 1}
	set0 := &policy.ColocSet{ID: 0, Node: 0, GPUs: []int{0}, Jobs: []int{0, 1}, CoreUtil: 50, MemPeak: 95}
	for i, c := range []struct {
		name        string
		seen        []gavel.Key
		wantDecided int
	}{
		{"first", []gavel.Key{kA, kB}, 1},
		{"B next to B: kept", []gavel.Key{kB, kB}, 1},
		{"A, B and B: kept", []gavel.Key{kA, kB, kB}, 1},
		{"the set's own A and B: anew", []gavel.Key{kB, kA}, 2},
		{"A, B and the job's A: anew", []gavel.Key{kA, kA, kB}, 3},
	} {
		f := make([]float64, len(c.seen))
		for k := range f {
			f[k] = 0.5 + 0.1*float64(i)
		}
		st := &policy.ColocState{Nodes: 8, GPUsPerNode: 1, GPUMemGiB: 16, Power: pw, Tracked: true, Changed: []int{1},
			Jobs: []*policy.ColocView{view(0, kA, 0, policy.NoDeadline, 40), view(1, kB, 0, policy.NoDeadline, 10),
				view(2, kA, 1, policy.NoDeadline, 85), view(3+i, kA, -1, policy.NoDeadline, 10)},
			Sets:     []*policy.ColocSet{set0, {ID: 1, Node: 1, GPUs: []int{0}, Jobs: []int{2}, CoreUtil: 85, MemPeak: 20}},
			FreeGPUs: [][]int{nil, nil, {0}, {0}, {0}, {0}, {0}, {0}},
			Observed: []policy.ColocObservation{{Set: 7, Jobs: []int{5, 6, 7}[:len(c.seen)], Keys: c.seen, Factors: f}}}
		d := p.ScheduleColoc(st)
		if len(d.Actions) != 1 || d.Actions[0].Kind != policy.ColocStart || p.Bounds.Decided != c.wantDecided {
			t.Fatalf("%s: actions %+v, bound %+v: want a start and %d verdicts decided", c.name, d.Actions, p.Bounds, c.wantDecided)
		}
	}
}
