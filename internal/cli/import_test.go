package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/power/prom/promtest"
	"github.com/wattsched/wattsched/scenario"
)

// clusterDump is the dump of a cluster with H100, L40S, H200, MIG (mixed
// and single strategy) and CPU-only nodes, and a MIG pod, a pod of another
// GPU-sharing convention, a Succeeded pod, Running pods and a bad pod.
const clusterDump = "../../trace/k8sdump/testdata/cluster.json"

// import k8s of a real cluster's dump keeps the MIG pod, the foreign
// pod and the Succeeded pod (warnings printed), skips the bad pod with a
// warning, writes a report of what it imported, and the replay of the
// scenario gives the Succeeded pod its real duration (10:00:30 to
// 12:30:30: 9000 s).
func TestImportK8sCluster(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "imp")
	code, stdout, stderr := run(t, "import", "k8s", "-f", clusterDump, "-o", out)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"6 nodes and 7 pods from", "1 pods skipped", "durations: 1 pods ran and ended (their real durations), 4 still running (cut at the snapshot 2026-11-20T13:00:00Z), 2 never started",
		"NVIDIA-H200            1      8     0         no: hardware stub in scenario.yaml", "h100-mig-0  single    56 x 1g.10gb               8"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, want := range []string{`warning: skipped items[11] pod ml/bad: spec.containers[0].resources.requests.cpu: "lots"`,
		"warning: items[8] pod ml/foreign: both wattsched.io/gpu-milli \"250\" and nvidia.com/gpu: 1", "warning: items[4] node h100-mig-0: no nvidia.com/gpu.count label"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Nodes by GPU model", "Pods by phase", "MIG capacity", "Skipped pods (1)", "ml/bad", "Kept with a warning (4)"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	pods, err := os.ReadFile(filepath.Join(out, "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ml/mig-infer,2000,8192,1,142,", "ml/foreign,1000,4096,1,250,", "ml/train-done,8000,65536,2,1000,,,Succeeded,0,9000,30"} {
		if !bytes.Contains(pods, []byte(want)) {
			t.Errorf("pods.csv lacks %q:\n%s", want, pods)
		}
	}
	// The H200 is not in the catalog: the scenario says so and runs once a
	// catalog names it.
	if code, _, errs := run(t, "run", "-c", filepath.Join(out, "scenario.yaml"), "-o", filepath.Join(dir, "no")); code == 0 || !strings.Contains(errs, "NVIDIA-H200") {
		t.Errorf("the scenario ran with an unknown GPU model: exit %d %s", code, errs)
	}
	cat := filepath.Join(dir, "h200.yaml")
	if err := os.WriteFile(cat, []byte("gpus:\n  - {name: NVIDIA-H200, idle_w: 75, tdp_w: 700, memory_gib: 141, source: test figures}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "res")
	if code, _, errs := run(t, "run", "-c", filepath.Join(out, "scenario.yaml"), "--catalog", cat, "-o", res); code != 0 {
		t.Fatalf("replaying the imported scenario: exit %d: %s", code, errs)
	}
	f, err := os.Open(filepath.Join(res, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range rows[1:] {
		if r[2] != "ml/train-done" {
			continue
		}
		seen++
		start, _ := strconv.ParseFloat(r[4], 64)
		end, _ := strconv.ParseFloat(r[5], 64)
		if end-start != 9000 {
			t.Errorf("policy %s: ml/train-done ran %v s, want 9000 (12:30:30 - 10:00:30)", r[0], end-start)
		}
	}
	if seen != 4 {
		t.Errorf("ml/train-done in %d policies' jobs, want 4", seen)
	}
}

// The path for managed clusters: kubectl's JSON on standard input (-f -).
func TestImportK8sFromPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	in, err := os.Open(clusterDump)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	spec, _ := json.Marshal([]string{"import", "k8s", "-f", "-", "-o", filepath.Join(dir, "imp")})
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOutdirChild$")
	cmd.Env = append(os.Environ(), "WATTSCHED_OUTDIR_CHILD="+string(spec))
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		errors.As(err, &ee)
		t.Fatalf("import k8s -f -: %v: %s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "imp", "scenario.yaml"))
	if err != nil || !bytes.Contains(b, []byte(`from "standard input": 6 nodes, 7 pods`)) {
		t.Errorf("scenario.yaml: %v\n%s", err, b)
	}
	// An empty pipe (kubectl failed) says so, and writes nothing.
	spec, _ = json.Marshal([]string{"import", "k8s", "-f", "-", "-o", filepath.Join(dir, "empty")})
	cmd = exec.Command(os.Args[0], "-test.run", "^TestOutdirChild$")
	cmd.Env = append(os.Environ(), "WATTSCHED_OUTDIR_CHILD="+string(spec))
	cmd.Stdin = strings.NewReader("")
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "wattsched: standard input: empty dump: want the JSON of 'kubectl get nodes,pods -A -o json'") {
		t.Errorf("empty standard input: %v: %s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "empty")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty standard input left an output: %v", err)
	}
}

// A dump file name that YAML would read as syntax (a colon and space, a
// hash, a quote, a newline) is quoted in scenario.yaml, which parses and
// names it.
func TestImportK8sOddFileName(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a: b #c\n\"d\".json")
	if err := os.WriteFile(name, []byte(importDump("", `"cpu": "1"`, `"phase": "Running", "startTime": "2026-11-20T10:00:10Z"`)["c.json"]), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := run(t, "import", "k8s", "-f", name, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(b, "scenario.yaml")
	if err != nil {
		t.Fatalf("scenario.yaml does not parse: %v\n%s", err, b)
	}
	if want := "policies compared on the workload and nodes of a Kubernetes cluster (a: b #c\n\"d\".json)"; sc.Description != want {
		t.Errorf("description %q, want %q", sc.Description, want)
	}
}

// evictedDump has a pod whose times the dump lost (Failed, evicted: no
// startTime, a terminated container without finishedAt) and one whose
// dump times are complete (10:00:00 to 11:00:00).
const evictedDump = `{"kind": "List", "items": [` + importNode + `,
 {"kind": "Pod", "metadata": {"name": "evicted", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"},
  "spec": {"nodeName": "n", "containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]},
  "status": {"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"reason": "ContainerStatusUnknown"}}}]}},
 {"kind": "Pod", "metadata": {"name": "done", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"},
  "spec": {"nodeName": "n", "containers": [{"resources": {"requests": {"cpu": "1"}}}]},
  "status": {"phase": "Succeeded", "startTime": "2026-11-20T10:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-11-20T11:00:00Z"}}}]}}]}`

// kube-state-metrics' series of the pods of evictedDump, as its /metrics
// serves them: evicted ran 10:01:00 (1795168860) to 11:31:00 (5400 s
// later); done's series disagree with its dump, which wins.
const ksmMetrics = `# HELP kube_pod_start_time Start time in unix timestamp for a pod.
# TYPE kube_pod_start_time gauge
kube_pod_start_time{namespace="ml",pod="evicted",uid="u-1"} 1.79516886e+09
kube_pod_start_time{namespace="ml",pod="done",uid="u-2"} 1.7951688e+09
# HELP kube_pod_completion_time Completion time in unix timestamp for a pod.
# TYPE kube_pod_completion_time gauge
kube_pod_completion_time{namespace="ml",pod="evicted",uid="u-1"} 1.79517426e+09
kube_pod_completion_time{namespace="ml",pod="done",uid="u-2"} 1.79518e+09
`

// The times a dump lacks come from kube-state-metrics through a real
// Prometheus server on loopback scraping the series: the evicted pod gets
// its real duration (5400 s), the other keeps its dump's (3600 s).
func TestImportK8sPodTimesFromPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prometheus")
	}
	ksm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		io.WriteString(w, ksmMetrics)
	}))
	t.Cleanup(ksm.Close)
	srv := promtest.Start(t, strings.TrimPrefix(ksm.URL, "http://"))
	c, err := prom.NewClient(srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		s, err := c.Query(context.Background(), podTimesQuery, time.Now())
		if err == nil && len(s) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has not scraped the series: %v %v", s, err)
		}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "c.json")
	if err := os.WriteFile(in, []byte(evictedDump), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	rng := fmt.Sprintf("%d,%d,1s", now-120, now+5)
	out := filepath.Join(dir, "imp")
	code, stdout, stderr := run(t, "import", "k8s", "-f", in, "--prometheus", srv.URL, "--range", rng, "-o", out)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "2 pods in the series, 1 pods of the dump got a start or an end from them") {
		t.Errorf("stdout:\n%s", stdout)
	}
	pods, err := os.ReadFile(filepath.Join(out, "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// evicted: created 0, started 60, ran 5400 s; done: 0 to 3600.
	for _, want := range []string{"ml/evicted,1000,0,1,1000,,,Failed,0,5400,60\n", "ml/done,1000,0,0,0,,,Succeeded,0,3600,0\n"} {
		if !bytes.Contains(pods, []byte(want)) {
			t.Errorf("pods.csv lacks %q:\n%s", want, pods)
		}
	}
	// Without the series the evicted pod never started (0 s).
	code, _, stderr = run(t, "import", "k8s", "-f", in, "-o", filepath.Join(dir, "plain"))
	pods, _ = os.ReadFile(filepath.Join(dir, "plain", "pods.csv"))
	if code != 0 || !bytes.Contains(pods, []byte("ml/evicted,1000,0,1,1000,,,Failed,0,0,\n")) {
		t.Errorf("without Prometheus: exit %d %s\n%s", code, stderr, pods)
	}
}

// systemDump is a realistic `kubectl get nodes,pods -A -o json`: coredns,
// kube-proxy (DaemonSet), a mirror kube-apiserver pod, a device-plugin
// DaemonSet pod asking for a GPU, Prometheus in monitoring, a tainted H100
// node, tolerating and non-tolerating pods, aliyun.com/gpu-mem pods.
const systemDump = "../../trace/k8sdump/testdata/system.json"

// No system pod becomes a job: pods.csv and the replay's jobs.csv hold
// only the six job pods; the system pods' requests are reserved in
// nodes.csv (cpu-0: 16000 - 100 coredns - 250 kube-apiserver = 15650
// milli-CPU); the report lists what was kept, reserved and skipped, and
// the taints the replay does not honour.
func TestImportK8sSystemPods(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "imp")
	code, stdout, stderr := run(t, "import", "k8s", "-f", systemDump, "-o", out)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"4 nodes and 6 pods from", "2 pods skipped",
		"6 system pods (DaemonSet, static, mirror, system namespaces) kept out of the jobs: 5 reserved on 3 nodes (their requests taken off the nodes' allocatable), 1 not reserved (ended or not bound)",
		"taints not honoured by the replay: 1 nodes have NoSchedule/NoExecute taints, 5 pods do not tolerate some of them",
		"kept as jobs          6", "system, reserved      5", "system, not reserved  1", "skipped               2",
		"gpu-l40s-0  2            150                 64000  192           524288   1.000",
		"gpu-h100-0  nvidia.com/gpu=present:NoSchedule  5"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "requests 1 GPUs on node gpu-l40s-0: not reserved") {
		t.Errorf("no warning for the device plugin's GPU:\n%s", stderr)
	}
	files := map[string]string{}
	for _, f := range []string{"nodes.csv", "pods.csv", "report.html"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	for _, sys := range []string{"kube-system/", "kube-proxy", "coredns", "kube-apiserver", "nvidia-device-plugin", "node-exporter"} {
		if strings.Contains(files["pods.csv"], sys) {
			t.Errorf("pods.csv holds system pod %s:\n%s", sys, files["pods.csv"])
		}
	}
	for _, want := range []string{"cpu-0,15650,65466,0,", "gpu-l40s-0,63850,524096,4,NVIDIA-L40S", "share-l40s-0,64000,524288,4,NVIDIA-L40S"} {
		if !strings.Contains(files["nodes.csv"], want) {
			t.Errorf("nodes.csv lacks %q:\n%s", want, files["nodes.csv"])
		}
	}
	for _, want := range []string{"ml/infer-share,2000,8192,1,250,", "ml/wait-share,2000,8192,1,500,"} {
		if !strings.Contains(files["pods.csv"], want) {
			t.Errorf("pods.csv lacks %q:\n%s", want, files["pods.csv"])
		}
	}
	for _, want := range []string{"Pods kept, reserved and skipped", "Reserved by system pods", "Taints the replay does not honour",
		"System pods kept out of the jobs (6)", "DaemonSet kube-proxy", "mirror pod (kubernetes.io/config.mirror)", "Pods that do not tolerate a node&#39;s taints"} {
		if !strings.Contains(files["report.html"], want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The replay runs the six jobs under each of the four policies.
	res := filepath.Join(dir, "res")
	if code, _, errs := run(t, "run", "-c", filepath.Join(out, "scenario.yaml"), "-o", res); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	f, err := os.Open(filepath.Join(res, "jobs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+4*6 {
		t.Errorf("jobs.csv has %d rows, want 1 + 4 policies x 6 jobs", len(rows))
	}
	for _, r := range rows[1:] {
		if strings.Contains(strings.Join(r, ","), "kube-") {
			t.Errorf("a system pod ran as a job: %v", r)
		}
	}
	// --system-namespace monitoring: Prometheus is reserved too.
	code, stdout, stderr = run(t, "import", "k8s", "-f", systemDump, "-o", filepath.Join(dir, "mon"), "--system-namespace", "monitoring")
	if code != 0 || !strings.Contains(stdout, "4 nodes and 5 pods from") || !strings.Contains(stdout, "7 system pods") {
		t.Errorf("--system-namespace monitoring: exit %d\n%s%s", code, stdout, stderr)
	}
}
