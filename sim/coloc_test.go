package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace/gavel"
)

var kA, kB = gavel.Key{Type: "A", Scale: 1}, gavel.Key{Type: "B", Scale: 1}

// truth: A next to B runs at 0.8, B next to A at 0.5, A next to A at 0.6.
func truth(a, b gavel.Key) (float64, bool) {
	switch {
	case a == kA && b == kB:
		return 0.8, true
	case a == kB && b == kA:
		return 0.5, true
	case a == kA && b == kA:
		return 0.6, true
	}
	return 0, false
}

// script is a scheduler that plays fixed actions at its n-th call.
type script struct {
	calls int
	plan  map[int][]policy.ColocAction
	seen  []*policy.ColocState
}

func (s *script) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	s.calls++
	s.seen = append(s.seen, st)
	return policy.ColocDecision{Actions: s.plan[s.calls]}
}

func pw() coloc.Power {
	return coloc.Power{ServerIdle: 400, CPUDyn: 300, GPUIdle: 30, GPUPerPct: 2, CPUPerJobPct: 8, Sleep: 20, GPUsPerNode: 2}
}

func twoJobs() []policy.ColocJob {
	return []policy.ColocJob{
		{ID: 0, Key: kA, Steps: 1000, EpochSteps: 100, IsoRate: 10, Deadline: policy.NoDeadline, CoreAvg: 40, MemGiB: 4},
		{ID: 1, Key: kB, Steps: 500, EpochSteps: 50, IsoRate: 5, Deadline: 150_000, CoreAvg: 30, MemGiB: 4},
	}
}

func TestColocShareAndEnergy(t *testing.T) {
	// Both arrive at 0; job 1 joins job 0's set with observation.
	// Shared rates: A 10*0.8 = 8 steps/s, B 5*0.5 = 2.5 steps/s.
	// B needs 500/2.5 = 200 s: ends at 200 s (deadline 150 s: missed).
	// A has done 1600? no: A needs 1000/8 = 125 s: A ends at 125 s, then B
	// runs alone at 5: by 125 s B did 312.5, left 187.5/5 = 37.5 s -> 162.5 s.
	s := &script{plan: map[int][]policy.ColocAction{1: {
		{Kind: policy.ColocStart, Job: 0, Node: 1, GPUs: []int{0}},
		{Kind: policy.ColocJoin, Job: 1, Set: 0, Observe: true},
	}}}
	r, err := RunColoc(twoJobs(), s, ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), SleepIdle: true, Truth: truth, MaxShare: 4, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs[0].End != 125_000 || r.Jobs[1].End != 162_500 {
		t.Fatalf("ends %d, %d; want 125000, 162500", r.Jobs[0].End, r.Jobs[1].End)
	}
	if !r.Jobs[1].Missed || r.DeadlineMisses != 1 || r.Joins != 1 {
		t.Errorf("missed %v misses %d joins %d", r.Jobs[1].Missed, r.DeadlineMisses, r.Joins)
	}
	// Observation: B needs one epoch (50 steps at 2.5/s = 20 s), A 100
	// steps at 8/s = 12.5 s: the window ends at 20 s with factors 0.8, 0.5.
	var obs *policy.ColocObservation
	for _, st := range s.seen {
		for i := range st.Observed {
			obs = &st.Observed[i]
			if st.Now != 20_000 {
				t.Errorf("observation at %d ms, want 20000", st.Now)
			}
		}
	}
	if obs == nil || math.Abs(obs.Factors[0]-0.8) > 1e-9 || math.Abs(obs.Factors[1]-0.5) > 1e-9 {
		t.Fatalf("observation %+v, want factors 0.8, 0.5", obs)
	}
	// Energy: node 1 shared for 125 s: server 400 + 300*(8%*2 jobs*1/2)
	// = 424 W; GPU0 30+2*70 = 170 W, GPU1 30 W -> 624 W. Then B alone for
	// 37.5 s: 400+300*0.04 = 412, GPU0 30+60 = 90, GPU1 30 -> 532 W.
	// Node 0 sleeps 162.5 s at 20 W.
	want := 624*125 + 532*37.5 + 20*162.5
	if math.Abs(float64(r.Energy)-want) > 1e-6 {
		t.Errorf("energy %v J, want %v", r.Energy, want)
	}
	if d := r.ActiveEnergy + r.IdleEnergy + r.SleepEnergy - r.Energy; math.Abs(float64(d)) > 1e-6 {
		t.Errorf("components differ from the total by %v J", d)
	}
	if math.Abs(r.AvgActiveNodes-1) > 1e-9 {
		t.Errorf("active nodes %v, want 1", r.AvgActiveNodes)
	}
	var sum hw.Joules
	for _, h := range r.Hourly {
		sum += h
	}
	if math.Abs(float64(sum-r.Energy)) > 1e-6 {
		t.Errorf("hourly sums to %v, total %v", sum, r.Energy)
	}
}

