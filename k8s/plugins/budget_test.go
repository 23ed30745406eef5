package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
)

func budgetPlugins(watts float64) []tf.RegisterPluginFunc {
	return append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
		withArgs(BudgetName, BudgetArgs{BudgetWatts: watts}))
}

// budgetMeasured registers PowerBudget in measured mode reading fixed
// readings (the meter prom.NewMeter would give is swapped for them).
func budgetMeasured(watts float64, m power.Readings) []tf.RegisterPluginFunc {
	return append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(BudgetName, budgetWith(func(MeasuredArgs) (statusMeter, error) { return fixedMeter(m), nil }), "PreFilter", "Filter"),
		withArgs(BudgetName, BudgetArgs{BudgetWatts: watts, Measured: &MeasuredArgs{Config: prom.Config{URL: "http://prometheus.invalid:9090"}}}))
}

func created(p *v1.Pod, sec int64) *v1.Pod {
	p.CreationTimestamp = metav1.NewTime(time.Unix(sec, 0))
	return p
}

// Nodes a and b (2 T4 and one 32-vCPU Xeon socket each) idle at
// 2 x (15 + 2*10) = 70 W under the PWR model; one whole GPU and 1 vCPU add
// (70-10) + (120-15) = 165 W, a CPU-only pod on an idle node 105 W. A pod
// running on b with a whole GPU makes it 235 W.
func budgetEnv(t *testing.T, watts float64, running bool, pods ...*v1.Pod) *env {
	t.Helper()
	if running {
		pods = append([]*v1.Pod{bound(created(pod("run", 1000, 1000, nil), 0), "b", "0")}, pods...)
	}
	e := newEnv(t, []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "T4", 2, 32000)}, pods, budgetPlugins(watts)...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.factory.Start(ctx.Done())
	e.factory.WaitForCacheSync(ctx.Done())
	return e
}

// big needs at least 235 + 60 W (on b, whose socket is awake) > 280 W now
// (235 W on an idle cluster: it can be admitted once power frees up), so
// it waits; small would fit on b for nothing more but waits behind the
// older pod; when big leaves, small goes.
func TestBudgetAdmitsInOrder(t *testing.T) {
	big := created(pod("big", 1000, 1000, nil), 1)
	small := created(pod("small", 1000, 0, nil), 2)
	e := budgetEnv(t, 280, true, big)
	count := func(decision, reason string) float64 {
		v, err := testutil.GetCounterMetricValue(budgetDecisions.WithLabelValues(decision, reason))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	over, behind := count("waiting", "over_budget"), count("waiting", "behind_older_pod")
	_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), big)
	if want := "power budget: estimated cluster power 235 W + at least 60 W for this pod exceeds the budget of 280 W"; st.IsSuccess() || st.Message() != want {
		t.Fatalf("big: %q, want %q", st.Message(), want)
	}
	// The metrics say what the status says.
	if v, _ := testutil.GetGaugeMetricValue(clusterPower); v != 235 {
		t.Errorf("wattsched_estimated_cluster_power_watts %v, want 235", v)
	}
	if v, _ := testutil.GetGaugeMetricValue(budgetHeadroom); v != 45 {
		t.Errorf("wattsched_power_headroom_watts %v, want 45", v)
	}
	if v, _ := testutil.GetGaugeMetricValue(budgetWatts); v != 280 {
		t.Errorf("wattsched_power_budget_watts %v, want 280", v)
	}
	if v, ok := nodeMetric(t, "wattsched_estimated_node_power_watts", "b"); !ok || v != 200 {
		t.Errorf("node b's estimated power %v, want 200", v)
	}
	if d := count("waiting", "over_budget") - over; d != 1 {
		t.Errorf("over_budget decisions +%v, want +1", d)
	}
	_, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), small)
	if st.IsSuccess() || !strings.Contains(st.Message(), "waiting behind default/big") {
		t.Fatalf("small: %v, want waiting behind default/big", st)
	}
	if d := count("waiting", "behind_older_pod") - behind; d != 1 {
		t.Errorf("behind_older_pod decisions +%v, want +1", d)
	}
	if err := e.cs.CoreV1().Pods("default").Delete(context.Background(), "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, e, small)
}

func waitAdmitted(t *testing.T, e *env, p *v1.Pod) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), p)
		if st.IsSuccess() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still waiting: %v", p.Name, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A pod that could not be admitted even on an idle cluster (70 + 165 W >
