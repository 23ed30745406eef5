package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics/legacyregistry"
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

const (
	rackKey = "wattsched.io/rack"
	pduKey  = "wattsched.io/pdu"
)

// racked is a 2-T4 node (35 W idle, budgetEnv) labelled into rack and,
// when pdu is not empty, PDU pdu.
func racked(name, rack, pdu string) *v1.Node {
	n := gpuNode(name, "T4", 2, 32000)
	if rack != "" {
		n.Labels[rackKey] = rack
	}
	if pdu != "" {
		n.Labels[pduKey] = pdu
	}
	return n
}

func racks(rackW float64, limits map[string]float64) *DomainArgs {
	return &DomainArgs{Levels: []DomainLevel{{Name: "rack", LabelKey: rackKey, LimitWatts: rackW, Limits: limits}}}
}

func racksAndPDUs(rackW, pduW float64) *DomainArgs {
	return &DomainArgs{Levels: []DomainLevel{
		{Name: "rack", LabelKey: rackKey, LimitWatts: rackW},
		{Name: "pdu", LabelKey: pduKey, LimitWatts: pduW}}}
}

func domainEnv(t *testing.T, nodes []*v1.Node, args BudgetArgs, pods ...*v1.Pod) *env {
	t.Helper()
	fns := append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
		withArgs(BudgetName, args))
	e := newEnv(t, nodes, pods, fns...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e.factory.Start(ctx.Done())
	e.factory.WaitForCacheSync(ctx.Done())
	return e
}

// runningOnB is a pod holding one whole GPU of node b: b draws
// 35 + 165 = 200 W (budgetEnv's arithmetic).
func runningOnB() *v1.Pod { return bound(created(pod("run", 1000, 1000, nil), 0), "b", "0") }

// Filter refuses the nodes whose rack would go over its limit and names
// the rack; the cluster budget (100 kW) never binds. Rack r1 holds a (35 W
// idle) and b (200 W): 235 W. A one-GPU pod adds 165 W on a (400 W) and
// 60 W on b (295 W), both over 250 W; on c, alone in r2, 35 + 165 = 200 W.
func TestBudgetDomainFilterNamesTheRack(t *testing.T) {
	e := domainEnv(t, []*v1.Node{racked("a", "r1", ""), racked("b", "r1", ""), racked("c", "r2", "")},
		BudgetArgs{BudgetWatts: 1e5, Domains: racks(250, nil)}, runningOnB())
	p := pod("p", 1000, 1000, nil)
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v, want admitted (c has room)", st)
	}
	for node, want := range map[string]string{
		"a": "power domain wattsched.io/rack=r1 (rack): 235 W + 165 W for this pod on node a exceeds its limit of 250 W",
		"b": "power domain wattsched.io/rack=r1 (rack): 235 W + 60 W for this pod on node b exceeds its limit of 250 W",
		"c": "",
	} {
		st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node(node))
		if st.Message() != want || st.IsSuccess() != (want == "") {
			t.Errorf("node %s: %v %q, want %q", node, st.Code(), st.Message(), want)
		}
	}
}

// A pod that fits no rack's headroom waits (Unschedulable, in the waiting
// list) and its status names the binding domain with the pod's cheapest
// increase under it; a per-value limit lifts the rack. With a and b in r1
// at 235 W and limit 250 W, the cheapest is +60 W on b.
func TestBudgetDomainHoldNamesTheDomain(t *testing.T) {
	nodes := []*v1.Node{racked("a", "r1", ""), racked("b", "r1", "")}
	p := created(pod("p", 1000, 1000, nil), 1)
	e := domainEnv(t, nodes, BudgetArgs{BudgetWatts: 1e5, Domains: racks(250, nil)}, runningOnB(), p)
	_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), p)
	want := "power domain wattsched.io/rack=r1 (rack): 235 W + at least 60 W for this pod on node b exceeds its limit of 250 W"
	if st.Code() != fwk.Unschedulable || st.Message() != want {
		t.Fatalf("PreFilter: %v %q, want Unschedulable %q", st.Code(), st.Message(), want)
	}
	// A younger pod that would fit (a CPU pod adds nothing on b) waits behind it.
	_, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), created(pod("q", 1000, 0, nil), 2))
	if !strings.Contains(st.Message(), "waiting behind default/p") {
		t.Errorf("younger pod: %q, want waiting behind default/p", st.Message())
	}
	// 235 + 60 = 295 W fits a 300 W limit for r1.
	e = domainEnv(t, nodes, BudgetArgs{BudgetWatts: 1e5, Domains: racks(250, map[string]float64{"r1": 300})}, runningOnB())
	if _, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 1000, nil)); !st.IsSuccess() {
		t.Errorf("with r1 at 300 W: %v, want admitted", st)
	}
}

