package plugins

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

func budgetPlugins(watts float64) []tf.RegisterPluginFunc {
	return append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
		withArgs(BudgetName, BudgetArgs{BudgetWatts: watts}))
}

func created(p *v1.Pod, sec int64) *v1.Pod {
	p.CreationTimestamp = metav1.NewTime(time.Unix(sec, 0))
	return p
}

// Node a (2 T4, one 32-vCPU Xeon socket) idles at 15 + 2*10 = 35 W under
// the PWR model; one whole GPU and 1 vCPU add (70-10) + (120-15) = 165 W,
// a CPU-only pod 105 W.
func TestBudgetAdmitsInOrder(t *testing.T) {
	big := created(pod("big", 1000, 1000, nil), 1)
	small := created(pod("small", 1000, 0, nil), 2)
	e := newEnv(t, []*v1.Node{gpuNode("a", "T4", 2, 32000)}, []*v1.Pod{big}, budgetPlugins(150)...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.factory.Start(ctx.Done())
	e.factory.WaitForCacheSync(ctx.Done())

	_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), big)
	if want := "power budget: estimated cluster power 35 W + at least 165 W for this pod exceeds the budget of 150 W"; st.IsSuccess() || st.Message() != want {
		t.Fatalf("big: %q, want %q", st.Message(), want)
	}
	// small alone would fit (35 + 105 <= 150) but waits behind the older pod.
	_, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), small)
	if st.IsSuccess() || !strings.Contains(st.Message(), "waiting behind default/big") {
		t.Fatalf("small: %v, want waiting behind default/big", st)
	}
	// When big leaves, small goes.
	if err := e.cs.CoreV1().Pods("default").Delete(context.Background(), "big", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, st, _ = e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), small)
		if st.IsSuccess() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("small still waiting after big was deleted: %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
