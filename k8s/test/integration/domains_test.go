package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// domainConfig is budgetConfig with a cluster budget that never binds
// and racks from the wattsched.io/rack label, 300 W each.
var domainConfig = strings.Replace(budgetConfig, "          budgetWatts: 250\n", `          budgetWatts: 100000
          domains:
            levels:
              - name: rack
                labelKey: wattsched.io/rack
                limitWatts: 300
`, 1)

// PowerBudget on a real API server with four nodes in two racks: a pod is
// refused on a rack's limit with the rack named in its status and in its
// FailedScheduling event, another rack keeps taking pods meanwhile, and
// the refused pod is placed once a pod in its rack ends; a pod that no
// rack can take waits with every full rack named until one frees up.
//
// Each node (4 T4, one 32-vCPU socket) idles at 15 + 4*10 = 55 W under the
// PWR model: a rack of two idles at 110 W. A one-GPU pod on an idle node
// adds 60 + 105 = 165 W, a second one on the same node 60 W.
func TestBudgetRackLimit(t *testing.T) {
	if !strings.Contains(domainConfig, "domains:") {
		t.Fatal("the test configuration has no domains")
	}
	cs, rc := apiServer(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(domainConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct{ name, rack string }{{"n1", "r1"}, {"n2", "r1"}, {"n3", "r2"}, {"n4", "r2"}} {
		obj := nodeObject(cluster.NodeSpec{Name: n.name, CPUMilli: 32000, MemMiB: 65536, GPUs: 4, GPUModel: "T4"})
		obj.Labels["wattsched.io/rack"] = n.rack
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	startScheduler(t, cs, rc, cfg)
	gpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
	create := func(name, rack string) {
		t.Helper()
		p := podObject(&gpu, name, "wattsched-budget")
		if rack != "" {
			p.Spec.NodeSelector = map[string]string{"wattsched.io/rack": rack}
		}
		if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bound := func(name string) string {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if out, err := waitScheduled(cs, name, 30*time.Second); err != nil {
				t.Fatal(err)
			} else if out.Node != "" {
				return out.Node
			}
		}
		t.Fatalf("pod %s not bound", name)
		return ""
	}
	// a: r1 at 110 + 165 = 275 W.
	create("a", "r1")
	onA := bound("a")
	if onA != "n1" && onA != "n2" {
		t.Fatalf("a on %s, want a node of r1", onA)
	}
	// b: 275 + 60 = 335 W on a's node, 275 + 165 = 440 W on the other: over 300 W.
	create("b", "r1")
	out, err := waitScheduled(cs, "b", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := "power domain wattsched.io/rack=r1 (rack): 275 W + 60 W for this pod on node " + onA + " exceeds its limit of 300 W"
	if out.Node != "" || !strings.Contains(out.Message, want) {
		t.Fatalf("b: node %q message %q; want unschedulable with %q", out.Node, out.Message, want)
	}
	t.Logf("b: %s", out.Message)
	// The event says the same.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		evs, err := cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range evs.Items {
			found = found || (e.Regarding.Name == "b" && e.Reason == "FailedScheduling" && strings.Contains(e.Note, "wattsched.io/rack=r1 (rack)"))
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no FailedScheduling event for b naming rack r1")
		}
	}
	// Rack r2 is not r1: c goes there (110 + 165 = 275 W) while b waits.
	create("c", "")
	if n := bound("c"); n != "n3" && n != "n4" {
		t.Fatalf("c on %s, want a node of r2", n)
	}
	if out, err := waitScheduled(cs, "b", time.Second); err != nil || out.Node != "" {
		t.Fatalf("b: %+v %v, want still unschedulable", out, err)
	}
	// a ends: r1 back at 110 W, b takes 275 W.
	deletePod(t, cs, "a")
	if n := bound("b"); n != "n1" && n != "n2" {
		t.Fatalf("b on %s, want a node of r1", n)
	}
	// Both racks at 275 W: d, free to go anywhere, fits no rack's
	// headroom (+60 W at best, 335 W > 300 W) and waits at PreFilter with
	// both racks named; it goes to r2 when c ends there.
	create("d", "")
	out, err = waitScheduled(cs, "d", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"r1", "r2"} {
		if want := "power domain wattsched.io/rack=" + r + " (rack): 275 W + at least 60 W"; out.Node != "" || !strings.Contains(out.Message, want) {
			t.Fatalf("d: node %q message %q; want waiting with %q", out.Node, out.Message, want)
		}
	}
	t.Logf("d: %s", out.Message)
	deletePod(t, cs, "c")
	if n := bound("d"); n != "n3" && n != "n4" {
		t.Fatalf("d on %s, want a node of r2", n)
	}
}
