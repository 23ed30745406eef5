package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/trace/k8sdump"
)

// The core's import of `kubectl get nodes,pods -o json` reads what a real
// API server returns for nodes and pods made the way the plugins read
// them: capacities, GPU models, whole GPUs and shares.
func TestImportFromAPIServer(t *testing.T) {
	cs, _ := apiServer(t)
	ctx := context.Background()
	specs := []cluster.NodeSpec{
		{Name: "imp-a", CPUMilli: 32000, MemMiB: 65536, GPUs: 4, GPUModel: "T4"},
		{Name: "imp-b", CPUMilli: 16000, MemMiB: 32768},
	}
	createNodes(t, cs, specs)
	tasks := map[string]job.Task{
		"imp-whole": {Demand: job.Demand{CPUMilli: 1500, MemMiB: 2048, GPUCount: 2, GPUMilli: 1000}},
		"imp-share": {Demand: job.Demand{CPUMilli: 250, MemMiB: 512, GPUCount: 1, GPUMilli: 300, GPUSpec: []string{"T4"}}},
	}
	for name, task := range tasks {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, podObject(&task, name, "default-scheduler"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// What kubectl prints: a List whose items carry their kind.
	var items []json.RawMessage
	for i := range nodes.Items {
		nodes.Items[i].Kind = "Node"
		b, _ := json.Marshal(&nodes.Items[i])
		items = append(items, b)
	}
	for i := range pods.Items {
		pods.Items[i].Kind = "Pod"
		b, _ := json.Marshal(&pods.Items[i])
		items = append(items, b)
	}
	list, _ := json.Marshal(map[string]any{"kind": "List", "items": items})
	d, err := k8sdump.Read(bytes.NewReader(list), "api.json")
	if err != nil {
		t.Fatal(err)
	}
	checkImportedNodes(t, d, specs)
	seen := 0
	for _, p := range d.Pods {
		want, ok := tasks[p.Name[len(ns)+1:]]
		if !ok {
			continue
		}
		seen++
		if p.Demand.CPUMilli != want.CPUMilli || p.Demand.MemMiB != want.MemMiB || p.Demand.GPUCount != want.GPUCount || p.Demand.GPUMilli != want.GPUMilli ||
			len(p.Demand.GPUSpec) != len(want.GPUSpec) {
			t.Errorf("pod %s: %+v, want %+v", p.Name, p.Demand, want.Demand)
		}
	}
	if seen != len(tasks) {
		t.Errorf("%d of %d pods found", seen, len(tasks))
	}
}

// createNodes creates the nodes on the API server.
func createNodes(t *testing.T, cs clientset.Interface, specs []cluster.NodeSpec) {
	t.Helper()
	for _, s := range specs {
		if _, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(s), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkImportedNodes checks that the dump holds the nodes as created.
func checkImportedNodes(t *testing.T, d *k8sdump.Dump, specs []cluster.NodeSpec) {
	t.Helper()
	got := map[string]cluster.NodeSpec{}
	for _, n := range d.Nodes {
		got[n.Name] = n
	}
	for _, s := range specs {
		g, ok := got[s.Name]
		if !ok || g.CPUMilli != s.CPUMilli || g.MemMiB != s.MemMiB || g.GPUs != s.GPUs || (s.GPUs > 0 && g.GPUModel == "") {
			t.Errorf("node %s: %+v (found %v), want %+v", s.Name, g, ok, s)
		}
	}
}
