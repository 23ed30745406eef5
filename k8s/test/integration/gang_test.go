package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/plugins"
)

// gangGate holds the test's gang pods until all are created, as a gang
// mechanism's PreEnqueue does until a gang is whole.
const gangGate = "wattsched.io/test-gang-complete"

// PowerBudget on a real API server admits a gang as a whole or not at
// all. Two nodes of 4 T4 and one 32-vCPU socket idle at 55 W each
// (110 W); a one-GPU pod adds 165 W on an idle node, 60 W beside another.
// Budget 400 W. Gang big (4 one-GPU pods) needs 165 + 3*60 = 345 W even on
// the idle cluster: 455 W, refused for good, and none of its pods is
// bound (one by one, three would fit: 110 + 165 + 60 + 60 = 395 W). Gang
// small (2 pods) needs 165 + 60 = 225 W: 335 W, both bound.
func TestBudgetGangWholeOrNone(t *testing.T) {
	cs, rc := apiServer(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	conf := strings.Replace(budgetConfig, "budgetWatts: 250", "budgetWatts: 400", 1)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2"} {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(cluster.NodeSpec{Name: n, CPUMilli: 32000, MemMiB: 65536, GPUs: 4, GPUModel: "T4"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	startScheduler(t, cs, rc, cfg)
	gpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
	gang := func(g string, n int) []string {
		var names []string
		for i := range n {
			p := podObject(&gpu, fmt.Sprintf("%s-%d", g, i), "wattsched-budget")
			p.Labels = map[string]string{plugins.LabelPodGroup: g}
			p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: gangGate}}
			if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			names = append(names, p.Name)
		}
		for _, name := range names {
			p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Spec.SchedulingGates = nil
			if _, err := cs.CoreV1().Pods(ns).Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return names
	}
	big := gang("big", 4)
	for _, name := range big {
		out, err := waitScheduled(cs, name, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		want := "power budget: gang default/big: its 4 pods would add at least 345 W even on an idle cluster (110 W), over the budget of 400 W"
		if out.Node != "" || !strings.Contains(out.Message, want) {
			t.Fatalf("%s: node %q message %q; want refused with %q", name, out.Node, out.Message, want)
		}
	}
	small := gang("small", 2)
	for _, name := range small {
		out, err := waitScheduled(cs, name, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if out.Node == "" {
			t.Fatalf("%s not bound: %s", name, out.Message)
		}
	}
	// Still none of big's pods bound.
	for _, name := range big {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || p.Spec.NodeName != "" {
			t.Fatalf("%s: bound to %q (%v): half a gang", name, p.Spec.NodeName, err)
		}
	}
}
