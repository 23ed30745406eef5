package k8sdump

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readSystem reads testdata/system.json: a control-plane CPU node, a
// tainted H100 node, an L40S node and a gpushare L40S node, with coredns,
// two kube-proxy DaemonSet pods, a mirror (static) kube-apiserver pod, a
// device-plugin DaemonSet pod asking for a GPU, an ended DaemonSet pod,
// Prometheus in namespace monitoring, and job pods: one tolerating the
// GPU taint, three that do not, two of aliyun.com/gpu-mem, one of HAMi's
// nvidia.com/gpumem and one with malformed owner references.
func readSystem(t *testing.T, opt Options) *Dump {
	t.Helper()
	f, err := os.Open("testdata/system.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := ReadWith(f, "system.json", opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// No system pod becomes a job: DaemonSet, mirror and static pods, pods
// of kube-system and of the namespaces named are kept out, and their
// requests are taken off their nodes' allocatable.
func TestReadSystemPods(t *testing.T) {
	d := readSystem(t, Options{})
	var jobs []string
	for _, p := range d.Pods {
		jobs = append(jobs, p.Name)
	}
	// Pods in creation order, then by name.
	if diff := cmp.Diff([]string{"ml/infer-l40s", "ml/infer-share", "ml/train-h100", "ml/web-cpu", "monitoring/prometheus-k8s-0", "ml/wait-share"}, jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	type sys struct{ Pod, Why string }
	var got []sys
	for _, s := range d.System {
		got = append(got, sys{s.Pod, s.Why})
	}
	want := []sys{
		{"kube-system/coredns-5d78c9869d-abcde", "namespace kube-system"},
		{"kube-system/kube-proxy-x1", "DaemonSet kube-proxy"},
		{"kube-system/kube-proxy-x2", "DaemonSet kube-proxy"},
		{"kube-system/kube-apiserver-cpu-0", "mirror pod (kubernetes.io/config.mirror)"},
		{"gpu-operator/nvidia-device-plugin-daemonset-q2", "DaemonSet nvidia-device-plugin-daemonset"},
		{"ml/node-exporter-done", "DaemonSet node-exporter"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("system pods (-want +got):\n%s", diff)
	}
	// cpu-0: coredns 100m + kube-apiserver 250m = 350 milli-CPU of 16000;
	// coredns' 70 MiB of 65536. gpu-h100-0: kube-proxy 100m, 64 MiB.
	// gpu-l40s-0: kube-proxy 100m + device plugin 50m = 150, 64 + 128 =
	// 192 MiB, and the plugin's GPU, not reserved. node-exporter ended:
	// nothing.
	wantRes := []Reserved{
		{Node: "cpu-0", Pods: 2, CPUMilli: 350, MemMiB: 70, AllocCPUMilli: 16000, AllocMemMiB: 65536},
		{Node: "gpu-h100-0", Pods: 1, CPUMilli: 100, MemMiB: 64, AllocCPUMilli: 96000, AllocMemMiB: 1000 * 1024},
		{Node: "gpu-l40s-0", Pods: 2, CPUMilli: 150, MemMiB: 192, GPUMilli: 1000, AllocCPUMilli: 64000, AllocMemMiB: 512 * 1024},
	}
	if diff := cmp.Diff(wantRes, d.Reserved); diff != "" {
		t.Errorf("reserved (-want +got):\n%s", diff)
	}
	nodes := map[string][3]int64{}
	for _, n := range d.Nodes {
		nodes[n.Name] = [3]int64{n.CPUMilli, n.MemMiB, int64(n.GPUs)}
	}
	wantNodes := map[string][3]int64{"cpu-0": {15650, 65466, 0}, "gpu-h100-0": {95900, 1023936, 8}, "gpu-l40s-0": {63850, 524096, 4}, "share-l40s-0": {64000, 524288, 4}}
	if diff := cmp.Diff(wantNodes, nodes); diff != "" {
		t.Errorf("nodes' cpu, memory, GPUs (-want +got):\n%s", diff)
	}
	if !slicesContain(d.Warnings, "gpu-operator/nvidia-device-plugin-daemonset-q2 (system: DaemonSet nvidia-device-plugin-daemonset) requests 1 GPUs on node gpu-l40s-0: not reserved") {
		t.Errorf("no warning for the system pod's GPU: %q", d.Warnings)
	}
	// The malformed owner references and the CPU-only pod of a GPU
	// resource not modelled are skipped, not jobs.
	var skipped []string
	for _, s := range d.Skipped {
		skipped = append(skipped, s.Pod+": "+s.Reason)
	}
	wantSkipped := []string{
		"ml/hami-gpumem: spec.containers[].resources.requests.nvidia.com/gpumem: a GPU resource wattsched does not model (docs/formats.md): skipped rather than imported as a CPU-only pod",
		"ml/bad-owner: metadata.ownerReferences: not a list of owner references ({apiVersion, kind, name, uid}): whether it is a system pod is unknown",
	}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	// With --system-namespace monitoring, Prometheus is a system pod too:
	// 2000 more milli-CPU and 4096 MiB reserved on cpu-0.
	d = readSystem(t, Options{SystemNamespaces: []string{"monitoring"}})
	if len(d.Pods) != 5 || len(d.System) != 7 || d.Reserved[0].CPUMilli != 2350 || d.Reserved[0].MemMiB != 4166 || d.Nodes[0].CPUMilli != 13650 {
		t.Errorf("monitoring: %d jobs, %d system pods, reserved %+v, node %+v", len(d.Pods), len(d.System), d.Reserved[0], d.Nodes[0])
	}
	if _, err := ReadWith(strings.NewReader(mustRead(t, "testdata/system.json")), "system.json", Options{Strict: true}); err == nil ||
		!strings.Contains(err.Error(), "system.json: items[16].spec.containers[].resources.requests.nvidia.com/gpumem: a GPU resource wattsched does not model") {
		t.Errorf("strict: %v", err)
	}
}

// aliyun.com/gpu-mem is the share of one GPU its GiB are: on the node
// the pod is bound to (share-l40s-0: 192 GiB over 4 GPUs = 48 GiB each,
// 12 GiB = 250 thousandths), or, unbound, on the one GPU size every
// gpushare node has (24 GiB of 48 = 500).
func TestReadGPUMem(t *testing.T) {
	d := readSystem(t, Options{})
	got := map[string][2]int64{}
	for _, p := range d.Pods {
		got[p.Name] = [2]int64{int64(p.Demand.GPUCount), p.Demand.GPUMilli}
	}
	if got["ml/infer-share"] != [2]int64{1, 250} || got["ml/wait-share"] != [2]int64{1, 500} {
		t.Errorf("gpu-mem shares %v", got)
	}
	node := `{"kind": "Node", "metadata": {"name": "s", "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"}}, "status": {"allocatable": {"cpu": "8", "aliyun.com/gpu-mem": "96", "aliyun.com/gpu-count": "2"}}}`
	podOn := func(node, gib string) string {
		return `{"kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"nodeName": "` + node + `", "containers": [{"resources": {"requests": {"aliyun.com/gpu-mem": "` + gib + `"}}}]}}`
	}
	for _, c := range []struct{ name, in, want string }{
		{"more than one GPU", `{"items": [` + node + `, ` + podOn("s", "49") + `]}`, "49 GiB: more than one GPU's 48 GiB"},
		{"node without gpu-mem", `{"items": [` + node + `, {"kind": "Node", "metadata": {"name": "c"}, "status": {"allocatable": {"cpu": "8"}}}, ` + podOn("c", "4") + `]}`, "4 GiB on node c, which advertises no aliyun.com/gpu-mem"},
		{"unbound, no gpushare node", `{"items": [{"kind": "Node", "metadata": {"name": "c"}, "status": {"allocatable": {"cpu": "8"}}}, ` + podOn("", "4") + `]}`, "not bound to a node, and the nodes advertising aliyun.com/gpu-mem have GPUs of [] GiB"},
		{"half a GiB", `{"items": [` + node + `, ` + podOn("s", "500m") + `]}`, `"500m" is not a whole number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := Read(strings.NewReader(c.in), "c.json")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Pods) != 0 || len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0].Reason, c.want) {
				t.Errorf("pods %+v, skipped %+v, want it skipped with %q", d.Pods, d.Skipped, c.want)
			}
		})
	}
}

// Taints: the NoSchedule and NoExecute taints of each node, and the kept
// pods that do not tolerate them (PreferNoSchedule is left out).
func TestReadTaints(t *testing.T) {
	d := readSystem(t, Options{})
	want := []NodeTaints{{Node: "gpu-h100-0", Taints: []Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
		Intolerant: []string{"ml/infer-l40s", "ml/infer-share", "ml/web-cpu", "monitoring/prometheus-k8s-0", "ml/wait-share"}}}
	if diff := cmp.Diff(want, d.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
}

// Kubernetes' toleration rule, case by case.
func TestTolerates(t *testing.T) {
	taint := Taint{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}
	for _, c := range []struct {
		tl   Toleration
		want bool
	}{
		{Toleration{Key: "nvidia.com/gpu", Operator: "Exists"}, true},
		{Toleration{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}, true},
		{Toleration{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoExecute"}, false}, // another effect
		{Toleration{Operator: "Exists"}, true},                                              // empty key, Exists: every taint
		{Toleration{Key: "nvidia.com/gpu", Value: "present"}, true},                         // Equal is the default
		{Toleration{Key: "nvidia.com/gpu", Operator: "Equal", Value: "absent"}, false},
		{Toleration{Key: "other", Operator: "Exists"}, false},
		{Toleration{Key: "nvidia.com/gpu", Operator: "Bogus", Value: "present"}, false},
	} {
		if got := c.tl.Tolerates(taint); got != c.want {
			t.Errorf("%+v tolerates %v: %v, want %v", c.tl, taint, got, c.want)
		}
	}
}

// Pods are skipped (strict: the error) when their owner references are
// malformed, a time is outside 1970..2100, or a GPU count is a fraction;
// an empty dump says so; a name that would break a line is escaped.
func TestReadRefusals(t *testing.T) {
	node := `{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"}}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "2"}}}`
	podWith := func(meta, spec, status string) string {
		return `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-01-01T00:00:00Z"` + meta + `}, "spec": {"containers": [{"resources": {"requests": {"cpu": "1"` + spec + `}}}]}, "status": {"phase": "Running"` + status + `}}]}`
	}
	for _, c := range []struct{ name, in, want string }{
		{"owner references not a list", podWith(`, "ownerReferences": {"kind": "DaemonSet"}`, "", ""), "items[1].metadata.ownerReferences: not a list of owner references"},
		{"owner reference without a kind", podWith(`, "ownerReferences": [{"name": "x"}]`, "", ""), "items[1].metadata.ownerReferences[0].kind: missing"},
		{"owner reference without a name", podWith(`, "ownerReferences": [{"kind": "DaemonSet"}]`, "", ""), "items[1].metadata.ownerReferences[0].name: missing"},
		{"created in year 1", strings.Replace(podWith("", "", ""), "2026-01-01T00:00:00Z", "0001-01-01T00:00:00Z", 1), `items[1].metadata.creationTimestamp: "0001-01-01T00:00:00Z" is not after 1970-01-01T00:00:00Z and before 2100-01-01T00:00:00Z`},
		{"started in 9999", podWith("", "", `, "startTime": "9999-12-31T23:59:59Z"`), `items[1].status.startTime: "9999-12-31T23:59:59Z" is not after 1970`},
		{"finished in 9999", strings.Replace(podWith("", "", `, "startTime": "2026-01-01T00:01:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "9999-01-01T00:00:00Z"}}}]`), `"Running"`, `"Succeeded"`, 1), `items[1].status.containerStatuses[0].state.terminated.finishedAt: "9999-01-01T00:00:00Z" is not after`},
		{"at the epoch", podWith("", "", `, "startTime": "1970-01-01T00:00:00Z"`), `items[1].status.startTime: "1970-01-01T00:00:00Z" is not after 1970`},
		{"half a GPU", podWith("", `, "nvidia.com/gpu": "500m"`, ""), `items[1].spec.containers[0].resources.requests.nvidia.com/gpu: "500m" is not a whole number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ReadWith(strings.NewReader(c.in), "c.json", Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "c.json: "+c.want) {
				t.Errorf("strict: %v, want %q", err, c.want)
			}
			d, err := Read(strings.NewReader(c.in), "c.json")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Pods) != 0 || len(d.Skipped) != 1 || !strings.Contains(d.Skipped[0].Item+"."+d.Skipped[0].Reason, c.want) {
				t.Errorf("pods %d, skipped %+v, want one skipped with %q", len(d.Pods), d.Skipped, c.want)
			}
		})
	}
	for _, in := range []string{"", "  \n"} {
		if _, err := Read(strings.NewReader(in), "standard input"); err == nil || err.Error() != "standard input: empty dump: want the JSON of 'kubectl get nodes,pods -A -o json'" {
			t.Errorf("%q: %v", in, err)
		}
	}
	d, err := Read(strings.NewReader(strings.Replace(podWith("", "", ""), `"name": "p"`, `"name": "p\nwarning: forged"`, 1)), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Pod != `"ml/p\nwarning: forged"` {
		t.Errorf("skipped %+v: want the name escaped", d.Skipped)
	}
}

// The scenario's comment and description quote the dump's name, whatever
// it holds.
func TestFilesQuoteSource(t *testing.T) {
	d, err := Read(strings.NewReader(`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}}]}`), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	sc := string(d.Files("a: b #c\n\"d\".json", nil)["scenario.yaml"])
	for _, want := range []string{`# Imported by wattsched import k8s from "a: b #c\n\"d\".json": 1 nodes`,
		`description: "policies compared on the workload and nodes of a Kubernetes cluster (a: b #c\n\"d\".json)"`} {
		if !strings.Contains(sc, want) {
			t.Errorf("scenario.yaml lacks %s:\n%s", want, sc)
		}
	}
}

// A kube_pod_completion_time before the pod's start is reported whatever
// the pod's phase (a Running pod's too), and not used.
func TestFillTimesCompletionBeforeStartRunning(t *testing.T) {
	in := `{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
	 {"kind": "Pod", "metadata": {"name": "r", "namespace": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Running", "startTime": "2026-01-01T00:10:00Z"}}]}`
	d, err := Read(strings.NewReader(in), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	if n := d.FillTimes(map[string]PodTime{"x/r": {End: at(5)}}); n != 0 || !d.Pods[0].End.IsZero() {
		t.Errorf("%d pods changed, end %s", n, d.Pods[0].End)
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "x/r: kube_pod_completion_time 2026-01-01T00:05:00Z before its start 2026-01-01T00:10:00Z: not used") {
		t.Errorf("warnings %q", d.Warnings)
	}
}

func slicesContain(l []string, sub string) bool {
	for _, s := range l {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What makes a pod a system pod, rule by rule.
func TestSystemWhy(t *testing.T) {
	for _, c := range []struct{ name, ns, meta, want string }{
		{"ReplicaSet pod in ml: a job", "ml", `, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web"}]`, ""},
		{"DaemonSet pod in ml", "ml", `, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent"}]`, "DaemonSet agent"},
		{"static pod owned by its Node", "ml", `, "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n"}]`, "static pod (owner Node n)"},
		{"mirror pod", "ml", `, "annotations": {"kubernetes.io/config.mirror": "abc"}`, "mirror pod (kubernetes.io/config.mirror)"},
		{"kube-system", "kube-system", "", "namespace kube-system"},
		{"a namespace named", "monitoring", "", "namespace monitoring"},
		{"another namespace", "other", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := `{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
			 {"kind": "Pod", "metadata": {"name": "p", "namespace": "` + c.ns + `", "creationTimestamp": "2026-01-01T00:00:00Z"` + c.meta + `}, "spec": {"nodeName": "n"}, "status": {"phase": "Running"}}]}`
			d, err := ReadWith(strings.NewReader(in), "c.json", Options{Strict: true, SystemNamespaces: []string{"monitoring"}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == "" && (len(d.Pods) != 1 || len(d.System) != 0):
				t.Errorf("want a job: pods %+v, system %+v", d.Pods, d.System)
			case c.want != "" && (len(d.Pods) != 0 || len(d.System) != 1 || d.System[0].Why != c.want || !d.System[0].Reserved):
				t.Errorf("want a reserved system pod (%s): pods %+v, system %+v", c.want, d.Pods, d.System)
			}
		})
	}
}

// A resource or label name holding a newline or a byte that is not
// UTF-8 is escaped in warnings, skipped pods' reasons and errors: every
// message stays on one line.
func TestMessagesStayOnOneLine(t *testing.T) {
	in := `{"items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "X-MIG-9g\nforged"}}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "1"}}},
	 {"kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu\nforged": "1"}}}]}}]}`
	_, err := Read(strings.NewReader(in), "c.json")
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `X-MIG-9g\nforged`) {
		t.Errorf("node error %q: want the label escaped", err)
	}
	in = strings.Replace(in, `X-MIG-9g\nforged`, "NVIDIA-L40S", 1)
	d, err := Read(strings.NewReader(in), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Skipped) != 1 || strings.Contains(d.Skipped[0].Reason, "\n") || !strings.Contains(d.Skipped[0].Reason, `requests.nvidia.com/gpu\nforged`) {
		t.Errorf("skipped %+v: want one, the resource name escaped", d.Skipped)
	}
	if _, err := ReadWith(strings.NewReader(in), "c.json", Options{Strict: true}); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("strict: %q: want one line", err)
	}
	if got := EscapeLine("a\nb\x00c\xffd é"); got != `a\nb\x00c\xffd é` {
		t.Errorf("EscapeLine: %q", got)
	}
}
