package gandivapack_test

import (
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fifo"
	"github.com/wattsched/wattsched/policy/fifopacked"
	"github.com/wattsched/wattsched/policy/gandivapack"
	"github.com/wattsched/wattsched/trace/gavel"
)

var kA, kB, kC = gavel.Key{Type: "A", Scale: 1}, gavel.Key{Type: "B", Scale: 1}, gavel.Key{Type: "C", Scale: 1}

// Normalized pair throughputs: A+B 0.9+0.9 = 1.8, A+C 0.5+0.4 = 0.9,
// B+C 0.8+0.8 = 1.6; A+A does not fit (0).
func history() *coloc.History {
	tp, err := gavel.ReadThroughputs("t", []byte(`{"v100": {
		"('A', 1)": {"null": 10, "('B', 1)": [9, 4.5], "('C', 1)": [5, 0.8], "('A', 1)": [0, 0]},
		"('B', 1)": {"null": 5, "('C', 1)": [4, 1.6]},
		"('C', 1)": {"null": 2}}}`), "v100")
	if err != nil {
		panic(err)
	}
	f := coloc.MeasuredFactors(tp, tp.Pairs)
	return coloc.NewHistory(f, coloc.Fit(f))
}

func view(id int, k gavel.Key, set int) *policy.ColocView {
	return &policy.ColocView{Job: &policy.ColocJob{ID: id, Key: k, Steps: 100, EpochSteps: 10, IsoRate: 1, Deadline: policy.NoDeadline, Submit: job.Time(id), MemGiB: 1}, Set: set}
}

// full: one node of 2 GPUs running job 0 (A, set 0) and job 1 (C, set 1);
// jobs 2 (B) and 3 (A) wait.
func full() *policy.ColocState {
	return &policy.ColocState{Nodes: 1, GPUsPerNode: 2, GPUMemGiB: 16,
		Jobs:     []*policy.ColocView{view(0, kA, 0), view(1, kC, 1), view(2, kB, -1), view(3, kA, -1)},
		Sets:     []*policy.ColocSet{{ID: 0, GPUs: []int{0}, Jobs: []int{0}}, {ID: 1, GPUs: []int{1}, Jobs: []int{1}}},
		FreeGPUs: [][]int{nil}}
}

func TestFIFONeverShares(t *testing.T) {
	p, _ := fifo.New(fifo.Args{}, policy.ColocDeps{})
	if d := p.ScheduleColoc(full()); len(d.Actions) != 0 {
		t.Errorf("FIFO acted on a full cluster: %+v", d.Actions)
	}
	st := full()
	st.FreeGPUs = [][]int{{1}}
	d := p.ScheduleColoc(st)
	if len(d.Actions) != 1 || d.Actions[0].Job != 2 || d.Actions[0].Kind != policy.ColocStart {
		t.Errorf("FIFO did not start the head: %+v", d.Actions)
	}
}

func TestFIFOPacked(t *testing.T) {
	p, err := fifopacked.New(fifopacked.Args{}.Default(), policy.ColocDeps{History: history})
	if err != nil {
		t.Fatal(err)
	}
	// Head B: with A 1.8, with C 1.6, both > 1.5: packs with A (set 0).
	// Then A: with C 0.9 < 1.5 (and set 0 is taken): packing stops.
	d := p.ScheduleColoc(full())
	if len(d.Actions) != 1 || d.Actions[0].Kind != policy.ColocJoin || d.Actions[0].Job != 2 || d.Actions[0].Set != 0 {
		t.Errorf("actions %+v, want job 2 joining set 0 only", d.Actions)
	}
}

func TestGandivaIntrospection(t *testing.T) {
	p, err := gandivapack.New(gandivapack.Args{}.Default(), policy.ColocDeps{History: history, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := p.ScheduleColoc(full())
	// Job 2 (B) pairs with set 0 or 1 at random; job 3 (A) can only take
	// set 1 (C): A+A does not fit.
	if len(d.Actions) == 0 {
		t.Fatal("no packing on a full cluster")
	}
	var setOf3 = -1
	for _, a := range d.Actions {
		if a.Kind != policy.ColocJoin || !a.Observe {
			t.Fatalf("action %+v, want observed joins", a)
		}
		if a.Job == 3 {
			setOf3 = a.Set
		}
	}
	if setOf3 == 0 {
		t.Fatal("A paired with A, which does not fit")
	}
	// Introspection: a pair measured at 0.5 + 0.4 < 1 is undone.
	for _, a := range d.Actions {
		st := full()
		st.Observed = []policy.ColocObservation{{Set: a.Set, Jobs: []int{st.Sets[a.Set].Jobs[0], a.Job}, Factors: []float64{0.5, 0.4}}}
		st.Jobs[a.Job].Set = a.Set
		st.Sets[a.Set].Jobs = append(st.Sets[a.Set].Jobs, a.Job)
		d2 := p.ScheduleColoc(st)
		if len(d2.Actions) == 0 || d2.Actions[0].Kind != policy.ColocUndo || d2.Actions[0].Job != a.Job {
			t.Errorf("pair below 1 kept: %+v", d2.Actions)
		}
		break
	}
}
