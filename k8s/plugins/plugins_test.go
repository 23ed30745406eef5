package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"k8s.io/component-base/metrics/testutil"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
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

func init() { metrics.Register() }

func gpuNode(name, model string, gpus int, cpuMilli int64) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:       *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI),
		v1.ResourceMemory:    *resource.NewQuantity(256<<30, resource.BinarySI),
		v1.ResourcePods:      *resource.NewQuantity(110, resource.DecimalSI),
		gpushare.ResourceGPU: *resource.NewQuantity(int64(gpus), resource.DecimalSI),
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{gpushare.LabelGPUProduct: model}, Annotations: map[string]string{}},
		Status: v1.NodeStatus{Capacity: rl, Allocatable: rl}}
}

// pod builds a pod asking for cpuMilli and either milli of one GPU
// (milli < 1000) or whole GPUs (milli = 1000*k); ann adds annotations.
func pod(name string, cpuMilli, milli int64, ann map[string]string) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(cpuMilli, resource.DecimalSI)}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Annotations: map[string]string{},
		CreationTimestamp: metav1.NewTime(time.Unix(int64(len(name)), 0))},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: v1.ResourceList{}}}}}}
	switch {
	case milli >= 1000:
		q := *resource.NewQuantity(milli/1000, resource.DecimalSI)
		p.Spec.Containers[0].Resources.Requests[gpushare.ResourceGPU] = q
		p.Spec.Containers[0].Resources.Limits[gpushare.ResourceGPU] = q
	case milli > 0:
		p.Annotations[gpushare.AnnGPUMilli] = strings.TrimSpace(resource.NewQuantity(milli, resource.DecimalSI).String())
	}
	for k, v := range ann {
		p.Annotations[k] = v
	}
	return p
}

func bound(p *v1.Pod, node string, gpus string) *v1.Pod {
	p.Spec.NodeName = node
	if gpus != "" {
		p.Annotations[gpushare.AnnGPUIndex] = gpus
	}
	return p
}

// withArgs sets a plugin's arguments in the test profile.
func withArgs(name string, args any) tf.RegisterPluginFunc {
	return func(_ *frameworkruntime.Registry, p *schedulerapi.KubeSchedulerProfile) {
		raw, _ := json.Marshal(args)
		p.PluginConfig = append(p.PluginConfig, schedulerapi.PluginConfig{Name: name, Args: &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}})
	}
}

type env struct {
	fw      framework.Framework
	cs      *fake.Clientset
	factory informers.SharedInformerFactory
	nodes   []fwk.NodeInfo
}

func newEnv(t testing.TB, nodes []*v1.Node, pods []*v1.Pod, fns ...tf.RegisterPluginFunc) *env {
	t.Helper()
	cs := fake.NewClientset()
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return envWith(t, cs, nodes, pods, fns...)
}

// envWith is newEnv with the clientset given: the pods are in the
// scheduler's snapshot whether or not they are in cs.
func envWith(t testing.TB, cs *fake.Clientset, nodes []*v1.Node, pods []*v1.Pod, fns ...tf.RegisterPluginFunc) *env {
	t.Helper()
	snap := cache.NewSnapshot(pods, nodes)
	base := []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	fw, err := tf.NewFramework(context.Background(), append(base, fns...), "wattsched",
		frameworkruntime.WithSnapshotSharedLister(snap),
		frameworkruntime.WithClientSet(cs),
		frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatal(err)
	}
	infos, err := snap.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	return &env{fw: fw, cs: cs, factory: factory, nodes: infos}
}

func (e *env) node(name string) fwk.NodeInfo {
	for _, ni := range e.nodes {
		if ni.Node().Name == name {
			return ni
		}
	}
	return nil
}

func gpuPlugin(args GPUArgs) []tf.RegisterPluginFunc {
	return []tf.RegisterPluginFunc{
		tf.RegisterPluginAsExtensions(GPUName, NewGPU, "PreFilter", "Filter", "Reserve", "PreBind"),
		withArgs(GPUName, args),
	}
}

