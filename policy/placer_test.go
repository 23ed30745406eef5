package policy_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// fixed scores node i with scores[i].
type fixed []int64

func (f fixed) Score(_ *job.Task, n *cluster.Node) int64 { return f[n.ID] }

// TaskReads implements policy.TaskReader: fixed reads nothing of a task
// (declaring the demand keeps it cached).
func (fixed) TaskReads() policy.TaskFields { return policy.ReadsDemand }

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

// The power gate filters nodes as kube-scheduler's PowerBudget does. Nodes
// a (1 T4) and b (1 V100) have one 32-vCPU Xeon socket each: idle
// 15 + 10 = 25 W and 15 + 30 = 45 W, 70 W in all. A task with one vCPU and
// one whole GPU adds (120-15) + (70-10) = 165 W on a, 105 + (300-30) = 375 W
// on b; the scorer prefers b.
func TestPlacerPowerGate(t *testing.T) {
	task := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	cases := []struct {
		name  string
		limit power.Limit
		want  cluster.NodeID
		held  bool
	}{
		{"no limit", 0, 1, false},
		{"b just fits: 70 + 375 = 445", 445, 1, false},
		{"b over, a fits: 70 + 165 = 235 <= 400", 400, 0, false},
		{"neither: 235 > 200", 200, -1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
			p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 90}, Weight: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.limit > 0 {
				p.SetGate(&policy.PowerGate{Limit: tc.limit, Model: power.PWR{}})
			}
			d, ok := p.Place(task, c)
			if got := cluster.NodeID(-1); ok {
				got = d.Node
				if got != tc.want {
					t.Fatalf("placed on %d, want %d", got, tc.want)
				}
			} else if tc.want >= 0 {
				t.Fatalf("not placed, want node %d", tc.want)
			}
			if p.Held() != tc.held {
				t.Errorf("held = %v, want %v", p.Held(), tc.held)
			}
		})
	}
}

// Under a power limit, Online admits in arrival order: a task waiting for
// power holds the ones behind it (replay), and is rejected in inflation,
// where power never frees up. Same nodes as above; limit 200 W: the GPU
// task needs 70 + 165 = 235 W, a 1-vCPU task alone 70 + 105 = 175 W.
func TestOnlineWaitsForPowerInOrder(t *testing.T) {
	big := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	small := &job.Task{ID: 2, Class: 1, Demand: job.Demand{CPUMilli: 1000}}
	// Idle cluster: T4 10 + V100 30 + two sockets 15 = 70 W. A running
	// CPU task on b wakes its socket: 175 W. big adds 165 W on a (T4 to
	// 70 W, the socket to 120 W): 340 W > 250 W, but 235 W on an idle
	// cluster, so it waits for power (replay) and blocks small.
	for _, inflation := range []bool{false, true} {
		c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
		run := &job.Task{ID: 9, Class: 2, Demand: job.Demand{CPUMilli: 1000}}
		if err := c.Allocate(run, 1, nil); err != nil {
			t.Fatal(err)
		}
		p, _ := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 90}, Weight: 1}})
		o := &policy.Online{Placer: p}
		st := &policy.State{Cluster: c, Queue: []*job.Task{big, small}, PowerLimit: 250, Power: power.PWR{}, Inflation: inflation}
		got := o.Schedule(st)
		var want []policy.Action
		if inflation {
			want = []policy.Action{policy.Reject{Task: 1, Reason: "over the power limit on every node where it fits"}}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("inflation %v (-want +got):\n%s", inflation, diff)
		}
	}
}

// A task that could not start even on an idle cluster is rejected in
// replay too, instead of blocking every task behind it forever.
func TestOnlineRejectsWhatNeverFitsTheLimit(t *testing.T) {
	big := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	small := &job.Task{ID: 2, Class: 1, Demand: job.Demand{CPUMilli: 1000}}
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
	p, _ := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 90}, Weight: 1}})
	o := &policy.Online{Placer: p}
	// 70 W idle + 165 W at least for big = 235 W > 200 W.
	st := &policy.State{Cluster: c, Queue: []*job.Task{big, small}, PowerLimit: 200, Power: power.PWR{}}
	got := o.Schedule(st)
	if len(got) != 2 {
		t.Fatalf("actions %+v, want big rejected and small started", got)
	}
	if r, ok := got[0].(policy.Reject); !ok || r.Task != 1 || !strings.Contains(r.Reason, "can never be admitted") {
		t.Errorf("first action %+v", got[0])
	}
	if s, ok := got[1].(policy.Start); !ok || s.Task != 2 {
		t.Errorf("second action %+v", got[1])
	}
}
