package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
)

// budgetCluster starts an API server with one 4-T4 node (55 W idle) and
// the wattsched-budget profile at budget watts; create makes a pod for it
// (bound to node already when node != "", as another scheduler would).
func budgetCluster(t *testing.T, budget string) (clientset.Interface, func(name string, task job.Task, ann map[string]string, node string)) {
	cs, rc := apiServer(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(budgetConfig, "budgetWatts: 250", "budgetWatts: "+budget, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(cluster.NodeSpec{Name: "t4", CPUMilli: 32000, MemMiB: 65536, GPUs: 4, GPUModel: "T4"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	startScheduler(t, cs, rc, cfg)
	return cs, func(name string, task job.Task, ann map[string]string, node string) {
		t.Helper()
		p := podObject(&task, name, "wattsched-budget")
		p.Spec.NodeName = node
		for k, v := range ann {
			p.Annotations[k] = v
		}
		if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func expectOutcome(t *testing.T, cs clientset.Interface, name, node, msg string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := waitScheduled(cs, name, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if out.Node == node && strings.Contains(out.Message, msg) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: node %q message %q; want node %q message containing %q", name, out.Node, out.Message, node, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pods bound by someone else with annotations that do not add up never
// take their node out of scheduling: a new pod is placed there, and each
// foreign pod gets a Warning event naming what was wrong.
func TestForeignPodsDoNotPoisonTheirNode(t *testing.T) {
	cs, create := budgetCluster(t, "100000")
	cpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024}}
	gpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
	two := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 2, GPUMilli: 1000}}
	create("cpu-with-index", cpu, map[string]string{gpushare.AnnGPUIndex: "0"}, "t4")
	create("index-5", gpu, map[string]string{gpushare.AnnGPUIndex: "5"}, "t4")
	create("twice", two, map[string]string{gpushare.AnnGPUIndex: "0,0"}, "t4")
	create("bad-milli", cpu, map[string]string{gpushare.AnnGPUMilli: "abc"}, "t4")
	create("new", gpu, nil, "")
	expectOutcome(t, cs, "new", "t4", "")
	deadline := time.Now().Add(20 * time.Second)
	want := map[string]bool{"cpu-with-index": true, "index-5": true, "twice": true}
	for len(want) > 0 && time.Now().Before(deadline) {
		evs, err := cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs.Items {
			if e.Reason == "WattschedInconsistentPod" {
				delete(want, e.Regarding.Name)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(want) > 0 {
		t.Errorf("no WattschedInconsistentPod event for %v", want)
	}
}

// The budget never blocks behind a pod that cannot fit even on an idle
// cluster, nor behind a waiting pod that was changed.
func TestBudgetHeadOfLineBlocking(t *testing.T) {
	cs, create := budgetCluster(t, "250")
	cpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024}}
	gpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
	four := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 4, GPUMilli: 1000}}
	// 55 + 4 x 60 + 105 = 400 W > 250 W even on the idle node.
	create("huge", four, nil, "")
	expectOutcome(t, cs, "huge", "", "can never be admitted")
	create("small", cpu, nil, "")
	expectOutcome(t, cs, "small", "t4", "")
	// small keeps the socket awake (160 W); a takes 220 W; b waits for
	// power (280 W > 250 W); c waits behind b until b's annotation turns
	// malformed (a still-valid change leaves b waiting, rightly, in its
	// creation order).
	create("a", gpu, nil, "")
	expectOutcome(t, cs, "a", "t4", "")
	create("b", gpu, nil, "")
	expectOutcome(t, cs, "b", "", "exceeds the budget")
	create("c", cpu, nil, "")
	expectOutcome(t, cs, "c", "", "waiting behind default/b")
	b, err := cs.CoreV1().Pods(ns).Get(context.Background(), "b", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Annotations == nil {
		b.Annotations = map[string]string{}
	}
	b.Annotations[gpushare.AnnGPUMilli] = "abc" // now unreadable: rejected, never waiting
	if _, err := cs.CoreV1().Pods(ns).Update(context.Background(), b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectOutcome(t, cs, "c", "t4", "")
}