// A shared pod goes to the GPU the selector picks given the GPUs the bound
// pods' annotations hold, and that choice is written to its annotation.
func TestGPUReserveAndPreBind(t *testing.T) {
	nodes := []*v1.Node{gpuNode("t4", "T4", 2, 32000)}
	existing := bound(pod("old", 1000, 600, nil), "t4", "0")
	for _, c := range []struct {
		milli int64
		want  string
	}{
		{500, "1"}, // GPU 0 has 400 free: too little
		{300, "0"}, // best fit: the fullest GPU that fits
		{2000, ""}, // whole GPUs need idle ones: only GPU 1 is idle
	} {
		p := pod("new", 1000, c.milli, nil)
		e := newEnv(t, nodes, []*v1.Pod{existing}, gpuPlugin(GPUArgs{})...)
		if _, err := e.cs.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		state := framework.NewCycleState()
		if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
			t.Fatalf("milli %d: PreFilter: %v", c.milli, st)
		}
		st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node("t4"))
		if c.want == "" {
			if st.IsSuccess() || !strings.Contains(st.Message(), "not enough idle GPUs") {
				t.Fatalf("milli %d: Filter %v, want not enough idle GPUs", c.milli, st)
			}
			continue
		}
		if !st.IsSuccess() {
			t.Fatalf("milli %d: Filter: %v", c.milli, st)
		}
		if st := e.fw.RunReservePluginsReserve(context.Background(), state, p, "t4"); !st.IsSuccess() {
			t.Fatalf("milli %d: Reserve: %v", c.milli, st)
		}
		if st := e.fw.RunPreBindPlugins(context.Background(), state, p, "t4"); !st.IsSuccess() {
			t.Fatalf("milli %d: PreBind: %v", c.milli, st)
		}
		got, err := e.cs.CoreV1().Pods("default").Get(context.Background(), "new", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g := got.Annotations[gpushare.AnnGPUIndex]; g != c.want {
			t.Errorf("milli %d: %s = %q, want %q", c.milli, gpushare.AnnGPUIndex, g, c.want)
		}
	}
}

// Bad input gives a scheduling status that says what is wrong, never a crash.
func TestClearStatuses(t *testing.T) {
	mystery := gpuNode("mystery", "Mystery-GPU", 2, 32000)
	broken := gpuNode("broken", "T4", 2, 32000)
	hot := gpuNode("hot", "T4", 2, 32000)
	hot.Annotations[gpushare.AnnGPUIdleW] = "-5"
	good := gpuNode("good", "Tesla-T4", 2, 32000)
	bad := bound(pod("bad-index", 1000, 500, nil), "broken", "zero")
	e := newEnv(t, []*v1.Node{mystery, broken, hot, good}, []*v1.Pod{bad}, gpuPlugin(GPUArgs{})...)

	p := pod("p", 1000, 500, nil)
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
		t.Fatal(st)
	}
	for node, want := range map[string]string{
		"mystery": `unknown GPU model "Mystery-GPU"`,
		"broken":  "",
		"hot":     `annotation wattsched.io/gpu-idle-watts "-5"`,
		"good":    "",
	} {
		st := e.fw.RunFilterPlugins(context.Background(), state, p, e.node(node))
		if want == "" {
			if !st.IsSuccess() {
				t.Errorf("node %s: %v, want success (good: GPU feature discovery label resolved by alias; broken: a malformed foreign pod never fails its node)", node, st)
			}
			continue
		}
		if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), want) {
			t.Errorf("node %s: %v %q, want UnschedulableAndUnresolvable containing %q", node, st.Code(), st.Message(), want)
		}
	}
	// The malformed pod was counted (best-fit on one GPU) and reported
	// once, as a metric naming it.
	if v, err := testutil.GetCounterMetricValue(inconsistentPods.WithLabelValues("broken", "default/bad-index", `annotation wattsched.io/gpu-index "zero"`)); err != nil || v != 1 {
		t.Errorf("inconsistent-pod metric %v, %v; want 1", v, err)
	}
	if n, err := sharedState(e.fw).node(e.node("broken")); err != nil || n.FreeGPUMilli() != 1500 {
		t.Errorf("broken node: %v, free GPU milli %d, want the bad pod's 500 counted", err, n.FreeGPUMilli())
	}
	for ann, want := range map[string]string{
		"abc":  `annotation wattsched.io/gpu-milli "abc": not an integer`,
		"1000": "want 1..999 thousandths",
	} {
		p := pod("q", 1000, 0, map[string]string{gpushare.AnnGPUMilli: ann})
		_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), p)
		if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), want) {
			t.Errorf("gpu-milli %q: %v %q, want UnschedulableAndUnresolvable containing %q", ann, st.Code(), st.Message(), want)
		}
	}
	p = pod("r", 1000, 2000, map[string]string{gpushare.AnnGPUMilli: "500"})
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), p); !strings.Contains(st.Message(), "exclusive") {
		t.Errorf("gpu-milli with nvidia.com/gpu: %v", st)
	}
}

// The framework's weighted, normalised totals and best nodes are the core
// Placer's, for every score plugin alone and for weighted combinations.
func TestScoresMatchCorePlacer(t *testing.T) {
	workload, err := alibaba2023.Pods("default")
	if err != nil {
		t.Fatal(err)
	}
	fg, err := fgd.New(fgd.Args{}.Default(), policy.Deps{Workload: workload})
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}})
	gp, _ := gpupacking.New(gpupacking.Args{}, policy.Deps{})
	type plug struct {
		name   string
		f      frameworkruntime.PluginFactory
		core   policy.Scorer
		weight int32
	}
	for _, tc := range []struct {
		selector string
		plugins  []plug
	}{
		{"pwr", []plug{{PWRName, NewPWR, pw, 3}, {BestFitName, NewBestFit, bestfit.Policy{}, 2}}},
		{"fgd", []plug{{FGDName, NewFGD, fg, 1}}},
		{"fgd", []plug{{PWRName, NewPWR, pw, 200}, {FGDName, NewFGD, fg, 800}}},
		{"", []plug{{DotProdName, NewDotProd, dotprod.Policy{}, 1}}},
		{"", []plug{{GpuPackingName, NewGpuPacking, gp, 1}}},
		{"", []plug{{GpuClusteringName, NewGpuClustering, gpuclustering.Policy{}, 1}}},
	} {
		var fns []tf.RegisterPluginFunc
		var ws []policy.Weighted
		var label []string
		for _, pl := range tc.plugins {
			fns = append(fns, tf.RegisterPluginAsExtensionsWithWeight(pl.name, pl.weight, pl.f, "PreScore", "Score"))
			ws = append(ws, policy.Weighted{Name: pl.name, Scorer: pl.core, Weight: int64(pl.weight)})
			label = append(label, fmt.Sprintf("%d*%s", pl.weight, pl.name))
		}
		t.Run(strings.Join(label, "+"), func(t *testing.T) {
			scoresMatch(t, tc.selector, fns, ws)
		})
	}
}

