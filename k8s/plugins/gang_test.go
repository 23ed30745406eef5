package plugins

import (
	"context"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

// gangEnv is budgetEnv with PowerBudget also at Reserve (where a gang's
// power is held).
func gangEnv(t *testing.T, watts float64, running bool, pods ...*v1.Pod) (*env, *activated) {
	t.Helper()
	if running {
		pods = append([]*v1.Pod{bound(created(pod("run", 1000, 1000, nil), 0), "b", "0")}, pods...)
	}
	return gangEnvWith(t, []*v1.Node{gpuNode("a", "T4", 2, 32000), gpuNode("b", "T4", 2, 32000)}, BudgetArgs{BudgetWatts: watts}, pods...)
}

func gangEnvWith(t *testing.T, nodes []*v1.Node, args BudgetArgs, pods ...*v1.Pod) (*env, *activated) {
	t.Helper()
	fns := append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter", "Reserve"),
		withArgs(BudgetName, args))
	cs := fake.NewClientset()
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	snap := cache.NewSnapshot(pods, nodes)
	base := []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	act := &activated{}
	fw, err := tf.NewFramework(context.Background(), append(base, fns...), "wattsched",
		frameworkruntime.WithSnapshotSharedLister(snap), frameworkruntime.WithClientSet(cs),
		frameworkruntime.WithInformerFactory(factory), frameworkruntime.WithPodActivator(act))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return &env{fw: fw, cs: cs, factory: factory}, act
}

// activated records the pods moved back to the active queue.
type activated struct {
	mu   sync.Mutex
	pods []string
}

func (a *activated) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range pods {
		a.pods = append(a.pods, k)
	}
	slices.Sort(a.pods)
}

func (a *activated) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.pods)
}

// member is a pod of gang g with one whole GPU and 1 vCPU.
func member(name, g string, sec int64) *v1.Pod {
	p := created(pod(name, 1000, 1000, nil), sec)
	p.Labels = map[string]string{LabelPodGroup: g}
	return p
}

func gang3() []*v1.Pod {
	return []*v1.Pod{member("g-0", "g", 10), member("g-1", "g", 11), member("g-2", "g", 12)}
}

// A gang of three pods (one T4 and 1 vCPU each) is admitted only if its
// whole power fits. With "run" on b (b 200 W, a 35 W: 235 W), the
// tentative placement (pods by name, each on its cheapest node, ties by
// node name) puts g-0 on b (+60 W: b's socket is awake), g-1 on a (+165 W:
// a GPU and a's socket), g-2 on a (+60 W): 285 W, so 520 W in all. On an
// idle cluster (70 W) it would be g-0 on a (165), g-1 on a (60), g-2 on
// b (165): 390 W, 460 W in all. One member alone would add only 60 W
// (295 W), within every budget below.
func TestBudgetGangAsAWhole(t *testing.T) {
	for _, tc := range []struct {
		watts float64
		code  fwk.Code
		msg   string
	}{
		{520, fwk.Success, ""},
		{500, fwk.Unschedulable, "power budget: gang default/g: its 3 pods need at least 285 W in all: cluster power 235 W + 285 W exceeds the budget of 500 W"},
		{450, fwk.UnschedulableAndUnresolvable, "power budget: gang default/g: its 3 pods would add at least 390 W even on an idle cluster (70 W), over the budget of 450 W: the gang can never be admitted"},
	} {
		for _, pods := range gangVariants3() {
			e, _ := gangEnv(t, tc.watts, true, pods...)
			_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), pods[0])
			if st.Code() != tc.code || st.Message() != tc.msg {
				t.Errorf("budget %v W, labels %v: g-0 got %v %q, want %v %q", tc.watts, pods[0].Labels, st.Code(), st.Message(), tc.code, tc.msg)
			}
		}
	}
}