// 200 W) is rejected at once, not queued: the pods behind it go (small:
// 70 + 105 W).
func TestBudgetNeverBlocksBehindAnImpossiblePod(t *testing.T) {
	big := created(pod("big", 1000, 1000, nil), 1)
	small := created(pod("small", 1000, 0, nil), 2)
	e := budgetEnv(t, 200, false, big)
	_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), big)
	if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), "can never be admitted") {
		t.Fatalf("big: %v %q", st.Code(), st.Message())
	}
	if _, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), small); !st.IsSuccess() {
		t.Fatalf("small: %v, want admitted (nothing waits ahead of it)", st)
	}
}

// A waiting pod that is changed (here its annotations become malformed),
// bound elsewhere or deleted leaves the waiting list; the pods behind it
// are not held by a stale entry.
func TestBudgetDropsUpdatedWaiters(t *testing.T) {
	big := created(pod("big", 1000, 1000, nil), 1)
	small := created(pod("small", 1000, 0, nil), 2)
	e := budgetEnv(t, 280, true, big)
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), big); st.IsSuccess() {
		t.Fatal("big admitted, want waiting")
	}
	upd := big.DeepCopy()
	upd.Annotations[gpushare.AnnGPUMilli] = "abc"
	if _, err := e.cs.CoreV1().Pods("default").Update(context.Background(), upd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, e, small)
	// Its next attempt is an unreadable pod: refused, never queued.
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), upd); st.Code() != fwk.UnschedulableAndUnresolvable {
		t.Fatalf("updated big: %v", st)
	}
	waitAdmitted(t, e, small)
}

// Nodes where the pod would break the budget are filtered out.
func TestBudgetFiltersNodes(t *testing.T) {
	// a idles at 35 W, b (8 V100M16, one socket) at 15 + 8*30 = 255 W.
	// One GPU adds 165 W on a, (300-30) + 105 = 375 W on b.
	e := newEnv(t, []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "V100M16", 8, 32000)}, nil, budgetPlugins(500)...)
	p := pod("p", 1000, 1000, nil)
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node("a")); !st.IsSuccess() {
		t.Errorf("node a: %v", st)
	}
	st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node("b"))
	if want := "power budget: 375 W more here would take the cluster to 665 W, over 500 W"; st.IsSuccess() || st.Message() != want {
		t.Errorf("node b: %q, want %q", st.Message(), want)
	}
}

func TestBudgetArgs(t *testing.T) {
	for want, args := range map[string]any{
		"budgetWatts 0: want a positive number of watts": BudgetArgs{},
		`unknown field "budget"`:                         map[string]any{"budgetWatts": 100, "budget": 1},
	} {
		_, err := tf.NewFramework(context.Background(), []tf.RegisterPluginFunc{
			tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
			tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
			tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
			withArgs(BudgetName, args)}, "x")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("args %+v: %v, want an error containing %q", args, err, want)
		}
	}
}

