package plugins

import (
	"context"
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/dotprod"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/policy/gpuclustering"
	"github.com/wattsched/wattsched/policy/gpupacking"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// stateKey must cover every field of cluster.Node a scorer could read: a
// field added to cluster.Node fails here until stateKey covers it (and
// it is added to the list).
func TestStateKeyCoversNode(t *testing.T) {
	covered := []string{"GPUModel", "GPU", "CPU", "CPUMilli", "MemMiB", "FreeCPUMilli", "FreeMemMiB", "GPUFree", "State", "Affinity", "Tasks"}
	identity := []string{"ID", "Name", "Version"}
	rt := reflect.TypeOf(cluster.Node{})
	for i := range rt.NumField() {
		f := rt.Field(i).Name
		if !slices.Contains(covered, f) && !slices.Contains(identity, f) {
			t.Errorf("cluster.Node.%s is not in stateKey", f)
		}
	}
	// Each covered field changes the key; the identity fields do not.
	base := func() *cluster.Node {
		c, err := cluster.New(hw.Default(), []cluster.NodeSpec{{Name: "a", CPUMilli: 8000, MemMiB: 1024, GPUs: 2, GPUModel: "T4"}})
		if err != nil {
			t.Fatal(err)
		}
		return c.Nodes[0]
	}
	k0 := stateKey(base())
	for name, change := range map[string]func(n *cluster.Node){
		"GPUModel": func(n *cluster.Node) { n.GPUModel = "X" },
		"GPU":      func(n *cluster.Node) { g := *n.GPU; g.TDPW++; n.GPU = &g },
		"CPU":      func(n *cluster.Node) { c := *n.CPU; c.IdleW++; n.CPU = &c },
		"CPUMilli": func(n *cluster.Node) { n.CPUMilli++ }, "MemMiB": func(n *cluster.Node) { n.MemMiB++ },
		"FreeCPUMilli": func(n *cluster.Node) { n.FreeCPUMilli-- }, "FreeMemMiB": func(n *cluster.Node) { n.FreeMemMiB-- },
		"GPUFree": func(n *cluster.Node) { n.GPUFree[1] = 500 }, "State": func(n *cluster.Node) { n.State = cluster.Off },
		"Affinity": func(n *cluster.Node) { n.Affinity[1] = 1 }, "Tasks": func(n *cluster.Node) { n.Tasks = 1 },
	} {
		n := base()
		change(n)
		if stateKey(n) == k0 {
			t.Errorf("changing %s leaves the key unchanged", name)
		}
	}
	n := base()
	n.ID, n.Name, n.Version = 7, "other", 9
	if stateKey(n) != k0 {
		t.Error("the node's identity changes the key")
	}
}

// counting counts the scorer's calls.
type counting struct {
	policy.Scorer
	calls int
}

func (c *counting) Score(t *job.Task, n *cluster.Node) int64 { c.calls++; return c.Scorer.Score(t, n) }

// Every score plugin returns, for every node, the core scorer's score of
// that node (computed here on a model built apart, by a scorer of its
// own), while calling the scorer once per distinct node state: the 40
// nodes of cycleNodes are in 10 states (G2 and T4 nodes with 0-3 pods,
// V100M32 nodes, every tenth, with 1 or 3).
func TestStateScoresMatchScorers(t *testing.T) {
	workload, err := alibaba2023.Pods("default")
	if err != nil {
		t.Fatal(err)
	}
	mk := map[string]func() policy.Scorer{
		PWRName: func() policy.Scorer { p, _ := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}}); return p },
		FGDName: func() policy.Scorer {
			p, err := fgd.New(fgd.Args{}.Default(), policy.Deps{Workload: workload})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		BestFitName:       func() policy.Scorer { return bestfit.Policy{} },
		DotProdName:       func() policy.Scorer { return dotprod.Policy{} },
		GpuPackingName:    func() policy.Scorer { p, _ := gpupacking.New(gpupacking.Args{}, policy.Deps{}); return p },
		GpuClusteringName: func() policy.Scorer { return gpuclustering.Policy{} },
	}
	nodes, bound := cycleNodes(40)
	for name, newScorer := range mk {
		t.Run(name, func(t *testing.T) {
			c := &counting{Scorer: newScorer()}
			var plugin *Score
			factory := func(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
				plugin = newScore(name, h, c, false)
				return plugin, nil
			}
			e := envWith(t, fake.NewClientset(), nodes, bound, append(gpuPlugin(GPUArgs{}),
				tf.RegisterPluginAsExtensions(name, factory, "PreScore", "Score"))...)
			oracle := newScorer()
			for _, p := range []*v1.Pod{pod("share", 4000, 470, nil), pod("whole", 4000, 2000, nil), pod("cpu", 4000, 0, nil)} {
				state := framework.NewCycleState()
				if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
					t.Fatal(st)
				}
				c.calls = 0
				if st := plugin.PreScore(context.Background(), state, p, e.nodes); !st.IsSuccess() {
					t.Fatal(st)
				}
				if c.calls != 10 {
					t.Errorf("%s: %d scorer calls for 40 nodes in 10 states", p.Name, c.calls)
				}
				d, err := gpushare.Demand(p)
				if err != nil {
					t.Fatal(err)
				}
				task := job.Task{Demand: d, Class: -1}
				for _, ni := range e.nodes {
					got, st := plugin.Score(context.Background(), state, p, ni)
					if !st.IsSuccess() {
						t.Fatal(st)
					}
					var allocs []gpushare.Allocation
					for _, pi := range ni.GetPods() {
						gpus, _, _ := gpushare.GPUIndex(pi.GetPod())
						allocs = append(allocs, gpushare.Allocation{Pod: pi.GetPod(), GPUs: gpus})
					}
					n, _, err := gpushare.BuildNode(hw.Default(), ni.Node(), allocs)
					if err != nil {
						t.Fatal(err)
					}
					if want := oracle.Score(&task, n); got != want {
						t.Errorf("%s on %s: plugin %d, scorer %d", p.Name, ni.Node().Name, got, want)
					}
				}
			}
		})
	}
}