// Nested levels: every domain on the node's path must hold, and the
// innermost one exceeded is named. Racks r1 (a, b: 235 W) and r2 (c: 35 W)
// under PDU p1 (270 W). Racks at 1000 W never bind; with the PDU at 400 W,
// c's +165 W takes p1 to 435 W and b's +60 W to 330 W: only b passes.
func TestBudgetDomainNestedPDU(t *testing.T) {
	e := domainEnv(t, []*v1.Node{racked("a", "r1", "p1"), racked("b", "r1", "p1"), racked("c", "r2", "p1")},
		BudgetArgs{BudgetWatts: 1e5, Domains: racksAndPDUs(1000, 400)}, runningOnB())
	p := pod("p", 1000, 1000, nil)
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	for node, want := range map[string]string{
		"a": "power domain wattsched.io/pdu=p1 (pdu): 270 W + 165 W for this pod on node a exceeds its limit of 400 W",
		"b": "",
		"c": "power domain wattsched.io/pdu=p1 (pdu): 270 W + 165 W for this pod on node c exceeds its limit of 400 W",
	} {
		st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node(node))
		if st.Message() != want || st.IsSuccess() != (want == "") {
			t.Errorf("node %s: %q, want %q", node, st.Message(), want)
		}
	}
}

// A pod that could not start even with its domains idle is refused at
// once (UnschedulableAndUnresolvable, the core gate's NeverFits and
// reason), never queued: rack r1 (a, b) idles
// at 70 W; a GPU pod adds 165 W, 235 W > 200 W. A CPU pod (105 W, 175 W)
// behind it is admitted.
func TestBudgetDomainNeverFits(t *testing.T) {
	e := domainEnv(t, []*v1.Node{racked("a", "r1", ""), racked("b", "r1", "")}, BudgetArgs{BudgetWatts: 1e5, Domains: racks(200, nil)})
	_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), created(pod("big", 1000, 1000, nil), 1))
	want := `power budget: even on an idle cluster the pod would take power domain "wattsched.io/rack=r1" (rack, limit 200 W) over its limit on every node where it fits: it can never be admitted`
	if st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != want {
		t.Fatalf("big: %v %q, want %q", st.Code(), st.Message(), want)
	}
	if _, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), created(pod("small", 1000, 0, nil), 2)); !st.IsSuccess() {
		t.Fatalf("small: %v, want admitted", st)
	}
}

// A node without the level's label is in no domain: Filter refuses it for
// good, naming the label; the labelled node still takes the pod.
func TestBudgetDomainUnlabelledNode(t *testing.T) {
	e := domainEnv(t, []*v1.Node{racked("a", "r1", ""), racked("x", "", "")}, BudgetArgs{BudgetWatts: 1e5, Domains: racks(1000, nil)})
	p := pod("p", 1000, 1000, nil)
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node("x"))
	if st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != "power domains: node x has no wattsched.io/rack label, so it is in no power domain" {
		t.Errorf("node x: %v %q", st.Code(), st.Message())
	}
	if st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node("a")); !st.IsSuccess() {
		t.Errorf("node a: %v", st)
	}
}