// The PowerBudget plugin and the simulator's Placer decide the same on the
// same state: whether a pod waits for power (PreFilter vs Placer.Held), and
// on which nodes it is admitted (Filter vs the core gate on the core
// cluster), over budgets and pod sizes around the cluster's power.
func TestBudgetMatchesCoreGate(t *testing.T) {
	// d is a's twin: a shared pod's smallest bound is a tie of a and d,
	// so the plugin's witness is one of them and the other is admitted
	// only through the GPU the selector picks.
	nodes := []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "V100M16", 8, 96000), gpuNode("c", "T4", 4, 64000), gpuNode("d", "T4", 2, 32000)}
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{
		{Name: "a", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 2, GPUModel: "T4"},
		{Name: "b", CPUMilli: 96000, MemMiB: 256 << 10, GPUs: 8, GPUModel: "V100M16"},
		{Name: "c", CPUMilli: 64000, MemMiB: 256 << 10, GPUs: 4, GPUModel: "T4"},
		{Name: "d", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 2, GPUModel: "T4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range []struct {
		node  cluster.NodeID
		gpus  []int
		cpu   int64
		milli int64
	}{{0, []int{1}, 8000, 500}, {2, []int{0}, 2000, 1000}, {3, []int{1}, 8000, 500}} {
		tk := job.Task{ID: job.ID(i), Demand: job.Demand{CPUMilli: a.cpu, GPUCount: 1, GPUMilli: a.milli}}
		if err := c.Allocate(&tk, a.node, a.gpus); err != nil {
			t.Fatal(err)
		}
	}
	bf, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
	decisions := map[string]int{}
	idle := float64((&policy.PowerGate{Model: power.PWR{}}).ClusterPower(c.Nodes))
	// Measured mode: no readings; a's GPUs over their estimate and c
	// under it; the whole of b over its estimate, a's GPUs under.
	meters := []power.Readings{nil,
		{"a": {Watts: 180, Scope: power.ScopeGPU}, "c": {Watts: 20, Scope: power.ScopeGPU}},
		{"b": {Watts: 700, Scope: power.ScopeNode}, "a": {Watts: 5, Scope: power.ScopeGPU}}}
	for mi, meter := range meters {
		for _, headroom := range []float64{50, 120, 200, 300, 400, 1000} {
			watts := idle + headroom
			for _, milli := range []int64{0, 300, 1000, 2000} {
				name := fmt.Sprintf("meter %d %.0fW/%dm", mi, watts, milli)
				plugins := budgetPlugins(watts)
				if meter != nil {
					plugins = budgetMeasured(watts, meter)
				}
				e := newEnv(t, nodes, []*v1.Pod{bound(pod("x", 8000, 500, nil), "a", "1"), bound(pod("y", 2000, 1000, nil), "c", "0"), bound(pod("z", 8000, 500, nil), "d", "1")}, plugins...)
				p := pod("new", 4000, milli, nil)
				state := framework.NewCycleState()
				_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p)

				gate := &policy.PowerGate{Limit: power.Limit(watts), Model: power.PWR{}}
				if meter != nil {
					gate.Meter = meter
				}
				placer, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "bestfit", Scorer: bf, Weight: 1}})
				if err != nil {
					t.Fatal(err)
				}
				placer.SetGate(gate)
				d, _ := gpushare.Demand(p)
				tk := job.Task{ID: 99, Demand: d, Class: -1}
				_, placed := placer.Place(&tk, c)
				if held := placer.Held(); held == st.IsSuccess() {
					t.Errorf("%s: plugin PreFilter %v, core held %v", name, st, held)
					continue
				}
				if !st.IsSuccess() {
					decisions["held"]++
					continue
				}
				if bd, err := state.Read(budgetKey); err == nil && bd.(*budgetData).anywhere {
					decisions["below the ceiling"]++
				}
				total := gate.ClusterPower(c.Nodes)
				admitted := 0
				for _, ni := range e.nodes {
					n := c.Nodes[strings.Index("abcd", ni.Node().Name)]
					core := false
					if ok, _ := cluster.Fits(&d, n); ok {
						core, _ = gate.Admit(total, gate.Increase(&d, n, placer.SelectGPUs(&tk, n)))
						// The plugin admits at the bound without the GPU
						// selector; the grid must reach the nodes where
						// only the GPUs picked can admit.
						if bound, _ := gate.MaxIncrease(&d, n); core {
							if atBound, _ := gate.Admit(total, bound); !atBound {
								decisions["over at the bound, admitted"]++
							}
						}
					}
					if plugin := e.fw.RunFilterPlugins(context.Background(), state, p, ni).IsSuccess(); plugin != core {
						t.Errorf("%s node %s: plugin admits %v, core %v", name, n.Name, plugin, core)
					}
					if core {
						admitted++
					}
				}
				if placed != (admitted > 0) {
					t.Errorf("%s: core placed %v with %d nodes admitted", name, placed, admitted)
				}
				decisions[fmt.Sprintf("%d of 4 nodes", admitted)]++
				if meter != nil {
					decisions[fmt.Sprintf("measured %d of 4 nodes", admitted)]++
				}
			}
		}
	}
	// The grid must exercise every outcome, or it proves little.
	for _, k := range []string{"held", "1 of 4 nodes", "4 of 4 nodes", "measured 1 of 4 nodes", "measured 4 of 4 nodes", "over at the bound, admitted", "below the ceiling"} {
		if decisions[k] == 0 {
			t.Errorf("no case with outcome %q (outcomes: %v)", k, decisions)
		}
	}
	t.Logf("outcomes: %v", decisions)
}

