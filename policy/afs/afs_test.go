package afs

import (
	"testing"

	"github.com/wattsched/wattsched/policy"
)

// speed: job 0 scales perfectly (1/n s per iteration), job 1 not at all
// (1 s at any count); jobs up to their MaxGPUs.
type speed struct{}

func (speed) Predict(v *policy.ElasticView, n, fi int) (float64, float64, bool) {
	if n > v.Job.MaxGPUs {
		return 0, 0, false
	}
	t := 1.0
	if v.Job.ID == 0 {
		t = 1 / float64(n)
	}
	return t, 100 * float64(n) * t, true
}

func counts(d policy.ElasticDecision) map[int]int {
	got := map[int]int{}
	for _, a := range d.Allocs {
		for _, ns := range a.Nodes {
			got[a.Job] += ns.GPUs
		}
	}
	return got
}

// One 8-GPU node, three jobs. Every job gets a first GPU; the five left go
// by doubling to the job whose remaining time falls most per added GPU:
// job 0 (perfect scaling) doubles 1 -> 2 -> 4; job 1 gains nothing and
// stays at 1; job 2 is capped at MaxGPUs 1. A further doubling of job 0 to 8
// needs 4 GPUs and 2 are left: they stay idle.
func TestDoublingByMarginalGain(t *testing.T) {
	p, err := New(Args{}, policy.ElasticDeps{Predictor: speed{}, FreqsMHz: []int{1000, 1400}})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []*policy.ElasticView{
		{Job: &policy.ElasticJob{ID: 0, MaxGPUs: 64}, Remaining: 100},
		{Job: &policy.ElasticJob{ID: 1, MaxGPUs: 64}, Remaining: 100},
		{Job: &policy.ElasticJob{ID: 2, MaxGPUs: 1}, Remaining: 100},
	}
	st := &policy.ElasticState{Jobs: jobs, Nodes: 1, GPUsPerNode: 8, NodeOn: []bool{true}, FreqsMHz: []int{1000, 1400}}
	d := p.ScheduleElastic(st)
	if got := counts(d); got[0] != 4 || got[1] != 1 || got[2] != 1 {
		t.Fatalf("GPUs %v, want job 0: 4, job 1: 1, job 2: 1", got)
	}
	for _, a := range d.Allocs {
		if a.FreqIdx != 1 {
			t.Errorf("job %d at frequency index %d, want the highest", a.Job, a.FreqIdx)
		}
	}
}

// With fewer GPUs than jobs, first GPUs go shortest remaining time first.
func TestFirstGPUsShortestRemainingFirst(t *testing.T) {
	p, _ := New(Args{}, policy.ElasticDeps{Predictor: speed{}, FreqsMHz: []int{1400}})
	jobs := []*policy.ElasticView{
		{Job: &policy.ElasticJob{ID: 0, MaxGPUs: 1}, Remaining: 300},
		{Job: &policy.ElasticJob{ID: 1, MaxGPUs: 1}, Remaining: 50},
		{Job: &policy.ElasticJob{ID: 2, MaxGPUs: 1}, Remaining: 100},
	}
	st := &policy.ElasticState{Jobs: jobs, Nodes: 1, GPUsPerNode: 2, NodeOn: []bool{true}, FreqsMHz: []int{1400}}
	if got := counts(p.ScheduleElastic(st)); got[0] != 0 || got[1] != 1 || got[2] != 1 {
		t.Fatalf("GPUs %v, want jobs 1 and 2 (the shortest) to run", got)
	}
}

func TestNeedsAPredictor(t *testing.T) {
	if _, err := New(Args{}, policy.ElasticDeps{}); err == nil {
		t.Error("AFS without a predictor accepted")
	}
}
