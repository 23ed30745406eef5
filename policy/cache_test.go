package policy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/power"
)

// kindScorer reads more than the demand, as a policy author's scorer
// might: it prefers GPU nodes for training and CPU nodes for the rest, and
// declares it.
type kindScorer struct{}

func (kindScorer) Score(t *job.Task, n *cluster.Node) int64 {
	if (t.Kind == job.Training) == (n.GPU != nil) {
		return 100
	}
	return 0
}

func (kindScorer) TaskReads() policy.TaskFields { return policy.ReadsDemand | policy.ReadsKind }

// mixedCluster has H100, L40S, A100 (no speed: the energy scorer's
// fallback) and CPU-only nodes in repeated shapes.
func mixedCluster() *cluster.Cluster {
	b := clustertest.New()
	shapes := []struct {
		gpus  int
		model string
		cpu   int64
	}{{8, "H100", 96000}, {4, "L40S", 64000}, {2, "A100-PCIe-80GB", 64000}, {0, "", 64000}}
	for i := range 40 {
		s := shapes[i%len(shapes)]
		nb := b.Node(fmt.Sprintf("n%02d", i)).CPU(s.cpu)
		if s.gpus > 0 {
			nb.GPUs(s.gpus, s.model)
		}
	}
	return b.Build()
}

// TestCachedPlacementEqualsUncached is the score cache's contract: for
// random tasks (demand, kind, reference GPU and work drawn independently,
// so that tasks with one demand differ in what else they carry), on a
// cluster whose nodes take and free work and power off and on, a Placer
// with its cache and index places every task exactly where one that
// scores every node afresh does (node, GPUs, total score), and its Top
// and explanation scores agree, for every registered scorer alone and
// random weighted mixes of them, with a scorer that reads the task's kind,
// and with a power gate (which places through the cache but not the index).
func TestCachedPlacementEqualsUncached(t *testing.T) {
	reg := builtin.Registries().Scorers
	var workload []job.Task
	for i, d := range indexClasses {
		for range i + 1 {
			workload = append(workload, job.Task{Demand: d})
		}
	}
	deps := policy.Deps{Catalog: hw.Default(), Power: power.PWR{}, Workload: workload}
	mk := func(name string) policy.Scorer {
		if name == "kind" {
			return kindScorer{}
		}
		s, err := reg.New(name, nil, deps)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	names := append(reg.Names(), "kind")
	var mixes [][]policy.Weighted
	for _, n := range names {
		mixes = append(mixes, []policy.Weighted{{Name: n, Weight: 1}})
	}
	rng := rand.New(rand.NewPCG(37, 3))
	for range 12 {
		var mix []policy.Weighted
		for _, k := range rng.Perm(len(names))[:2+rng.IntN(2)] {
			mix = append(mix, policy.Weighted{Name: names[k], Weight: 1 + rng.Int64N(1000)})
		}
		mixes = append(mixes, mix)
	}
	kinds := []job.Kind{job.Training, job.Inference, job.Training, job.Service}
	refs := []string{"H100", "L40S", "", "H100"}
	for mi, mix := range mixes {
		for _, gated := range []bool{false, true} {
			var label []string
			for _, w := range mix {
				label = append(label, fmt.Sprintf("%s:%d", w.Name, w.Weight))
			}
			t.Run(fmt.Sprintf("%v/gate=%v", label, gated), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(mi), 11))
				build := func() *policy.Placer {
					ws := make([]policy.Weighted, len(mix))
					for i, w := range mix {
						ws[i] = policy.Weighted{Name: w.Name, Scorer: mk(w.Name), Weight: w.Weight}
					}
					p, err := policy.NewPlacer(nil, ws)
					if err != nil {
						t.Fatal(err)
					}
					if gated { // a limit no placement reaches: the gate only routes Place past the index
						p.SetGate(&policy.PowerGate{Limit: 1e9, Model: power.PWR{}})
					}
					return p
				}
				c := mixedCluster()
				cached, fresh := build(), build()
				fresh.Uncached()
				var placed []*job.Task
				for step := range 1500 {
					d := indexClasses[rng.IntN(len(indexClasses)-2)] // no model constraint the cluster lacks
					task := &job.Task{ID: job.ID(step), Demand: d, Kind: kinds[rng.IntN(len(kinds))], RefGPU: refs[rng.IntN(len(refs))], Work: float64(rng.IntN(4) * 600)}
					got, gok := cached.Place(task, c)
					want, wok := fresh.Place(task, c)
					if gok != wok || !cmp.Equal(want, got) {
						t.Fatalf("step %d, task %+v: cached %+v %v, uncached %+v %v", step, task, got, gok, want, wok)
					}
					if step%50 == 0 {
						gt, gs, _ := cached.Top(task, c)
						wt, ws, _ := fresh.Top(task, c)
						if gs != ws || !cmp.Equal(wt, gt) {
							t.Fatalf("step %d: Top cached %v %d, uncached %v %d", step, gt, gs, wt, ws)
						}
					}
					switch r := rng.IntN(10); {
					case r < 6 && gok:
						if err := c.Allocate(task, got.Node, got.GPUs); err != nil {
							t.Fatal(err)
						}
						placed = append(placed, task)
					case r < 9 && len(placed) > 0:
						k := rng.IntN(len(placed))
						if err := c.Release(placed[k]); err != nil {
							t.Fatal(err)
						}
						placed = append(placed[:k], placed[k+1:]...)
					default:
						n := c.Nodes[rng.IntN(len(c.Nodes))]
						switch {
						case n.State == cluster.On && !n.Used():
							_ = c.SetState(n.ID, cluster.Off)
						case n.State == cluster.Off:
							_ = c.SetState(n.ID, cluster.On)
						}
					}
				}
				if h, m := cached.CacheStats(); h == 0 {
					t.Errorf("the cached placer reused no score (%d scored): the test compares nothing", m)
				}
				if h, _ := fresh.CacheStats(); h != 0 {
					t.Errorf("the uncached placer reused %d scores", h)
				}
			})
		}
	}
}