// Topologies that cannot be bound reach the pod's status, naming what is
// wrong: a rack under two PDUs; a rack limit below its nodes' idle power.
func TestBudgetDomainBadTopology(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []*v1.Node
		args  *DomainArgs
		want  string
	}{
		{"rack in two PDUs", []*v1.Node{racked("a", "r1", "p1"), racked("b", "r1", "p2")}, racksAndPDUs(1000, 1000),
			"power domains: wattsched.io/rack=r1 is inside wattsched.io/pdu=p1 by node a's labels but inside wattsched.io/pdu=p2 by node b's"},
		// a and b idle at 70 W.
		{"limit below idle", []*v1.Node{racked("a", "r1", ""), racked("b", "r1", "")}, racks(60, nil),
			`topology: domain "wattsched.io/rack=r1": limit_w: 60 W is below its 2 nodes' idle power 70 W`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := domainEnv(t, tc.nodes, BudgetArgs{BudgetWatts: 1e5, Domains: tc.args})
			_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 0, nil))
			if st.IsSuccess() || st.Message() != tc.want {
				t.Errorf("%v %q, want %q", st.Code(), st.Message(), tc.want)
			}
		})
	}
}

// In measured mode a domain counts its nodes' measured power where it is
// above the estimate: b's GPUs read 300 W (estimate 2 x 10 W), so r1 =
// a 35 W + b 15 + 300 W = 350 W, and the CPU pod's +105 W on a (455 W)
// or +105 W on b (its socket idles: 455 W) exceed 400 W. Estimated, r1 is
// 70 W and the pod fits.
func TestBudgetDomainMeasured(t *testing.T) {
	nodes := []*v1.Node{racked("a", "r1", ""), racked("b", "r1", "")}
	high := fixedMeter(power.Readings{"b": {Watts: 300, Scope: power.ScopeGPU}})
	for _, measured := range []bool{false, true} {
		args := BudgetArgs{BudgetWatts: 1e5, Domains: racks(400, nil)}
		if measured {
			args.Measured = &MeasuredArgs{Config: prom.Config{URL: "http://prometheus.invalid:9090"}}
		}
		fns := append(gpuPlugin(GPUArgs{}),
			tf.RegisterPluginAsExtensions(BudgetName, budgetWith(func(MeasuredArgs) (statusMeter, error) { return high, nil }), "PreFilter", "Filter"),
			withArgs(BudgetName, args))
		e := newEnv(t, nodes, nil, fns...)
		_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 0, nil))
		if st.IsSuccess() == measured {
			t.Errorf("measured %v: %v %q", measured, st.Code(), st.Message())
		}
		if measured && !strings.Contains(st.Message(), "power domain wattsched.io/rack=r1 (rack): 350 W + at least 105 W") {
			t.Errorf("measured: %q", st.Message())
		}
	}
}

