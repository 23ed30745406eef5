package plugins

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/wattsched/wattsched/hw"
)

// The nodes of the idle checks, by hand (T4 10 W idle; a Xeon socket of
// 32 vCPU 15 W idle):
//
//	a: 32 vCPU (1 socket), 2 T4: 15 + 2x10 = 35 W
//	b: 64 vCPU (2 sockets), 4 T4: 30 + 4x10 = 70 W
//	x: a GPU model the catalog lacks: not modelled, not counted
//
// idle 105 W.
func idleNodes() []*v1.Node {
	return []*v1.Node{gpuNode("b", "T4", 4, 64000), gpuNode("x", "NO-SUCH-GPU", 8, 96000), gpuNode("a", "T4", 2, 32000)}
}

func TestIdleWarning(t *testing.T) {
	for _, tc := range []struct {
		budget hw.Watts
		warn   bool
	}{{100, true}, {105, true}, {106, false}} {
		got := idleWarning(hw.Default(), idleNodes(), tc.budget)
		if tc.warn != (got != "") {
			t.Errorf("budget %v W: warning %q, want one: %v", tc.budget, got, tc.warn)
		}
		if tc.warn && !strings.Contains(got, "modelled idle power 105.0 W of the 2 nodes it can model (1 it cannot)") {
			t.Errorf("budget %v W: %q", tc.budget, got)
		}
	}
}

// PowerBudget checks its budget at start against the nodes of the API
// server, once the node informer has synced.
func TestBudgetWarnsBelowIdleAtStart(t *testing.T) {
	for _, tc := range []struct {
		budget float64
		warn   bool
	}{{100, true}, {1000, false}} {
		cs := fake.NewClientset()
		for _, n := range idleNodes() {
			if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		var b *Budget
		plugins := append(gpuPlugin(GPUArgs{}),
			tf.RegisterPluginAsExtensions(BudgetName, func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
				p, err := NewBudget(ctx, obj, h)
				b, _ = p.(*Budget)
				return p, err
			}, "PreFilter", "Filter"),
			withArgs(BudgetName, BudgetArgs{BudgetWatts: tc.budget}))
		e := envWith(t, cs, idleNodes(), nil, plugins...)
		ctx, cancel := context.WithCancel(context.Background())
		e.factory.Start(ctx.Done())
		select {
		case <-b.idle.done:
		case <-time.After(30 * time.Second):
			t.Fatal("the idle check did not run")
		}
		cancel()
		if tc.warn != (b.idle.warning != "") || tc.warn && !strings.Contains(b.idle.warning, "budgetWatts 100 W is not above the modelled idle power 105.0 W") {
			t.Errorf("budget %v W: warning %q, want one: %v", tc.budget, b.idle.warning, tc.warn)
		}
	}
}