// A scorer that declares nothing of what it reads is never cached.
func TestUndeclaredScorerIsNotCached(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").Build()
	type undeclared struct{ kindScorer }
	p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "u", Scorer: struct{ policy.Scorer }{undeclared{}}, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []job.Kind{job.Training, job.Inference, job.Training} {
		d, ok := p.Place(&job.Task{ID: job.ID(i), Kind: k, Demand: job.Demand{CPUMilli: 1000}}, c)
		// Training prefers the GPU node a (0), the rest the CPU node b (1).
		if want := cluster.NodeID(map[job.Kind]int{job.Training: 0, job.Inference: 1}[k]); !ok || d.Node != want {
			t.Errorf("%s task on %d, want %d", k, d.Node, want)
		}
	}
	if h, m := p.CacheStats(); h != 0 || m != 0 {
		t.Errorf("cache hits %d misses %d, want none: an undeclared scorer is not cached", h, m)
	}
}

// workScorer prefers node a for short tasks and declares that it reads the
// task's work.
type workScorer struct{}

func (workScorer) Score(t *job.Task, n *cluster.Node) int64 {
	if (t.Work < 100) == (n.ID == 0) {
		return 100
	}
	return 0
}

func (workScorer) TaskReads() policy.TaskFields { return policy.ReadsDemand | policy.ReadsWork }

// A scorer that reads the work makes each task a class of its own: past
// MaxClasses classes the Placer scores afresh (no cache row, the same
// decisions) instead of growing its cache without bound.
func TestCacheClassesAreBounded(t *testing.T) {
	c := clustertest.New().Node("a").Node("b").Build()
	p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "w", Scorer: workScorer{}, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	place := func(work float64) {
		d, ok := p.Place(&job.Task{Demand: job.Demand{CPUMilli: 1000}, Work: work}, c)
		if want := cluster.NodeID(map[bool]int{true: 0, false: 1}[work < 100]); !ok || d.Node != want {
			t.Fatalf("work %v on %d, want %d", work, d.Node, want)
		}
	}
	for i := range policy.MaxClasses {
		place(float64(i))
	}
	h, m := p.CacheStats()
	if h != 0 || m != 2*policy.MaxClasses {
		t.Fatalf("after %d classes: hits %d misses %d, want 0 and %d", policy.MaxClasses, h, m, 2*policy.MaxClasses)
	}
	place(-1) // a new class past the bound: scored, not cached
	place(5)  // a cached class: both nodes reused
	h2, m2 := p.CacheStats()
	if h2 != 2 || m2 != m {
		t.Errorf("past the bound: hits %d misses %d, want 2 and %d", h2, m2, m)
	}
}
