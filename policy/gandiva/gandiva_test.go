package gandiva

import (
	"testing"

	"github.com/wattsched/wattsched/policy"
)

func view(id, req int, running []policy.NodeShare) *policy.ElasticView {
	v := &policy.ElasticView{Job: &policy.ElasticJob{ID: id, ReqGPUs: req, MaxGPUs: 64}}
	for _, ns := range running {
		v.GPUs += ns.GPUs
	}
	v.Nodes = running
	return v
}

func gpus(a policy.ElasticAlloc) int {
	n := 0
	for _, ns := range a.Nodes {
		n += ns.GPUs
	}
	return n
}

// Two 8-GPU nodes. Job 0 runs on 4 GPUs of node 0 and is not moved; job 1
// (8 GPUs) takes node 1; job 2 (8 GPUs) does not fit but does not block
// job 3 (4 GPUs), which packs onto node 0. All at the fixed frequency; the
// used nodes stay on.
func TestInOrderWithoutBlockingOrMoving(t *testing.T) {
	p, err := New(Args{FixedFreq: policy.FixedFreq{FreqMHz: 1200}}, policy.ElasticDeps{FreqsMHz: []int{1000, 1200, 1400}})
	if err != nil {
		t.Fatal(err)
	}
	st := &policy.ElasticState{Nodes: 2, GPUsPerNode: 8, NodeOn: []bool{true, true}, FreqsMHz: []int{1000, 1200, 1400},
		Jobs: []*policy.ElasticView{view(0, 4, []policy.NodeShare{{Node: 0, GPUs: 4}}), view(1, 8, nil), view(2, 8, nil), view(3, 4, nil)}}
	d := p.ScheduleElastic(st)
	got := map[int]policy.ElasticAlloc{}
	for _, a := range d.Allocs {
		got[a.Job] = a
		if a.FreqIdx != 1 {
			t.Errorf("job %d at frequency index %d, want 1 (1200 MHz)", a.Job, a.FreqIdx)
		}
		if a.Profile {
			t.Errorf("job %d profiled: Gandiva does not profile", a.Job)
		}
	}
	if a, ok := got[0]; !ok || len(a.Nodes) != 1 || a.Nodes[0] != (policy.NodeShare{Node: 0, GPUs: 4}) {
		t.Errorf("running job 0 moved or stopped: %+v", got[0])
	}
	if a, ok := got[1]; !ok || gpus(a) != 8 || a.Nodes[0].Node != 1 {
		t.Errorf("job 1: %+v, want all of node 1", got[1])
	}
	if _, ok := got[2]; ok {
		t.Errorf("job 2 placed with no 8 free GPUs: %+v", got[2])
	}
	if a, ok := got[3]; !ok || gpus(a) != 4 || a.Nodes[0].Node != 0 {
		t.Errorf("job 3: %+v, want the 4 free GPUs of node 0 (not blocked by job 2)", got[3])
	}
	if len(d.NodeOn) != 2 || !d.NodeOn[0] || !d.NodeOn[1] {
		t.Errorf("NodeOn %v, want both used nodes on", d.NodeOn)
	}
	// Never elastic: the requested count, not more, even on an empty cluster.
	d = p.ScheduleElastic(&policy.ElasticState{Nodes: 2, GPUsPerNode: 8, NodeOn: []bool{true, true}, FreqsMHz: []int{1000, 1200, 1400},
		Jobs: []*policy.ElasticView{view(0, 2, nil)}})
	if len(d.Allocs) != 1 || gpus(d.Allocs[0]) != 2 {
		t.Errorf("alone on the cluster: %+v, want its 2 requested GPUs", d.Allocs)
	}
	if d.NodeOn[0] == d.NodeOn[1] {
		t.Errorf("NodeOn %v: the node without jobs must be off", d.NodeOn)
	}
}

func TestArgs(t *testing.T) {
	if _, err := New(Args{FixedFreq: policy.FixedFreq{FreqMHz: 1300}}, policy.ElasticDeps{FreqsMHz: []int{1000, 1400}}); err == nil {
		t.Error("an unsupported frequency accepted")
	}
	if (Args{FixedFreq: policy.FixedFreq{FreqMHz: -1}}).Validate() == nil {
		t.Error("a negative frequency accepted")
	}
}

// Two 8-GPU nodes, each half used by a 4-GPU job: an 8-GPU job does not fit
// Gandiva's own placement (running jobs never move), but with PowerFlow's
// placement (packed_placement) job 1 moves next to job 0 and job 2 takes
// node 1. With keep_idle_nodes_on every node stays powered (nil NodeOn).
func TestPackedPlacementAndIdleNodes(t *testing.T) {
	st := func() *policy.ElasticState {
		return &policy.ElasticState{Nodes: 2, GPUsPerNode: 8, NodeOn: []bool{true, true}, FreqsMHz: []int{1000, 1400},
			Jobs: []*policy.ElasticView{view(0, 4, []policy.NodeShare{{Node: 0, GPUs: 4}}), view(1, 4, []policy.NodeShare{{Node: 1, GPUs: 4}}), view(2, 8, nil)}}
	}
	own, err := New(Args{}, policy.ElasticDeps{FreqsMHz: []int{1000, 1400}})
	if err != nil {
		t.Fatal(err)
	}
	if d := own.ScheduleElastic(st()); len(d.Allocs) != 2 {
		t.Fatalf("own placement: %+v, want jobs 0 and 1 in place and job 2 waiting", d.Allocs)
	}
	packed, err := New(Args{FixedFreq: policy.FixedFreq{PackedPlacement: true, KeepIdleNodesOn: true}}, policy.ElasticDeps{FreqsMHz: []int{1000, 1400}})
	if err != nil {
		t.Fatal(err)
	}
	d := packed.ScheduleElastic(st())
	if len(d.Allocs) != 3 || d.NodeOn != nil {
		t.Fatalf("packed: %+v (NodeOn %v), want all three jobs and every node on", d.Allocs, d.NodeOn)
	}
	per := map[int]int{}
	for _, a := range d.Allocs {
		for _, ns := range a.Nodes {
			per[ns.Node] += ns.GPUs
		}
		if a.Job == 2 && gpus(a) != 8 {
			t.Errorf("job 2 on %d GPUs", gpus(a))
		}
	}
	if per[0] != 8 || per[1] != 8 {
		t.Errorf("GPUs per node %v, want both nodes full", per)
	}
}