func scoresMatch(t *testing.T, selector string, fns []tf.RegisterPluginFunc, ws []policy.Weighted) {
	nodes := []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "V100M16", 8, 96000), gpuNode("c", "T4", 4, 64000)}
	pods := []*v1.Pod{bound(pod("x", 8000, 500, nil), "a", "1"), bound(pod("y", 2000, 1000, nil), "c", "0")}
	e := newEnv(t, nodes, pods, append(gpuPlugin(GPUArgs{GPUSelector: selector}), fns...)...)
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{
		{Name: "a", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 2, GPUModel: "T4"},
		{Name: "b", CPUMilli: 96000, MemMiB: 256 << 10, GPUs: 8, GPUModel: "V100M16"},
		{Name: "c", CPUMilli: 64000, MemMiB: 256 << 10, GPUs: 4, GPUModel: "T4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range []struct {
		node  cluster.NodeID
		gpus  []int
		cpu   int64
		milli int64
	}{{0, []int{1}, 8000, 500}, {2, []int{0}, 2000, 1000}} {
		tk := job.Task{ID: job.ID(i), Demand: job.Demand{CPUMilli: a.cpu, GPUCount: 1, GPUMilli: a.milli}}
		if err := c.Allocate(&tk, a.node, a.gpus); err != nil {
			t.Fatal(err)
		}
	}
	placer, err := policy.NewPlacer(nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, milli := range []int64{0, 300, 500, 1000, 2000} {
		p := pod("new", 4000, milli, nil)
		state := framework.NewCycleState()
		if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
			t.Fatal(st)
		}
		var feasible []fwk.NodeInfo
		for _, ni := range e.nodes {
			if e.fw.RunFilterPlugins(context.Background(), state, p, ni).IsSuccess() {
				feasible = append(feasible, ni)
			}
		}
		if st := e.fw.RunPreScorePlugins(context.Background(), state, p, feasible); !st.IsSuccess() {
			t.Fatal(st)
		}
		scores, st := e.fw.RunScorePlugins(context.Background(), state, p, feasible)
		if !st.IsSuccess() {
			t.Fatal(st)
		}
		d, _ := gpushare.Demand(p)
		tk := job.Task{ID: 99, Demand: d, Class: -1}
		top, best, ok := placer.Top(&tk, c)
		if !ok {
			t.Fatalf("milli %d: core finds no node", milli)
		}
		var kTop []cluster.NodeID
		var kBest int64 = -1
		for _, s := range scores {
			kBest = max(kBest, s.TotalScore)
		}
		for _, s := range scores {
			if s.TotalScore == kBest {
				kTop = append(kTop, cluster.NodeID(strings.Index("abc", s.Name)))
			}
		}
		slices.Sort(kTop)
		if kBest != best || !slices.Equal(kTop, top) {
			t.Errorf("milli %d: framework best %d on %v, core %d on %v", milli, kBest, kTop, best, top)
		}
	}
}

// WattschedGPU binds (annotation in the Binding) when it is the profile's
// first bind plugin, and patches the pod at PreBind otherwise.
func TestBindOrPreBind(t *testing.T) {
	for _, first := range []bool{true, false} {
		var g *GPU
		capture := func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := NewGPU(ctx, obj, h)
			g, _ = p.(*GPU)
			return p, err
		}
		fns := []tf.RegisterPluginFunc{tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New)}
		if first {
			fns = append(fns, tf.RegisterPluginAsExtensions(GPUName, capture, "PreFilter", "Filter", "Reserve", "PreBind", "Bind"),
				tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New))
		} else {
			fns = append(fns, tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
				tf.RegisterPluginAsExtensions(GPUName, capture, "PreFilter", "Filter", "Reserve", "PreBind", "Bind"))
		}
		if _, err := tf.NewFramework(context.Background(), fns, "x", frameworkruntime.WithClientSet(fake.NewClientset())); err != nil {
			t.Fatal(err)
		}
		if g == nil || g.binds() != first {
			t.Errorf("first bind plugin %v: binds() = %v", first, g != nil && g.binds())
		}
	}
}