func TestBudgetDomainArgs(t *testing.T) {
	for want, args := range map[string]any{
		"domains.levels: empty":                                              BudgetArgs{BudgetWatts: 100, Domains: &DomainArgs{}},
		"domains.levels[0].labelKey: empty":                                  BudgetArgs{BudgetWatts: 100, Domains: &DomainArgs{Levels: []DomainLevel{{Name: "rack", LimitWatts: 1}}}},
		"domains.levels[0].limitWatts 0: want a positive number of watts":    BudgetArgs{BudgetWatts: 100, Domains: racks(0, nil)},
		`domains.levels[0].limits["r1"] -5: want a positive number of watts`: BudgetArgs{BudgetWatts: 100, Domains: racks(10, map[string]float64{"r1": -5})},
		`domains.levels[1].labelKey: "wattsched.io/rack" used by two levels`: BudgetArgs{BudgetWatts: 100, Domains: &DomainArgs{Levels: []DomainLevel{
			{Name: "rack", LabelKey: rackKey, LimitWatts: 1}, {Name: "pdu", LabelKey: rackKey, LimitWatts: 1}}}},
		`unknown field "limit"`: map[string]any{"budgetWatts": 100, "domains": map[string]any{"levels": []any{map[string]any{"name": "rack", "labelKey": rackKey, "limit": 1}}}},
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

// Filter on a NodeInfo changed since PreFilter (preemption's) recomputes
// the pod's increase and checks the domains with it. r1 holds a (35 W)
// and b (200 W): 235 W, limit 290 W. A one-GPU pod adds 165 W on a; once a
// CPU pod runs on a (its socket awake), it adds only the GPU's 60 W:
// 295 W, still over 290 W, with the new figure.
func TestBudgetDomainFilterRecomputesChangedNode(t *testing.T) {
	e := domainEnv(t, []*v1.Node{racked("a", "r1", ""), racked("b", "r1", ""), racked("c", "r2", "")},
		BudgetArgs{BudgetWatts: 1e5, Domains: racks(290, nil)}, runningOnB())
	p := pod("p", 1000, 1000, nil)
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatal(st)
	}
	before := "power domain wattsched.io/rack=r1 (rack): 235 W + 165 W for this pod on node a exceeds its limit of 290 W"
	if st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node("a")); st.Message() != before {
		t.Fatalf("node a unchanged: %q, want %q", st.Message(), before)
	}
	other := pod("other", 1000, 0, nil)
	other.Spec.NodeName = "a"
	pi, err := framework.NewPodInfo(other)
	if err != nil {
		t.Fatal(err)
	}
	changed := e.node("a").Snapshot()
	changed.AddPodInfo(pi)
	want := "power domain wattsched.io/rack=r1 (rack): 235 W + 60 W for this pod on node a exceeds its limit of 290 W"
	if st := e.fw.RunFilterPlugins(context.Background(), state, p, changed); st.Message() != want {
		t.Errorf("changed node a: %q, want %q", st.Message(), want)
	}
}

// The last decision's domains are exported: each domain's counted power
// and limit. Rack r1 = a 35 W + b 200 W = 235 W; r2 = c 35 W.
func TestBudgetDomainMetrics(t *testing.T) {
	e := domainEnv(t, []*v1.Node{racked("a", "r1", ""), racked("b", "r1", ""), racked("c", "r2", "")},
		BudgetArgs{BudgetWatts: 1e5, Domains: racks(250, map[string]float64{"r2": 400})}, runningOnB())
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pod("p", 1000, 0, nil)); !st.IsSuccess() {
		t.Fatal(st)
	}
	for _, c := range []struct {
		family, domain string
		want           float64
	}{
		{"wattsched_power_domain_watts", "wattsched.io/rack=r1", 235},
		{"wattsched_power_domain_watts", "wattsched.io/rack=r2", 35},
		{"wattsched_power_domain_limit_watts", "wattsched.io/rack=r1", 250},
		{"wattsched_power_domain_limit_watts", "wattsched.io/rack=r2", 400},
	} {
		if v, ok := domainMetric(t, c.family, c.domain); !ok || v != c.want {
			t.Errorf("%s{domain=%q} = %v (present %v), want %v", c.family, c.domain, v, ok, c.want)
		}
	}
}

