package sim

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// fakeTruth: n GPUs take 1/n s per iteration at 100 W per GPU, at any
// frequency index; frequency index 0 draws 60 W.
type fakeTruth struct{}

func (fakeTruth) Truth(j *policy.ElasticJob, n, fi int) (float64, float64) {
	if fi == 0 {
		return 1 / float64(n), 60
	}
	return 1 / float64(n), 100
}
func (fakeTruth) CanRun(j *policy.ElasticJob, n int) bool { return n == 1 || n == 2 }

// scripted gives each job 1 GPU on node 0, then after WakeMs 2 GPUs.
type scripted struct {
	wakeMs  job.Time
	profile bool
	predW   hw.Watts
	on      []bool
}

func (s *scripted) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	var d policy.ElasticDecision
	d.NodeOn = s.on
	for _, v := range st.Jobs {
		n := 1
		if s.wakeMs > 0 && st.Now >= s.wakeMs {
			n = 2
		}
		d.Allocs = append(d.Allocs, policy.ElasticAlloc{Job: v.Job.ID, Nodes: []policy.NodeShare{{Node: 0, GPUs: n}}, FreqIdx: 1, Pred: s.predW, Profile: s.profile && !v.Profiled(n)})
	}
	if s.wakeMs > st.Now {
		d.WakeAt = s.wakeMs
	}
	return d
}

func TestElasticRescaleEnergyAndTime(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Iters: 100, ReqGPUs: 1, MaxGPUs: 2}}
	o := ElasticOptions{Nodes: 1, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, Restart: 5000}
	res, err := RunElastic(jobs, fakeTruth{}, &scripted{wakeMs: 10000}, o)
	if err != nil {
		t.Fatal(err)
	}
	// 0-10 s: 10 iterations on 1 GPU (100 W) + 1 idle GPU (50 W) = 1500 J.
	// 10-15 s: restart, 2 GPUs held at idle = 500 J (the job's).
	// 15-60 s: 90 iterations at 0.5 s on 2 GPUs at 100 W = 9000 J.
	j := res.Jobs[0]
	if j.End != 60000 || !near(res.Energy, 11000) || !near(res.JobEnergy, 10500) || !near(res.IdleEnergy, 500) || res.Rescales != 1 {
		t.Fatalf("end %d ms, energy %v (job %v idle %v), rescales %d", j.End, res.Energy, res.JobEnergy, res.IdleEnergy, res.Rescales)
	}
	if !near(res.Energy, res.JobEnergy+res.IdleEnergy+res.PowerOnEnergy+res.PreRunEnergy) {
		t.Fatal("energy parts do not add up")
	}
}

func near[F ~float64](a, b F) bool {
	return math.Abs(float64(a-b)) <= 1e-6*math.Max(1, math.Abs(float64(b)))
}

func TestElasticProfilingAndPreRun(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Iters: 1000, ReqGPUs: 1, MaxGPUs: 2}, {ID: 1, Submit: 1000, Iters: 500, ReqGPUs: 1, MaxGPUs: 2}}
	o := ElasticOptions{Nodes: 2, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, PreRun: 4000, Profile: 8000,
		ProfileFreqs: []int{0, 1}, NoiseSigma: 0.02, PowerOn: 1000, Seed: 7}
	s := &scripted{profile: true, on: []bool{true, false}}
	res, err := RunElastic(jobs, fakeTruth{}, s, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range res.Jobs {
		// A pre-run of 4 s cycles both frequencies on one offline GPU:
		// 2 s at 60 W + 2 s at 100 W = 320 J. It measured 1 GPU, so the
		// scheduler asks for no window on 1 GPU.
		if !near(j.PreRun, 320) || j.Slices != 0 || j.ProfileWindows != 0 {
			t.Errorf("job %d: pre-run %v J, %d slices, %d windows", j.ID, j.PreRun, j.Slices, j.ProfileWindows)
		}
	}
	if !near(res.Energy, res.JobEnergy+res.IdleEnergy+res.PowerOnEnergy+res.PreRunEnergy) {
		t.Fatalf("energy %v != parts %v", res.Energy, res.JobEnergy+res.IdleEnergy+res.PowerOnEnergy+res.PreRunEnergy)
	}
	// Node 1 was switched off at the first decision and never on again.
	if res.PowerOns != 0 {
		t.Errorf("power-ons %d", res.PowerOns)
	}
	again, err := RunElastic(jobs, fakeTruth{}, &scripted{profile: true, on: []bool{true, false}}, o)
	if err != nil || !reflect.DeepEqual(res, again) {
		t.Fatal("same inputs gave different results")
	}
}

