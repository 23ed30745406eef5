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
	"github.com/wattsched/wattsched/k8s/gpushare"
)

const budgetConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
  - schedulerName: wattsched-budget
    plugins:
      multiPoint:
        enabled:
          - name: WattschedGPU
          - name: PowerBudget
      preScore:
        disabled: [{name: "*"}]
        enabled: [{name: PWR}]
      score:
        disabled: [{name: "*"}]
        enabled: [{name: PWR, weight: 1}]
    pluginConfig:
      - name: PowerBudget
        args:
          budgetWatts: 250
`

// Bad input reaches the pod's status as a reason, and the power budget
// admits waiting pods in order as power frees up.
func TestStatusesAndBudget(t *testing.T) {
	cs, rc := apiServer(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(budgetConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	// t4 (4 T4, one 32-vCPU socket) idles at 15 + 4*10 = 55 W under the PWR
	// model; mystery's GPU model is not in the catalog.
	for _, s := range []cluster.NodeSpec{
		{Name: "t4", CPUMilli: 32000, MemMiB: 65536, GPUs: 4, GPUModel: "T4"},
		{Name: "mystery", CPUMilli: 32000, MemMiB: 65536, GPUs: 4, GPUModel: "Mystery-GPU"},
	} {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(s), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	startScheduler(t, cs, rc, cfg)
	create := func(name string, task job.Task, ann map[string]string) {
		t.Helper()
		p := podObject(&task, name, "wattsched-budget")
		for k, v := range ann {
			p.Annotations[k] = v
		}
		if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(name, node, msg string) {
		t.Helper()
		out, err := waitScheduled(cs, name, 30*time.Second)
		// A pod that waited keeps its old condition until it is bound.
		for deadline := time.Now().Add(30 * time.Second); err == nil && node != "" && out.Node == "" && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			out, err = waitScheduled(cs, name, 30*time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		if out.Node != node || !strings.Contains(out.Message, msg) {
			t.Fatalf("pod %s: node %q message %q; want node %q message containing %q", name, out.Node, out.Message, node, msg)
		}
		t.Logf("pod %s: node %q %s", name, out.Node, out.Message)
	}
	cpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024}}
	create("bad-milli", cpu, map[string]string{gpushare.AnnGPUMilli: "half"})
	expect("bad-milli", "", `annotation wattsched.io/gpu-milli "half": not an integer`)
	gpu := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
	mystery := gpu
	mystery.GPUSpec = []string{"Mystery-GPU"}
	create("mystery", mystery, nil)
	expect("mystery", "", `unknown GPU model "Mystery-GPU"`)
	deletePod(t, cs, "mystery")

	// One GPU pod takes t4 to 55 + 60 + 105 = 220 W; a second would add 60.
	create("a", gpu, nil)
	expect("a", "t4", "")
	create("b", gpu, nil)
	expect("b", "", "power budget: estimated cluster power 220 W + at least 60 W for this pod exceeds the budget of 250 W")
	// Creation times have one-second resolution: b and c may tie, and
	// ties go by namespace/name.
	create("c", cpu, nil)
	expect("c", "", "power budget: waiting behind default/b")
	deletePod(t, cs, "a")
	expect("b", "t4", "")
	deletePod(t, cs, "b")
	expect("c", "t4", "")
}
