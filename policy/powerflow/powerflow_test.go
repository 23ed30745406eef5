package powerflow

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/policy"
)

// fake: job 0 scales perfectly (T = 1/n s), job 1 as 1/sqrt(n); every GPU
// draws 200 W at every frequency.
type fake struct{}

func (fake) Predict(v *policy.ElasticView, n, fi int) (float64, float64, bool) {
	if n > v.Job.MaxGPUs {
		return 0, 0, false
	}
	t := 1 / float64(n)
	if v.Job.ID == 1 {
		t = 1 / math.Sqrt(float64(n))
	}
	return t, 200 * float64(n) * t, true
}

func TestAllocationFollowsMarginalReturnUnderTheLimit(t *testing.T) {
	p, err := New(Args{ProfileNewCounts: true}, policy.ElasticDeps{Predictor: fake{}, ProfileFreqs: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	views := []*policy.ElasticView{
		{Job: &policy.ElasticJob{ID: 0, MaxGPUs: 8}, Remaining: 100},
		{Job: &policy.ElasticJob{ID: 1, MaxGPUs: 8}, Remaining: 100},
	}
	st := &policy.ElasticState{Jobs: views, Nodes: 1, GPUsPerNode: 8, NodeOn: []bool{true}, FreqsMHz: []int{1000, 1400}, IdleGPU: 50,
		PowerLimit: 0.4 * 8 * 400}
	d := p.ScheduleElastic(st)
	// Limit 0.4*8*400 = 1280 W. Both get a first GPU (400 W + 6 idle GPUs
	// at 50 W = 700 W). Job 0's extra GPUs cost no energy per iteration
	// (priority_G infinite): 2 GPUs (850 W), 4 GPUs (1150 W); 8 does not
	// fit the 3 free GPUs. Job 1's second GPU would make 1300 W > 1280 W.
	got := map[int]int{}
	var pred float64
	busy := 0
	for _, a := range d.Allocs {
		for _, ns := range a.Nodes {
			got[a.Job] += ns.GPUs
		}
		pred += float64(a.Pred)
		busy += got[a.Job]
		if a.Profile != (a.Job == 0) {
			t.Errorf("job %d profile %v: a new count (4 GPUs) is profiled, 1 GPU is not", a.Job, a.Profile)
		}
	}
	if got[0] != 4 || got[1] != 1 {
		t.Fatalf("GPUs %v, want job 0: 4, job 1: 1", got)
	}
	if total := pred + float64(8-busy)*50; total > 1280 || total != 1150 {
		t.Fatalf("predicted power %v W, want 1150 W", total)
	}
	if !d.NodeOn[0] {
		t.Fatal("the used node must stay on")
	}
}

func TestArgsValidate(t *testing.T) {
	for _, a := range []Args{{MinRescaleSec: -1}, {MinRescaleSec: math.NaN()}, {MinRescaleSec: math.Inf(1)}} {
		if a.Validate() == nil {
			t.Errorf("%+v accepted", a)
		}
	}
	if err := (Args{}).Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

// A job whose ID is beyond every table built so far arrives at the decision
// that prunes the tables of ended jobs (it crashed on the Philly day
// 2017-11-16: index out of range).
func TestPruneWithANewerJob(t *testing.T) {
	p, err := New(Args{}.Default(), policy.ElasticDeps{Predictor: fake{}, ProfileFreqs: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	state := func(ids ...int) *policy.ElasticState {
		st := &policy.ElasticState{Nodes: 4, GPUsPerNode: 8, NodeOn: []bool{true, true, true, true},
			FreqsMHz: []int{1000, 1400}, IdleGPU: 50}
		for _, id := range ids {
			st.Jobs = append(st.Jobs, &policy.ElasticView{Job: &policy.ElasticJob{ID: id, MaxGPUs: 8}, Remaining: 100})
		}
		return st
	}
	many := make([]int, 100)
	for i := range many {
		many[i] = i
	}
	p.ScheduleElastic(state(many...))
	d := p.ScheduleElastic(state(3, 150))
	if len(d.Allocs) != 2 {
		t.Fatalf("%d allocations, want both jobs placed", len(d.Allocs))
	}
	if p.live != 2 {
		t.Fatalf("%d live tables after pruning, want 2", p.live)
	}
}

// A running job metered at 1.5x its predicted power: with correct_power
// every prediction is scaled by 1.5 before the limit check (fewer GPUs fit,
// and the reported predictions carry the factor); without it the plan is
// the models' alone.
func TestPowerCorrectionFromMeteredPower(t *testing.T) {
	plan := func(correct bool) (gpus int, pred float64) {
		return planMetered(t, Args{CorrectPower: correct}, 300)
	}
	g0, p0 := plan(false)
	g1, p1 := plan(true)
	// Without: job 0's GPU (200 W) and job 1 on 4 GPUs (800 W) = 1000 W
	// + 3 idle = 1150 W. With: job 1 on 2 GPUs, 1.5 x 600 W = 900 W.
	if g0 != 5 || math.Abs(p0-1000) > 1e-9 || g1 != 3 || math.Abs(p1-900) > 1e-9 {
		t.Fatalf("GPUs / predicted W: %d / %v without, %d / %v with; want 5 / 1000 and 3 / 900", g0, p0, g1, p1)
	}
	// Metered as predicted, but a 50% guard band on the unmetered job 1:
	// 1 GPU 300 W, 2 GPUs 600 W (1050 W in all), 4 GPUs 1200 W (over).
	// Job 0, metered at its configuration, keeps its 200 W.
	if g, pr := planMetered(t, Args{CorrectPower: true, UnmeteredGuard: 0.5}, 200); g != 3 || math.Abs(pr-800) > 1e-9 {
		t.Fatalf("guard band: %d GPUs, %v W predicted; want 3, 800", g, pr)
	}
}

// planMetered plans job 0 running on 1 GPU (predicted 200 W, metered
// meteredW) and job 1 waiting, on one 8-GPU node under a 1280 W limit.
func planMetered(t *testing.T, args Args, meteredW float64) (gpus int, pred float64) {
	t.Helper()
	p, err := New(args, policy.ElasticDeps{Predictor: fake{}, ProfileFreqs: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	running := &policy.ElasticView{Job: &policy.ElasticJob{ID: 0, MaxGPUs: 1}, Remaining: 100, GPUs: 1, Nodes: []policy.NodeShare{{Node: 0, GPUs: 1}},
		FreqIdx: 1, Started: true, PowerW: meteredW}
	st := &policy.ElasticState{Jobs: []*policy.ElasticView{running, {Job: &policy.ElasticJob{ID: 1, MaxGPUs: 8}, Remaining: 100}},
		Nodes: 1, GPUsPerNode: 8, NodeOn: []bool{true}, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, PowerLimit: 1280}
	d := p.ScheduleElastic(st)
	for _, a := range d.Allocs {
		for _, ns := range a.Nodes {
			gpus += ns.GPUs
		}
		pred += float64(a.Pred)
	}
	if total := pred + float64(8-gpus)*50; total > 1280 {
		t.Fatalf("%+v: predicted %v W over the 1280 W limit", args, total)
	}
	return gpus, pred
}