func TestElasticRefusesBadDecisions(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Iters: 10, ReqGPUs: 1, MaxGPUs: 2}}
	o := ElasticOptions{Nodes: 1, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, PowerLimit: 140}
	// 1 GPU predicted at 100 W + 1 idle GPU at 50 W = 150 W > 140 W.
	_, err := RunElastic(jobs, fakeTruth{}, &scripted{predW: 100}, o)
	if !errors.Is(err, ErrPolicy) {
		t.Fatalf("over the power limit: %v", err)
	}
	o.PowerLimit = 150
	if _, err := RunElastic(jobs, fakeTruth{}, &scripted{predW: 100}, o); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err = RunElastic(jobs, fakeTruth{}, &scripted{on: []bool{false}}, o)
	if !errors.Is(err, ErrPolicy) {
		t.Fatalf("job on a powered-off node: %v", err)
	}
}

func TestElasticProfileWindow(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Iters: 1000, ReqGPUs: 1, MaxGPUs: 2}}
	o := ElasticOptions{Nodes: 1, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, Profile: 8000, ProfileFreqs: []int{0, 1}, Seed: 1}
	res, err := RunElastic(jobs, fakeTruth{}, &scripted{profile: true}, o)
	if err != nil {
		t.Fatal(err)
	}
	// One window of two 4 s slices on 1 GPU: frequency index 0 (60 W),
	// then 1 (100 W); 1000 iterations at 1 s; the idle GPU draws 50 W.
	j := res.Jobs[0]
	if j.ProfileWindows != 1 || j.Slices != 2 || j.End != 1000000 {
		t.Fatalf("%+v", j)
	}
	if want := hw.Joules(4*60 + 996*100.0); !near(res.JobEnergy, want) || !near(res.IdleEnergy, 1000*50) {
		t.Fatalf("job %v J (want %v), idle %v J", res.JobEnergy, want, res.IdleEnergy)
	}
}

// A job whose work would overflow the millisecond clock, or is not a
// number, is refused before the run (1e300 iterations "finished" at once).
func TestElasticRefusesUnboundedWork(t *testing.T) {
	o := ElasticOptions{Nodes: 1, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50}
	for _, it := range []float64{1e300, math.Inf(1), math.NaN(), MaxElasticIters * 2} {
		jobs := []policy.ElasticJob{{ID: 0, Iters: it, ReqGPUs: 1, MaxGPUs: 2}}
		if _, err := RunElastic(jobs, fakeTruth{}, &scripted{}, o); err == nil {
			t.Errorf("%v iterations accepted", it)
		}
	}
}

// The limit is checked on predicted power, but the result reports the
// power actually drawn: a job predicted at 80 W that draws 100 W on one of
// two GPUs (idle one 50 W) runs 150 W against a 140 W limit for its 10 s.
func TestElasticActualPowerAboveLimit(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Iters: 10, ReqGPUs: 1, MaxGPUs: 2}}
	o := ElasticOptions{Nodes: 1, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, PowerLimit: 140}
	res, err := RunElastic(jobs, fakeTruth{}, &scripted{predW: 80}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxPredicted != 130 || res.MaxActual != 150 || res.AboveLimit != 10000 || !near(res.AboveLimitEnergy, 100) {
		t.Fatalf("predicted %v W, actual %v W, above the limit %d ms / %v J; want 130, 150, 10000, 100",
			res.MaxPredicted, res.MaxActual, res.AboveLimit, res.AboveLimitEnergy)
	}
	// Predicted right: never above.
	if res, err = RunElastic(jobs, fakeTruth{}, &scripted{predW: 100}, ElasticOptions{Nodes: 1, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, PowerLimit: 150}); err != nil || res.AboveLimit != 0 || res.AboveLimitEnergy != 0 {
		t.Fatalf("at the limit: %v, %+v", err, res)
	}
}

// inUse runs every job on its own 1-GPU share of node 0 and powers only the
// nodes in use.
type inUse struct{}

func (inUse) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	var d policy.ElasticDecision
	for i, v := range st.Jobs {
		d.Allocs = append(d.Allocs, policy.ElasticAlloc{Job: v.Job.ID, Nodes: []policy.NodeShare{{Node: i, GPUs: 1}}, FreqIdx: 1})
	}
	d.NodeOn = policy.NodesInUse(d.Allocs, st.Nodes)
	return d
}

// Between the last running job's end and the next arrival the scheduler is
// asked too, so a node without jobs is powered down in the gap: two 10 s
// jobs 100 s apart draw 2 x 10 s x (100 + 50) W, not 90 s of idle more.
func TestElasticPowersDownBetweenJobs(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Iters: 10, ReqGPUs: 1, MaxGPUs: 2}, {ID: 1, Submit: 100000, Iters: 10, ReqGPUs: 1, MaxGPUs: 2}}
	o := ElasticOptions{Nodes: 1, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50, NodesStartOff: true}
	res, err := RunElastic(jobs, fakeTruth{}, inUse{}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !near(res.Energy, 3000) || !near(res.IdleEnergy, 1000) || res.PowerOns != 2 {
		t.Fatalf("energy %v J (idle %v), %d power-ons; want 3000 J (idle 1000), 2", res.Energy, res.IdleEnergy, res.PowerOns)
	}
}
