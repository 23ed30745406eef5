package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// fixed scores node i with scores[i].
type fixed []int64

func (f fixed) Score(_ *job.Task, n *cluster.Node) int64 { return f[n.ID] }

type normalized struct{ fixed }

func (normalized) Normalize(s []int64) { policy.MinMaxNormalize(s, policy.MaxScore) }

func TestPlacerWeightsNormalisationAndTies(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Node("c").GPUs(1, "T4").Build()
	task := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}}
	cases := []struct {
		name    string
		scorers []policy.Weighted
		rank    []int
		want    cluster.NodeID
	}{
		// a: 1x90, b: 1x50, c: 1x90 -> tie a/c, lowest ID: a.
		{"tie by id", []policy.Weighted{{Name: "f", Scorer: fixed{90, 50, 90}, Weight: 1}}, nil, 0},
		// Same scores, ranks make c win the tie.
		{"tie by rank", []policy.Weighted{{Name: "f", Scorer: fixed{90, 50, 90}, Weight: 1}}, []int{2, 1, 0}, 2},
		// Normalised raw -300,-100,-200 -> 0,100,50 weighted 10; plus fixed 60,0,10 weighted 90:
		// a = 0 + 5400 = 5400, b = 1000 + 0 = 1000, c = 500 + 900 = 1400 -> a.
		{"weighted sum", []policy.Weighted{
			{Name: "n", Scorer: normalized{fixed{-300, -100, -200}}, Weight: 10},
			{Name: "f", Scorer: fixed{60, 0, 10}, Weight: 90}}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := policy.NewPlacer(nil, tc.scorers)
			if err != nil {
				t.Fatal(err)
			}
			p.SetRank(tc.rank)
			d, ok := p.Place(task, c)
			if !ok || d.Node != tc.want {
				t.Fatalf("Place = %+v %v, want node %d", d, ok, tc.want)
			}
			if !cmp.Equal(d.GPUs, []int{0}) {
				t.Errorf("GPUs = %v, want best-fit [0]", d.GPUs)
			}
		})
	}
}

func TestPlacerCacheFollowsNodeVersions(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Build()
	p, _ := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 5}, Weight: 1}})
	task := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	if d, _ := p.Place(task, c); d.Node != 0 {
		t.Fatalf("first placement on %d", d.Node)
	}
	if err := c.Allocate(task, 0, []int{0}); err != nil {
		t.Fatal(err)
	}
	// Node a changed (version bump): the cached "feasible" must not be reused.
	second := &job.Task{ID: 2, Class: 0, Demand: task.Demand}
	if d, ok := p.Place(second, c); !ok || d.Node != 1 {
		t.Fatalf("second placement = %+v %v, want node 1", d, ok)
	}
	if h, m := p.CacheStats(); h != 1 || m != 3 {
		t.Errorf("cache hits %d misses %d, want 1 and 3", h, m)
	}
}

func TestPlacerTop(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Node("c").GPUs(1, "T4").Build()
	task := &job.Task{ID: 1, Class: -1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}}
	p, _ := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{90, 50, 90}, Weight: 2}})
	top, score, ok := p.Top(task, c)
	if !ok || score != 180 || !cmp.Equal(top, []cluster.NodeID{0, 2}) {
		t.Fatalf("Top = %v %d %v, want [0 2] 180", top, score, ok)
	}
	if d, _ := p.Place(task, c); d.Node != top[0] || d.Score != score {
		t.Errorf("Place = %+v, want the first of Top", d)
	}
	if g := p.SelectGPUs(task, c.Nodes[2]); !cmp.Equal(g, []int{0}) {
		t.Errorf("SelectGPUs = %v", g)
	}
	big := &job.Task{ID: 2, Class: -1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 2, GPUMilli: 1000}}
	if _, _, ok := p.Top(big, c); ok {
		t.Error("Top found a node for 2 GPUs on 1-GPU nodes")
	}
}