func TestColocUndoRollsBackToCheckpoint(t *testing.T) {
	// Job 1 joins at 0 and is undone at the observation (20 s) after 50
	// steps (exactly one epoch: no loss); then starts alone on node 0.
	s := &script{plan: map[int][]policy.ColocAction{
		1: {{Kind: policy.ColocStart, Job: 0, Node: 0, GPUs: []int{0}}, {Kind: policy.ColocJoin, Job: 1, Set: 0, Observe: true}},
		2: {{Kind: policy.ColocUndo, Job: 1}, {Kind: policy.ColocStart, Job: 1, Node: 1, GPUs: []int{1}}},
	}}
	r, err := RunColoc(twoJobs(), s, ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), Truth: truth, MaxShare: 4})
	if err != nil {
		t.Fatal(err)
	}
	// B: 50 steps kept, 450 left alone at 5/s = 90 s -> ends at 110 s.
	if r.Undos != 1 || r.Jobs[1].End != 110_000 || r.LostSteps != 0 {
		t.Errorf("undos %d end %d lost %v; want 1, 110000, 0", r.Undos, r.Jobs[1].End, r.LostSteps)
	}
	// A: 20 s at 8/s = 160 steps, then 840 at 10/s = 84 s -> 104 s.
	if r.Jobs[0].End != 104_000 {
		t.Errorf("A ends %d, want 104000", r.Jobs[0].End)
	}
}

func TestColocRejectsBadActions(t *testing.T) {
	cases := []struct {
		name string
		acts []policy.ColocAction
	}{
		{"busy GPU", []policy.ColocAction{{Kind: policy.ColocStart, Job: 0, Node: 0, GPUs: []int{0}}, {Kind: policy.ColocStart, Job: 1, Node: 0, GPUs: []int{0}}}},
		{"no such set", []policy.ColocAction{{Kind: policy.ColocJoin, Job: 1, Set: 3}}},
		{"undo waiting", []policy.ColocAction{{Kind: policy.ColocUndo, Job: 1}}},
		{"wrong GPU count", []policy.ColocAction{{Kind: policy.ColocStart, Job: 0, Node: 0, GPUs: []int{0, 1}}}},
	}
	for _, c := range cases {
		s := &script{plan: map[int][]policy.ColocAction{1: c.acts}}
		_, err := RunColoc(twoJobs(), s, ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), Truth: truth, MaxShare: 4})
		if !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: err = %v, want ErrPolicy", c.name, err)
		}
	}
	// Memory: two 10 GiB jobs do not fit a 16 GiB GPU.
	jobs := twoJobs()
	jobs[0].MemGiB, jobs[1].MemGiB = 10, 10
	s := &script{plan: map[int][]policy.ColocAction{1: {{Kind: policy.ColocStart, Job: 0, Node: 0, GPUs: []int{0}}, {Kind: policy.ColocJoin, Job: 1, Set: 0}}}}
	if _, err := RunColoc(jobs, s, ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), Truth: truth, MaxShare: 4}); !errors.Is(err, ErrPolicy) {
		t.Errorf("memory: err = %v, want ErrPolicy", err)
	}
	// A job left waiting forever is an error, not a silent result.
	if _, err := RunColoc(twoJobs(), &script{}, ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), Truth: truth, MaxShare: 4}); err == nil {
		t.Error("unfinished jobs accepted")
	}
	_ = job.Time(0)
}

func TestColocUtilisation(t *testing.T) {
	// As TestColocShareAndEnergy: the set holds A (40%) and B (30%) for
	// 125 s (70%), then B alone for 37.5 s (30%).
	jobs := twoJobs()
	jobs[0].CoreMax, jobs[1].CoreMax = 60, 50
	s := &script{plan: map[int][]policy.ColocAction{1: {
		{Kind: policy.ColocStart, Job: 0, Node: 1, GPUs: []int{0}},
		{Kind: policy.ColocJoin, Job: 1, Set: 0},
	}}}
	r, err := RunColoc(jobs, s, ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), Truth: truth, MaxShare: 4})
	if err != nil {
		t.Fatal(err)
	}
	// B: (70*125 + 30*37.5) / 162.5 = 60.77%; peak 60+50 = 100 (capped).
	if got := r.Jobs[1].MeanCore; math.Abs(got-(70*125+30*37.5)/162.5) > 1e-9 || r.Jobs[1].PeakCore != 100 {
		t.Errorf("job 1 core mean %v peak %v", got, r.Jobs[1].PeakCore)
	}
	if len(r.Sets) != 1 || r.Sets[0].Jobs != 2 || r.Sets[0].MaxJobs != 2 || r.Sets[0].End != 162_500 {
		t.Fatalf("sets %+v", r.Sets)
	}
	if got := r.Sets[0].MeanCore; math.Abs(got-(70*125+30*37.5)/162.5) > 1e-9 {
		t.Errorf("set core mean %v", got)
	}
}