// Once the first member is reserved, the power of the two others is held:
// a pod of its own that would fit beside the first member alone waits,
// the gang's next member does not wait behind it, and when the gang fails
// (Unreserve) the power held is released.
//
// Idle cluster, 70 W, budget 460 W: the gang needs 390 W (g-0 on a 165,
// g-1 on a 60, g-2 on b 165), 460 W, admitted. After g-0's Reserve 225 W
// are held for g-1 and g-2. "solo" (two T4 and 1 vCPU: 165 + 60 = 225 W on
// an idle node) then needs 70 + 225 + 225 = 520 W > 460 W and waits
// (without the hold it would need 295 W). g-1 counts only g-2's 165 W
// held: 70 + 165 + 165 = 400 W, admitted though solo, older, waits.
// After Unreserve solo needs 70 + 225 = 295 W and is admitted.
func TestBudgetGangHoldsAndReleases(t *testing.T) {
	ms := gang3()
	solo := created(pod("solo", 1000, 2000, nil), 5)
	e, act := gangEnv(t, 460, false, append(ms, solo)...)
	ctx := context.Background()
	s0 := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(ctx, s0, ms[0]); !st.IsSuccess() {
		t.Fatalf("g-0: %v", st)
	}
	if st := e.fw.RunReservePluginsReserve(ctx, s0, ms[0], "a"); !st.IsSuccess() {
		t.Fatalf("g-0 reserve: %v", st)
	}
	_, st, _ := e.fw.RunPreFilterPlugins(ctx, framework.NewCycleState(), solo)
	if want := "power budget: estimated cluster power 295 W + at least 225 W for this pod exceeds the budget of 460 W"; st.Code() != fwk.Unschedulable || st.Message() != want {
		t.Fatalf("solo with the gang held: %v %q, want %q", st.Code(), st.Message(), want)
	}
	if _, st, _ := e.fw.RunPreFilterPlugins(ctx, framework.NewCycleState(), ms[1]); !st.IsSuccess() {
		t.Fatalf("g-1 with its gang's power held: %v", st)
	}
	e.fw.RunReservePluginsUnreserve(ctx, s0, ms[0], "a")
	if got := act.list(); !slices.Equal(got, []string{"default/solo"}) {
		t.Errorf("activated %v after the gang failed, want [default/solo]", got)
	}
	if _, st, _ := e.fw.RunPreFilterPlugins(ctx, framework.NewCycleState(), solo); !st.IsSuccess() {
		t.Fatalf("solo after the gang failed: %v", st)
	}
}

// A gang must fit within the power domains as a whole too, and the
// refusal names the gang and the domain. Nodes a (rack r1) and b (rack
// r2) idle at 35 W, racks limited to 250 W, the cluster budget never
// binds; a pod alone on an idle node takes its rack to 200 W.
//
// Idle cluster, gang of three: g-0 goes on a (+165 W: 200 W), g-1 not on
// a (+60 W: 260 W) but on b (200 W), g-2 on neither (260 W each): the
// cluster is idle, so the gang can never fit and is refused for good.
//
// With "run" on b (rack r2 at 200 W), a gang of two: g-0 on a (200 W;
// +60 W on b would be 260 W), g-1 on neither (260 W each): it waits, as on
// an idle cluster it would fit (a and b).
func TestBudgetGangWithinDomains(t *testing.T) {
	nodes := []*v1.Node{racked("a", "r1", ""), racked("b", "r2", "")}
	args := BudgetArgs{BudgetWatts: 1e5, Domains: racks(250, nil)}
	e, _ := gangEnvWith(t, nodes, args, gang3()...)
	_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), gang3()[0])
	want := "power budget: gang default/g: its 3 pods do not fit as a whole even on an idle cluster: power domain wattsched.io/rack=r1 (rack) cannot take 60 W more on node a within its limit of 250 W: the gang can never be admitted"
	if st.Code() != fwk.UnschedulableAndUnresolvable || st.Message() != want {
		t.Fatalf("gang of three: %v %q, want %q", st.Code(), st.Message(), want)
	}
	two := gang3()[:2]
	nodes = []*v1.Node{racked("a", "r1", ""), racked("b", "r2", "")}
	e, _ = gangEnvWith(t, nodes, args, append(two, runningOnB())...)
	_, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), two[0])
	want = "power budget: gang default/g: its 2 pods do not fit as a whole: power domain wattsched.io/rack=r1 (rack) cannot take 60 W more on node a within its limit of 250 W"
	if st.Code() != fwk.Unschedulable || st.Message() != want {
		t.Fatalf("gang of two beside run: %v %q, want %q", st.Code(), st.Message(), want)
	}
	// Without run, the gang of two is admitted.
	nodes = []*v1.Node{racked("a", "r1", ""), racked("b", "r2", "")}
	e, _ = gangEnvWith(t, nodes, args, two...)
	if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), two[0]); !st.IsSuccess() {
		t.Fatalf("gang of two: %v", st)
	}
}
