package cli

import "strings"

// importNode is a node every hostile dump below has.
const importNode = `{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"}}, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"}}}`

// importDump is a dump of importNode and one pod with the given metadata
// extras, requests and status.
func importDump(meta, requests, status string) map[string]string {
	return map[string]string{"c.json": `{"kind": "List", "items": [` + importNode + `,
 {"kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"` + meta + `},
  "spec": {"containers": [{"resources": {"requests": {` + requests + `}}}]}, "status": {` + status + `}}]}`}
}

// hostileImport: import k8s of dumps with pods it cannot read, or reads
// only with a change: such a pod is skipped (or kept) with a warning
// naming its item and field, never aborting the import; --strict makes it
// the error; a node it cannot model is an error.
var hostileImport = []hostileCase{
	{name: "bad quantity: pod skipped with a warning", files: importDump("", `"cpu": "lots"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: `warning: skipped items[1] pod ml/p: spec.containers[0].resources.requests.cpu: "lots" is not a non-negative quantity`, stdout: "1 pods skipped"},
	{name: "bad quantity, --strict", files: importDump("", `"cpu": "lots"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: `c.json: items[1].spec.containers[0].resources.requests.cpu: "lots" is not a non-negative quantity`},
	{name: "gpu-milli and nvidia.com/gpu: 1 kept as the share", files: importDump(`, "annotations": {"wattsched.io/gpu-milli": "300"}`, `"cpu": "1", "nvidia.com/gpu": "1"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 0,
		errLine: `warning: items[1] pod ml/p: both wattsched.io/gpu-milli "300" and nvidia.com/gpu: 1 (another GPU-sharing convention): kept as 300 thousandths of one GPU`, stdout: "1 nodes and 1 pods"},
	{name: "gpu-milli and nvidia.com/gpu: 2 kept as whole GPUs", files: importDump(`, "annotations": {"wattsched.io/gpu-milli": "300"}`, `"cpu": "1", "nvidia.com/gpu": "2"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: "kept as 2 whole GPUs, the annotation left out"},
	{name: "gpu-milli out of range: skipped", files: importDump(`, "annotations": {"wattsched.io/gpu-milli": "1000"}`, `"cpu": "1"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: `warning: skipped items[1] pod ml/p: metadata.annotations["wattsched.io/gpu-milli"]: "1000": want 1..999 thousandths of one GPU`},
	{name: "MIG profile not in the table: skipped", files: importDump("", `"nvidia.com/mig-9g.1tb": "1"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: "warning: skipped items[1] pod ml/p: spec.containers[].resources.requests.nvidia.com/mig-9g.1tb: MIG profile 9g.1tb is not in the table (docs/formats.md): its GPU share is unknown"},
	{name: "MIG profile not in the table, --strict", files: importDump("", `"nvidia.com/mig-9g.1tb": "1"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "c.json: items[1].spec.containers[].resources.requests.nvidia.com/mig-9g.1tb: MIG profile 9g.1tb is not in the table"},
	{name: "MIG and whole GPUs in one pod, --strict", files: importDump("", `"nvidia.com/gpu": "1", "nvidia.com/mig-1g.10gb": "1"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "c.json: items[1].spec.containers[].resources.requests: both nvidia.com/gpu: 1 and MIG devices (1 x 1g.10gb)"},
	{name: "a GPU resource not modelled beside GPUs: kept with a warning", files: importDump("", `"cpu": "1", "nvidia.com/gpu": "1", "nvidia.com/gpumem": "4000"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 0,
		errLine: "warning: items[1] pod ml/p: requests nvidia.com/gpumem: 4000, which wattsched does not model: left out"},
	// Issue 37: a pod asking only for a GPU resource wattsched does not
	// model used to become a CPU-only job.
	{name: "only a GPU resource not modelled: skipped, not CPU-only", files: importDump("", `"cpu": "1", "nvidia.com/gpumem": "4000"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: "warning: skipped items[1] pod ml/p: spec.containers[].resources.requests.nvidia.com/gpumem: a GPU resource wattsched does not model (docs/formats.md): skipped rather than imported as a CPU-only pod"},
	{name: "only a GPU resource not modelled, --strict", files: importDump("", `"cpu": "1", "nvidia.com/gpumem": "4000"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "c.json: items[1].spec.containers[].resources.requests.nvidia.com/gpumem: a GPU resource wattsched does not model"},
	{name: "aliyun.com/gpu-mem on a node without it: skipped", files: importDump("", `"cpu": "1", "aliyun.com/gpu-mem": "8"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: "warning: skipped items[1] pod ml/p: spec.containers[].resources.requests.aliyun.com/gpu-mem: 8 GiB, not bound to a node, and the nodes advertising aliyun.com/gpu-mem have GPUs of [] GiB: the share of a GPU it is is unknown"},
	{name: "aliyun.com/gpu-mem: the share of one GPU", files: map[string]string{"c.json": `{"items": [{"kind": "Node", "metadata": {"name": "s", "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"}}, "status": {"allocatable": {"cpu": "8", "aliyun.com/gpu-mem": "96", "aliyun.com/gpu-count": "2"}}},
 {"kind": "Pod", "metadata": {"name": "p", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"}, "spec": {"nodeName": "s", "containers": [{"resources": {"requests": {"cpu": "1", "aliyun.com/gpu-mem": "12"}}}]}, "status": {"phase": "Pending"}}]}`},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 0,
		stdout: "NVIDIA-L40S  1      2     0         yes (L40S)"},
	// Issue 37: system pods are not jobs.
	{name: "DaemonSet pod: reserved, not a job", files: importDump(`, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "kube-proxy", "uid": "u"}]`, `"cpu": "1"`, `"phase": "Running"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		stdout: "1 system pods (DaemonSet, static, mirror, system namespaces) kept out of the jobs: 0 reserved on 0 nodes"},
	{name: "mirror pod: not a job", files: importDump(`, "annotations": {"kubernetes.io/config.mirror": "abc"}`, `"cpu": "1"`, `"phase": "Running"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		stdout: "no pods to schedule (every pod is a system pod, skipped, or none)"},
	{name: "pod of a --system-namespace: not a job", files: importDump("", `"cpu": "1"`, `"phase": "Running"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--system-namespace", "monitoring,ml"}, code: 0,
		stdout: "1 system pods (DaemonSet, static, mirror, system namespaces) kept out of the jobs"},
	{name: "malformed owner references: skipped", files: importDump(`, "ownerReferences": "DaemonSet/kube-proxy"`, `"cpu": "1"`, `"phase": "Running"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: "warning: skipped items[1] pod ml/p: metadata.ownerReferences: not a list of owner references ({apiVersion, kind, name, uid}): whether it is a system pod is unknown"},
	{name: "owner reference without a kind, --strict", files: importDump(`, "ownerReferences": [{"name": "x"}]`, `"cpu": "1"`, `"phase": "Running"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "c.json: items[1].metadata.ownerReferences[0].kind: missing: whether it is a system pod is unknown"},
	// Issue 40 item 3: times outside 1970..2100.
	{name: "created 0001-01-01: skipped", files: map[string]string{"c.json": strings.Replace(importDump("", `"cpu": "1"`, `"phase": "Pending"`)["c.json"], "2026-11-20T10:00:00Z", "0001-01-01T00:00:00Z", 1)},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: `warning: skipped items[1] pod ml/p: metadata.creationTimestamp: "0001-01-01T00:00:00Z" is not after 1970-01-01T00:00:00Z and before 2100-01-01T00:00:00Z (docs/formats.md)`},
	{name: "created 0001-01-01, --strict", files: map[string]string{"c.json": strings.Replace(importDump("", `"cpu": "1"`, `"phase": "Pending"`)["c.json"], "2026-11-20T10:00:00Z", "0001-01-01T00:00:00Z", 1)},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: `c.json: items[1].metadata.creationTimestamp: "0001-01-01T00:00:00Z" is not after 1970-01-01T00:00:00Z`},
	{name: "finished in 9999: skipped", files: importDump("", `"cpu": "1"`, `"phase": "Succeeded", "startTime": "2026-11-20T11:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "9999-12-31T23:59:59Z"}}}]`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: `warning: skipped items[1] pod ml/p: status.containerStatuses[0].state.terminated.finishedAt: "9999-12-31T23:59:59Z" is not after 1970-01-01T00:00:00Z and before 2100-01-01T00:00:00Z`},
	{name: "kube_pod_start_time 0: left out with a warning", files: with(importDump("", `"cpu": "1"`, `"phase": "Pending"`), map[string]string{"t.json": podTimesAnswer("0")}),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--pod-times", "{D}/t.json", "-o", "{D}/out"}, code: 0,
		errLine: `warning: series 0 (kube_pod_start_time{namespace="ml", pod="p"}): 0 (1970-01-01T00:00:00Z) is not after 1970-01-01T00:00:00Z and before 2100-01-01T00:00:00Z: left out`,
		stdout:  "0 pods in the series, 0 pods of the dump got a start or an end from them; 1 times outside the window left out"},
	{name: "kube_pod_start_time 0, --strict", files: with(importDump("", `"cpu": "1"`, `"phase": "Pending"`), map[string]string{"t.json": podTimesAnswer("0")}),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--pod-times", "{D}/t.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: `t.json: series 0 (kube_pod_start_time{namespace="ml", pod="p"}): 0 (1970-01-01T00:00:00Z) is not after 1970-01-01T00:00:00Z`},
	{name: "kube_pod_completion_time before the start: warning", files: with(importDump("", `"cpu": "1"`, `"phase": "Running", "startTime": "2026-11-20T11:00:00Z"`), map[string]string{"t.json": podTimesSeries("kube_pod_completion_time", "1795168860")}),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--pod-times", "{D}/t.json", "-o", "{D}/out"}, code: 0,
		errLine: "warning: items[1] pod ml/p: kube_pod_completion_time 2026-11-20T10:01:00Z before its start 2026-11-20T11:00:00Z: not used"},
	// Issue 40 group 8.
	{name: "nvidia.com/gpu 500m: skipped, not 1 GPU", files: importDump("", `"cpu": "1", "nvidia.com/gpu": "500m"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: `warning: skipped items[1] pod ml/p: spec.containers[0].resources.requests.nvidia.com/gpu: "500m" is not a whole number: devices are counted whole (a share of a GPU is wattsched.io/gpu-milli)`},
	{name: "nvidia.com/gpu 500m, --strict", files: importDump("", `"cpu": "1", "nvidia.com/gpu": "500m"`, `"phase": "Pending"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: `c.json: items[1].spec.containers[0].resources.requests.nvidia.com/gpu: "500m" is not a whole number`},
	{name: "odd dump file name: imported", files: map[string]string{"a: b #c.json": importDump("", `"cpu": "1"`, `"phase": "Pending"`)["c.json"]},
		args: []string{"import", "k8s", "-f", "{D}/a: b #c.json", "-o", "{D}/out"}, code: 0,
		stdout: "1 nodes and 1 pods from"},
	{name: "pod name with a newline: escaped in the warning", files: map[string]string{"c.json": strings.Replace(importDump("", `"cpu": "1"`, `"phase": "Pending"`)["c.json"], `"name": "p"`, `"name": "p\nwarning: forged"`, 1)},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: `warning: skipped items[1] pod "ml/p\nwarning: forged": metadata.name: name "p\nwarning: forged" holds the control character U+000A`},
	{name: "empty dump", files: map[string]string{"c.json": ""},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 1,
		errLine: "c.json: empty dump: want the JSON of 'kubectl get nodes,pods -A -o json'"},
	{name: "finished before it started: skipped", files: importDump("", `"cpu": "1"`, `"phase": "Succeeded", "startTime": "2026-11-20T11:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-11-20T10:30:00Z"}}}]`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 0,
		errLine: "warning: skipped items[1] pod ml/p: status.containerStatuses: finished 2026-11-20T10:30:00Z before it started 2026-11-20T11:00:00Z"},
	{name: "unreadable finishedAt, --strict", files: importDump("", `"cpu": "1"`, `"phase": "Failed", "startTime": "2026-11-20T11:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "later"}}}]`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: `c.json: items[1].status.containerStatuses[0].state.terminated.finishedAt: "later" is not RFC 3339`},
	{name: "MIG node of an unknown profile without a GPU count", files: map[string]string{"c.json": `{"items": [{"kind": "Node", "metadata": {"name": "m", "labels": {"nvidia.com/gpu.product": "NVIDIA-X-MIG-5g.50gb"}}, "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "8"}}}]}`},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 1,
		errLine: `c.json: items[0].metadata.labels["nvidia.com/gpu.product"]: "NVIDIA-X-MIG-5g.50gb": MIG profile 5g.50gb is not in the table and the node has no nvidia.com/gpu.count label`},
	{name: "MIG node with a bad GPU count", files: map[string]string{"c.json": `{"items": [{"kind": "Node", "metadata": {"name": "m", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "0"}}, "status": {"allocatable": {"cpu": "8", "nvidia.com/mig-1g.10gb": "7"}}}]}`},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 1,
		errLine: `c.json: items[0].metadata.labels["nvidia.com/gpu.count"]: "0": want 1..64 GPUs`},
	{name: "kubeconfig with an exec plugin says to pipe kubectl", files: map[string]string{"kc": "current-context: x\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\nusers:\n- name: u\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}\n"},
		args: []string{"import", "k8s", "--kubeconfig", "{D}/kc", "-o", "{D}/out"}, code: 1,
		errLine: "users[0].user uses a credential plugin (exec or auth-provider, as managed clusters do), which wattsched does not run (its core has no Kubernetes client): let kubectl run it: 'kubectl get nodes,pods -A -o json | wattsched import k8s -f - -o DIR'"},
	{name: "saved kube-state-metrics answer gives a start", files: with(importDump("", `"cpu": "1"`, `"phase": "Running"`), map[string]string{"t.json": podTimesAnswer("1795168860")}),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--pod-times", "{D}/t.json", "-o", "{D}/out"}, code: 0,
		stdout: "1 pods in the series, 1 pods of the dump got a start or an end from them"},
	{name: "saved answer with a NaN time", files: with(importDump("", `"cpu": "1"`, `"phase": "Running"`), map[string]string{"t.json": podTimesAnswer("NaN")}),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--pod-times", "{D}/t.json", "-o", "{D}/out"}, code: 1,
		errLine: `t.json: series 0 (kube_pod_start_time{namespace="ml", pod="p"}): NaN is not a Unix time in seconds`},
	{name: "saved answer not a range answer", files: with(importDump("", `"cpu": "1"`, `"phase": "Running"`), map[string]string{"t.json": `{"status": "success", "data": {"resultType": "vector", "result": []}}`}),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--pod-times", "{D}/t.json", "-o", "{D}/out"}, code: 1,
		errLine: "t.json: "},
	{name: "prometheus without a range", files: importDump("", `"cpu": "1"`, `"phase": "Running"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--prometheus", "http://127.0.0.1:1", "-o", "{D}/out"}, code: 2,
		errLine: "--prometheus URL goes with --range START,END[,STEP]"},
	{name: "prometheus and a saved answer", files: importDump("", `"cpu": "1"`, `"phase": "Running"`),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "--prometheus", "http://127.0.0.1:1", "--range", "0,60", "--pod-times", "{D}/c.json", "-o", "{D}/out"}, code: 2,
		errLine: "give one of --prometheus and --pod-times"},
}

// podTimesAnswer is a saved range answer with ml/p's kube_pod_start_time.
func podTimesAnswer(v string) string { return podTimesSeries("kube_pod_start_time", v) }

// podTimesSeries is a saved range answer with ml/p's metric of value v.
func podTimesSeries(metric, v string) string {
	return `{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"__name__": "` + metric + `", "namespace": "ml", "pod": "p", "uid": "u"}, "values": [[1795168900, "` + v + `"]]}]}}`
}