// TestColocTruthSet: a set model (ColocOptions.TruthSet) replaces the pair
// rule. Every member at 0.5: A runs at 5 steps/s, B at 2.5; A needs
// 1000/5 = 200 s, B 500/2.5 = 200 s; both end at 200 s (with the pair
// truth A would end at 125 s, TestColocShareAndEnergy). A set model with no
// value for the set is a policy error.
func TestColocTruthSet(t *testing.T) {
	plan := func() *script {
		return &script{plan: map[int][]policy.ColocAction{1: {
			{Kind: policy.ColocStart, Job: 0, Node: 1, GPUs: []int{0}},
			{Kind: policy.ColocJoin, Job: 1, Set: 0},
		}}}
	}
	half := func(set []gavel.Key) ([]float64, bool) {
		f := make([]float64, len(set))
		for i := range f {
			f[i] = 0.5
		}
		if len(set) == 1 {
			f[0] = 1
		}
		return f, true
	}
	r, err := RunColoc(twoJobs(), plan(), ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), TruthSet: half, MaxShare: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs[0].End != 200_000 || r.Jobs[1].End != 200_000 {
		t.Errorf("ends %d, %d; want 200000, 200000", r.Jobs[0].End, r.Jobs[1].End)
	}
	none := func(set []gavel.Key) ([]float64, bool) {
		if len(set) == 1 {
			return []float64{1}, true
		}
		return nil, false
	}
	if _, err := RunColoc(twoJobs(), plan(), ColocOptions{Nodes: 2, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), TruthSet: none, MaxShare: 4}); !errors.Is(err, ErrPolicy) {
		t.Errorf("set with no value: err = %v, want ErrPolicy", err)
	}
}

// doneProbe plays script's actions and records, at each call, every running
// job's steps done as the scheduler reads them (DoneAt at the call's time).
type doneProbe struct {
	script
	done []map[int]float64
}

func (p *doneProbe) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	m := map[int]float64{}
	for _, v := range st.Jobs {
		if v.Set >= 0 {
			m[v.Job.ID] = v.DoneAt(st.Now)
		}
	}
	p.done = append(p.done, m)
	return p.script.ScheduleColoc(st)
}

// TestColocLateJoiner: progress and utilisation are integrated per piece
// of constant rate, not per event. A (40% core) starts alone at 0 and runs
// at 10 steps/s; B (30%) arrives at 50 s and joins: the scheduler then
// reads A's progress as 50 x 10 = 500 steps. Shared, A runs at 8/s: 500
// left take 62.5 s, A ends at 112.5 s; B did 62.5 x 2.5 = 156.25, its
// 343.75 left at 5/s take 68.75 s: B ends at 181.25 s. Core means:
// A (40 x 50 + 70 x 62.5) / 112.5 = 56.67%; B (70 x 62.5 + 30 x 68.75) /
// 131.25 = 49.05% (not the 50 s before it joined); the set
// (2000 + 4375 + 2062.5) / 181.25 = 46.55%.
func TestColocLateJoiner(t *testing.T) {
	jobs := twoJobs()
	jobs[1].Submit, jobs[1].Deadline = 50_000, policy.NoDeadline
	p := &doneProbe{script: script{plan: map[int][]policy.ColocAction{
		1: {{Kind: policy.ColocStart, Job: 0, Node: 0, GPUs: []int{1}}},
		2: {{Kind: policy.ColocJoin, Job: 1, Set: 0}},
	}}}
	r, err := RunColoc(jobs, p, ColocOptions{Nodes: 1, GPUsPerNode: 2, GPUMemGiB: 16, Power: pw(), Truth: truth, MaxShare: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.done) < 2 || p.done[1][0] != 500 {
		t.Errorf("A's steps done as read at B's arrival: %v, want 500", p.done)
	}
	if r.Jobs[0].End != 112_500 || r.Jobs[1].End != 181_250 {
		t.Errorf("ends %d, %d; want 112500, 181250", r.Jobs[0].End, r.Jobs[1].End)
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"A", r.Jobs[0].MeanCore, (40*50 + 70*62.5) / 112.5},
		{"B", r.Jobs[1].MeanCore, (70*62.5 + 30*68.75) / 131.25},
		{"set", r.Sets[0].MeanCore, (40*50 + 70*62.5 + 30*68.75) / 181.25},
		{"cluster", r.MeanCoreUtil, (40*50 + 70*62.5 + 30*68.75) / 181.25},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s core mean %v, want %v", c.what, c.got, c.want)
		}
	}
}