func domainMetric(t *testing.T, family, domain string) (float64, bool) {
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
				if l.GetName() == "domain" && l.GetValue() == domain {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// The plugin and the simulator's Placer with the same domains decide the
// same: whether a pod waits (PreFilter vs Placer.Held) and on which nodes
// it is admitted (Filter vs the core gate's cluster and domain checks),
// over rack and PDU limits around the racks' current power and pod sizes.
// Racks r1 = {a, b} and r2 = {c, d} under PDU p1; the running pods are
// TestBudgetMatchesCoreGate's.
func TestBudgetDomainsMatchCoreGate(t *testing.T) {
	rackOf := map[string]string{"a": "r1", "b": "r1", "c": "r2", "d": "r2"}
	nodes := []*v1.Node{racked("a", "r1", "p1"), gpuNode("b", "V100M16", 8, 96000), gpuNode("c", "T4", 4, 64000), racked("d", "r2", "p1")}
	for _, n := range nodes[1:3] {
		n.Labels[rackKey], n.Labels[pduKey] = rackOf[n.Name], "p1"
	}
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
	names := []string{"a", "b", "c", "d"}
	idle := make([]hw.Watts, len(names))
	base := &policy.PowerGate{Model: power.PWR{}}
	rackW := map[string]hw.Watts{}
	for i, n := range c.Nodes {
		idle[i] = base.Model.NodePower(n.IdleCopy()).Total()
		rackW[rackOf[n.Name]] += base.NodePower(n)
	}
	pduW := rackW["r1"] + rackW["r2"]
	bf, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
	decisions := map[string]int{}
	for _, h1 := range []hw.Watts{50, 200, 1000} {
		for _, h2 := range []hw.Watts{50, 200, 1000} {
			for _, hp := range []hw.Watts{250, 1e5} {
				for _, milli := range []int64{0, 300, 1000, 2000} {
					name := fmt.Sprintf("r1+%.0f r2+%.0f p1+%.0f %dm", h1, h2, hp, milli)
					lim := map[string]float64{"r1": float64(rackW["r1"] + h1), "r2": float64(rackW["r2"] + h2)}
					args := &DomainArgs{Levels: []DomainLevel{
						{Name: "rack", LabelKey: rackKey, LimitWatts: 1e6, Limits: lim},
						{Name: "pdu", LabelKey: pduKey, LimitWatts: float64(pduW + hp)}}}
					e := newEnv(t, nodes, []*v1.Pod{bound(pod("x", 8000, 500, nil), "a", "1"), bound(pod("y", 2000, 1000, nil), "c", "0"), bound(pod("z", 8000, 500, nil), "d", "1")},
						append(gpuPlugin(GPUArgs{}), tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
							withArgs(BudgetName, BudgetArgs{BudgetWatts: 1e6, Domains: args}))...)
					p := pod("new", 4000, milli, nil)
					state := framework.NewCycleState()
					_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p)

					topo := power.Topology{Domains: []power.Domain{
						{Name: rackKey + "=r1", Level: "rack", Parent: pduKey + "=p1", Limit: hw.Watts(lim["r1"])},
						{Name: rackKey + "=r2", Level: "rack", Parent: pduKey + "=p1", Limit: hw.Watts(lim["r2"])},
						{Name: pduKey + "=p1", Level: "pdu", Limit: pduW + hp}},
						Member: map[string]string{"a": rackKey + "=r1", "b": rackKey + "=r1", "c": rackKey + "=r2", "d": rackKey + "=r2"}}
					doms, _, err := topo.Bind(names, idle)
					if err != nil {
						t.Fatal(err)
					}
					gate := &policy.PowerGate{Limit: 1e6, Model: power.PWR{}, Domains: doms}
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
					total, load := gate.ClusterPower(c.Nodes), gate.DomainLoad(c.Nodes)
					admitted := 0
					for _, ni := range e.nodes {
						i := strings.Index("abcd", ni.Node().Name)
						n := c.Nodes[i]
						core := false
						if ok, _ := cluster.Fits(&d, n); ok {
							inc := gate.Increase(&d, n, placer.SelectGPUs(&tk, n))
							okC, _ := gate.Admit(total, inc)
							_, okD := load.Fits(i, inc)
							core = okC && okD
							if okC && !okD {
								decisions["refused by a domain"]++
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
				}
			}
		}
	}
	for _, k := range []string{"held", "refused by a domain", "4 of 4 nodes", "1 of 4 nodes"} {
		if decisions[k] == 0 {
			t.Errorf("no case with outcome %q (outcomes: %v)", k, decisions)
		}
	}
	t.Logf("outcomes: %v", decisions)
}