// PreFilter recounts a node's power only when its NodeInfo changed, and
// its cluster total is always the total counted afresh: here pods are
// added to and removed from the nodes between cycles, and each cycle's
// total is checked against a plugin that has never seen the cluster.
func TestBudgetCountsChangedNodes(t *testing.T) {
	nodes := []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "V100M16", 8, 96000), gpuNode("c", "T4", 4, 64000)}
	var b *Budget
	plugins := append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(BudgetName, func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := NewBudget(ctx, obj, h)
			b, _ = p.(*Budget)
			return p, err
		}, "PreFilter", "Filter"),
		withArgs(BudgetName, BudgetArgs{BudgetWatts: 1e6}))
	e := newEnv(t, nodes, nil, plugins...)
	clusterW := func(e *env) hw.Watts {
		state := framework.NewCycleState()
		if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, pod("p", 1000, 500, nil)); !st.IsSuccess() {
			t.Fatal(st)
		}
		bd, err := state.Read(budgetKey)
		if err != nil {
			t.Fatal(err)
		}
		return bd.(*budgetData).clusterW
	}
	var placed []*v1.Pod
	steps := []struct {
		node, gpus string
		cpu, milli int64
		remove     int // index into placed to remove instead (-1: add)
	}{{"b", "0", 4000, 1000, -1}, {"a", "1", 2000, 500, -1}, {"b", "3,4", 8000, 2000, -1}, {"", "", 0, 0, 0}, {"c", "2", 16000, 300, -1}, {"", "", 0, 0, 1}}
	for i, s := range steps {
		gens := map[string]int64{}
		for _, ni := range e.nodes {
			gens[ni.Node().Name] = ni.GetGeneration()
		}
		if s.remove >= 0 {
			p := placed[s.remove]
			ni := e.node(p.Spec.NodeName).(*framework.NodeInfo)
			if err := ni.RemovePod(klog.Background(), p); err != nil {
				t.Fatal(err)
			}
			placed = append(placed[:s.remove], placed[s.remove+1:]...)
		} else {
			p := bound(pod(fmt.Sprintf("x%d", i), s.cpu, s.milli, nil), s.node, s.gpus)
			pi, err := framework.NewPodInfo(p)
			if err != nil {
				t.Fatal(err)
			}
			e.node(s.node).(*framework.NodeInfo).AddPodInfo(pi)
			placed = append(placed, p)
		}
		got := clusterW(e)
		fresh := newEnv(t, nodes, placed, budgetPlugins(1e6)...)
		if want := clusterW(fresh); got != want {
			t.Errorf("step %d: cluster power %v W, counted afresh %v W", i, got, want)
		}
		// Only the changed node was recounted: the others keep the
		// memo of an older generation.
		recounted := 0
		for _, m := range b.memo {
			if m.gen != gens[m.ni.Node().Name] {
				recounted++
			}
		}
		if recounted != 1 {
			t.Errorf("step %d: %d nodes recounted, want the one changed", i, recounted)
		}
	}
}

// Filter reuses PreFilter's increase on a node only while the node is
// unchanged: on a NodeInfo changed since (as preemption hands Filter), it
// computes afresh. Here a pod that now runs on b has already woken its
// CPU socket, so the pod's increase there is less than PreFilter's 375 W.
func TestBudgetFilterRecomputesChangedNode(t *testing.T) {
	e := newEnv(t, []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "V100M16", 8, 32000)}, nil, budgetPlugins(500)...)
	p := pod("p", 1000, 1000, nil)
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatal(st)
	}
	before := "power budget: 375 W more here would take the cluster to 665 W, over 500 W"
	if st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node("b")); st.Message() != before {
		t.Fatalf("node b unchanged: %q, want %q", st.Message(), before)
	}
	other := pod("other", 1000, 0, nil)
	other.Spec.NodeName = "b"
	pi, err := framework.NewPodInfo(other)
	if err != nil {
		t.Fatal(err)
	}
	changed := e.node("b").Snapshot()
	changed.AddPodInfo(pi)
	st := e.fw.RunFilterPlugins(context.Background(), state, p, changed)
	if st.Message() == before || !strings.HasPrefix(st.Message(), "power budget: ") {
		t.Errorf("changed node b: %q, want the budget's figures for the changed node", st.Message())
	}
}

// nodeMetric is the per-node gauge family{node="node"} as the registry
// exports it; false when absent.
func nodeMetric(t *testing.T, family, node string) (float64, bool) {
	t.Helper()
	fams, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "node" && l.GetValue() == node {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}
