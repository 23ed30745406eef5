package policy_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/dotprod"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/policy/gpuclustering"
	"github.com/wattsched/wattsched/policy/gpupacking"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
)

// indexClasses are the task classes of the index tests: shared GPUs, whole
// GPUs, CPU only, a model constraint, and a class that rarely fits.
var indexClasses = []job.Demand{
	{CPUMilli: 4000, MemMiB: 8192, GPUCount: 1, GPUMilli: 250},
	{CPUMilli: 8000, MemMiB: 16384, GPUCount: 1, GPUMilli: 500},
	{CPUMilli: 2000, MemMiB: 4096, GPUCount: 1, GPUMilli: 1000},
	{CPUMilli: 16000, MemMiB: 32768, GPUCount: 2, GPUMilli: 1000},
	{CPUMilli: 6000, MemMiB: 8192},
	{CPUMilli: 1000, MemMiB: 2048, GPUCount: 1, GPUMilli: 700, GPUSpec: []string{"T4", "P100"}},
	{CPUMilli: 30000, MemMiB: 65536, GPUCount: 8, GPUMilli: 1000},
}

// indexCluster has repeated node shapes, so that many nodes tie.
func indexCluster() *cluster.Cluster {
	b := clustertest.New()
	models := []struct {
		gpus  int
		model string
		cpu   int64
	}{{8, "G2", 96000}, {1, "T4", 32000}, {4, "V100M16", 64000}, {2, "P100", 64000}, {0, "", 64000}}
	for i := range 120 {
		m := models[i%len(models)]
		nb := b.Node(fmt.Sprintf("n%02d", i)).CPU(m.cpu)
		if m.gpus > 0 {
			nb.GPUs(m.gpus, m.model)
		}
	}
	return b.Build()
}

type scorerMaker func(workload []job.Task) policy.Scorer

var indexScorers = map[string]scorerMaker{
	"fgd": func(w []job.Task) policy.Scorer {
		p, err := fgd.New(fgd.Args{}.Default(), policy.Deps{Workload: w})
		if err != nil {
			panic(err)
		}
		return p
	},
	"pwr": func([]job.Task) policy.Scorer {
		p, _ := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}})
		return p
	},
	"bestfit":       func([]job.Task) policy.Scorer { return bestfit.Policy{} },
	"dotprod":       func([]job.Task) policy.Scorer { return dotprod.Policy{} },
	"gpupacking":    func([]job.Task) policy.Scorer { p, _ := gpupacking.New(gpupacking.Args{}, policy.Deps{}); return p },
	"gpuclustering": func([]job.Task) policy.Scorer { return gpuclustering.Policy{} },
}

// TestIndexedPlaceEqualsScan is the index's invariant: placing through the
// index gives the decision of scoring every node (a Placer with neither
// cache nor index), node, GPUs and
// total score, for every single scorer and weighted mixes, with ties by
// node ID or by a rank with repeats, while tasks start and end and nodes
// power off and on.
func TestIndexedPlaceEqualsScan(t *testing.T) {
	var workload []job.Task
	for i, d := range indexClasses {
		for range i + 1 {
			workload = append(workload, job.Task{Demand: d})
		}
	}
	mixes := []map[string]int64{
		{"fgd": 1}, {"pwr": 1}, {"bestfit": 1}, {"dotprod": 1}, {"gpupacking": 1}, {"gpuclustering": 1},
		{"pwr": 100, "fgd": 900}, {"pwr": 200, "fgd": 800},
		{"bestfit": 3, "pwr": 7}, {"fgd": 5, "gpuclustering": 2}, {"dotprod": 1, "bestfit": 1, "pwr": 1, "fgd": 1},
	}
	for mi, mix := range mixes {
		for _, ranked := range []bool{false, true} {
			name := fmt.Sprintf("%v/ranked=%v", mix, ranked)
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(mi), 7))
				build := func() *policy.Placer {
					var ws []policy.Weighted
					for _, k := range []string{"bestfit", "dotprod", "fgd", "gpuclustering", "gpupacking", "pwr"} {
						if w, ok := mix[k]; ok {
							ws = append(ws, policy.Weighted{Name: k, Scorer: indexScorers[k](workload), Weight: w})
						}
					}
					p, err := policy.NewPlacer(nil, ws)
					if err != nil {
						t.Fatal(err)
					}
					return p
				}
				c := indexCluster()
				indexed, scan := build(), build()
				scan.Uncached()
				if ranked {
					rank := make([]int, len(c.Nodes))
					for i := range rank {
						rank[i] = rng.IntN(8) // repeats: ties on rank fall to the node index
					}
					indexed.SetRank(rank)
					scan.SetRank(rank)
				}
				var placed []*job.Task
				id := job.ID(0)
				for step := range 3000 {
					// Class 6 (8 GPUs) is asked for rarely, so that the
					// cluster's change record no longer reaches back to
					// its last placement.
					ci := rng.IntN(len(indexClasses) - 1)
					if rng.IntN(200) == 0 {
						ci = len(indexClasses) - 1
					}
					id++
					task := &job.Task{ID: id, Class: ci, Demand: indexClasses[ci]}
					plain := &job.Task{ID: id, Class: -1, Demand: indexClasses[ci]}
					got, gok := indexed.Place(task, c)
					want, wok := scan.Place(plain, c)
					if gok != wok || !cmp.Equal(want, got) {
						t.Fatalf("step %d, class %d: indexed %+v %v, scan %+v %v", step, ci, got, gok, want, wok)
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
				if h, m := indexed.CacheStats(); m >= h {
					t.Errorf("the index scored %d nodes and reused %d: it should mostly reuse", m, h)
				}
			})
		}
	}
}

