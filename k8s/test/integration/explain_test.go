package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/plugins"
)

const explainConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
  - schedulerName: wattsched-explain
    plugins:
      multiPoint:
        enabled:
          - name: WattschedGPU
      preScore:
        disabled: [{name: "*"}]
        enabled: [{name: PWR}]
      score:
        disabled: [{name: "*"}]
        enabled: [{name: PWR, weight: 1}]
      preBind:
        enabled: [{name: PWR}]
    pluginConfig:
      - name: PWR
        args:
          explain: true
`

// A real kube-scheduler with PWR's explain on writes the annotation that
// says why the pod went to its node.
func TestExplainAnnotation(t *testing.T) {
	cs, rc := apiServer(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(explainConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []cluster.NodeSpec{
		{Name: "t4", CPUMilli: 32000, MemMiB: 65536, GPUs: 2, GPUModel: "T4"},
		{Name: "v100", CPUMilli: 96000, MemMiB: 65536, GPUs: 8, GPUModel: "V100M16"},
	} {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(s), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	startScheduler(t, cs, rc, cfg)
	task := job.Task{Demand: job.Demand{CPUMilli: 4000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), podObject(&task, "why", "wattsched-explain"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := waitScheduled(cs, "why", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out.Node != "t4" {
		t.Fatalf("pod on %q (%s), want t4", out.Node, out.Message)
	}
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), "why", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var x plugins.Explanation
	if err := json.Unmarshal([]byte(p.Annotations[plugins.ExplainAnnotation(plugins.PWRName)]), &x); err != nil {
		t.Fatalf("annotation %q: %v", p.Annotations[plugins.ExplainAnnotation(plugins.PWRName)], err)
	}
	// The pod adds one Xeon socket (15 -> 120 W) and one GPU: a T4
	// 10 -> 70 W (-165 in all), a V100M16 30 -> 300 W (-375); min-max
	// normalised: 100 and 0.
	want := plugins.Explanation{Chosen: plugins.NodeExplanation{Node: "t4", Raw: -165, Score: 100},
		Next: []plugins.NodeExplanation{{Node: "v100", Raw: -375, Score: 0}}, Feasible: 2}
	if diff := cmp.Diff(want, x); diff != "" {
		t.Errorf("explanation (-want +got):\n%s", diff)
	}
}
