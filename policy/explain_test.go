package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

func TestPlacerExplanation(t *testing.T) {
	// Nodes a, b, e (T4), c (P100), d (no GPU: filtered out).
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Node("c").GPUs(1, "P100").
		Node("d").Node("e").GPUs(1, "T4").Build()
	task := &job.Task{ID: 1, Class: -1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}}
	// n's raw scores over the feasible a, b, c, e: -300, -100, -200, -150,
	// normalised (s - -300) * 100 / 200: a 0, b 100, c 50, e 75.
	// f's are not normalised: a 60, b 10, c 0, e 5.
	// Totals (weights 10 and 90): a 10*0 + 90*60 = 5400; b 1000 + 900 = 1900;
	// c 500 + 0 = 500; e 750 + 450 = 1200. Order a, b, e, c.
	// With one runner-up: a (rank 1), b (rank 2), then the best P100,
	// c (rank 4); e is a T4 like a and b. d: "no GPUs".
	scorers := []policy.Weighted{
		{Name: "n", Scorer: normalized{fixed{-300, -100, -200, 0, -150}}, Weight: 10},
		{Name: "f", Scorer: fixed{60, 10, 0, 0, 5}, Weight: 90},
	}
	p, err := policy.NewPlacer(nil, scorers)
	if err != nil {
		t.Fatal(err)
	}
	x := &policy.Explanation{Top: 1}
	p.SetExplain(x)
	d, ok := p.Place(task, c)
	if !ok || d.Node != 0 {
		t.Fatalf("Place = %+v %v, want node a", d, ok)
	}
	want := []policy.NodeScore{
		{Node: 0, Rank: 1, Raw: []int64{-300, 60}, Score: []int64{0, 60}, Total: 5400},
		{Node: 1, Rank: 2, Raw: []int64{-100, 10}, Score: []int64{100, 10}, Total: 1900},
		{Node: 2, Rank: 4, Raw: []int64{-200, 0}, Score: []int64{50, 0}, Total: 500},
	}
	if diff := cmp.Diff(want, x.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]policy.FilterCount{{Reason: "no GPUs", Nodes: 1}}, x.Filtered); diff != "" {
		t.Errorf("filtered (-want +got):\n%s", diff)
	}
	if x.Feasible != 4 {
		t.Errorf("feasible = %d, want 4", x.Feasible)
	}
}

func TestExplainingChangesNoDecision(t *testing.T) {
	// Ties everywhere (one scorer, equal scores) and a seeded rank: the
	// explained and the plain Placer must place every task on the same
	// node, and the explanation's chosen node is the placement.
	build := func() *cluster.Cluster {
		b := clustertest.New()
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			b.Node(n).GPUs(2, "T4")
		}
		return b.Build()
	}
	plain, explained := build(), build()
	scorers := []policy.Weighted{{Name: "n", Scorer: normalized{fixed{1, 1, 2, 2, 1, 1}}, Weight: 1}}
	pp, _ := policy.NewPlacer(nil, scorers)
	pe, _ := policy.NewPlacer(nil, scorers)
	rank := []int{5, 3, 4, 0, 1, 2}
	pp.SetRank(rank)
	pe.SetRank(rank)
	x := &policy.Explanation{}
	pe.SetExplain(x)
	for id := range 12 {
		task := &job.Task{ID: job.ID(id), Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
		d1, ok1 := pp.Place(task, plain)
		d2, ok2 := pe.Place(task, explained)
		if ok1 != ok2 || !cmp.Equal(d1, d2) {
			t.Fatalf("task %d: plain %+v %v, explained %+v %v", id, d1, ok1, d2, ok2)
		}
		if !ok1 {
			t.Fatalf("task %d: no node", id)
		}
		if x.Nodes[0].Node != d2.Node || x.Nodes[0].Total != d2.Score {
			t.Errorf("task %d: explanation chose %+v, placement %+v", id, x.Nodes[0], d2)
		}
		for _, c := range []*cluster.Cluster{plain, explained} {
			if err := c.Allocate(task, d1.Node, d1.GPUs); err != nil {
				t.Fatal(err)
			}
		}
	}
}