// A mix re-keys its class only when an extreme of a normalised score
// moves; a single scorer never does.
func TestIndexRekeysOnlyMixes(t *testing.T) {
	c := indexCluster()
	task := func(id job.ID) *job.Task {
		return &job.Task{ID: id, Class: 0, Demand: indexClasses[0]}
	}
	run := func(ws []policy.Weighted) int64 {
		p, err := policy.NewPlacer(nil, ws)
		if err != nil {
			t.Fatal(err)
		}
		c := indexCluster()
		for id := job.ID(1); id < 200; id++ {
			d, ok := p.Place(task(id), c)
			if !ok {
				break
			}
			if err := c.Allocate(task(id), d.Node, d.GPUs); err != nil {
				t.Fatal(err)
			}
		}
		return p.Rekeys()
	}
	_ = c
	pw := func() policy.Scorer { return indexScorers["pwr"](nil) }
	if n := run([]policy.Weighted{{Name: "pwr", Scorer: pw(), Weight: 1}}); n != 0 {
		t.Errorf("one scorer re-keyed %d times", n)
	}
	if n := run([]policy.Weighted{{Name: "pwr", Scorer: pw(), Weight: 1}, {Name: "bestfit", Scorer: bestfit.Policy{}, Weight: 1}}); n == 0 {
		t.Error("a mix of two normalised scorers never re-keyed while its extremes moved")
	}
}

// When a class is first placed, the index scores one node of each state:
// nodes alike in everything but one allocation must still be told apart.
// Three identical nodes (32 vCPU, one T4); one allocation on one node; a
// class placed for the first time afterwards with BestFit, which prefers
// the node with the least free CPU plus GPU: the changed node, scored
// once, the two untouched ones scored once for both.
func TestIndexScoresEachStateOnce(t *testing.T) {
	cases := []struct {
		name  string
		taken job.Demand
		on    cluster.NodeID
	}{
		{"free CPU differs", job.Demand{CPUMilli: 8000}, 2},
		{"free GPU differs", job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Node("c").GPUs(1, "T4").Build()
			first := &job.Task{ID: 1, Class: 0, Demand: tc.taken}
			gpus := []int(nil)
			if tc.taken.GPUCount > 0 {
				gpus = []int{0}
			}
			if err := c.Allocate(first, tc.on, gpus); err != nil {
				t.Fatal(err)
			}
			p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "bestfit", Scorer: bestfit.Policy{}, Weight: 1}})
			if err != nil {
				t.Fatal(err)
			}
			task := &job.Task{ID: 2, Class: 1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 250}}
			d, ok := p.Place(task, c)
			if !ok || d.Node != tc.on {
				t.Fatalf("placed on %d (%v), want the node with the allocation, %d", d.Node, ok, tc.on)
			}
			if h, m := p.CacheStats(); h != 1 || m != 2 {
				t.Errorf("scored %d nodes and reused %d, want 2 and 1 (two states)", m, h)
			}
		})
	}
}
