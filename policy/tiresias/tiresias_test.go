package tiresias

import (
	"testing"

	"github.com/wattsched/wattsched/policy"
)

func TestLeastAttainedServiceFirst(t *testing.T) {
	p, err := New(Args{ThresholdsGPUSec: []float64{3600}}, policy.ElasticDeps{FreqsMHz: []int{1000, 1400}})
	if err != nil {
		t.Fatal(err)
	}
	// One 8-GPU node. Job 0 runs on 8 GPUs with 2 GPU-hours attained
	// (queue 1); job 1 arrives later with none (queue 0): it preempts job 0.
	old := &policy.ElasticView{Job: &policy.ElasticJob{ID: 0, ReqGPUs: 8, MaxGPUs: 8}, GPUs: 8,
		Nodes: []policy.NodeShare{{Node: 0, GPUs: 8}}, AttainedGPUms: 2 * 3600e3, Started: true}
	young := &policy.ElasticView{Job: &policy.ElasticJob{ID: 1, Submit: 10, ReqGPUs: 4, MaxGPUs: 8}}
	st := &policy.ElasticState{Jobs: []*policy.ElasticView{old, young}, Nodes: 1, GPUsPerNode: 8, FreqsMHz: []int{1000, 1400}}
	d := p.ScheduleElastic(st)
	if len(d.Allocs) != 1 || d.Allocs[0].Job != 1 || d.Allocs[0].FreqIdx != 1 {
		t.Fatalf("allocations %+v, want only job 1 at the top frequency", d.Allocs)
	}
	// Job 1 crosses 3600 GPU-s after 3600/4 = 900 s on 4 GPUs: wake then.
	if d.WakeAt != 900000 {
		t.Fatalf("wake at %d ms, want 900000", d.WakeAt)
	}
}
