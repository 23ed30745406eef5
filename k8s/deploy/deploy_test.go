// Package deploy holds the manifests; this test checks they decode
// strictly into the Kubernetes types they name and that the example pods
// are valid wattsched requests.
package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/wattsched/wattsched/k8s/gpushare"
)

func TestManifestsDecode(t *testing.T) {
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{Yaml: true, Strict: true})
	kinds := map[string]int{}
	for _, f := range []string{"rbac.yaml", "scheduler.yaml", "example-pods.yaml", "sweep-job.yaml", "sweep-merge-job.yaml", "nvml-agent.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			obj, gvk, err := s.Decode(doc, nil, nil)
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			kinds[gvk.Kind]++
			if j, ok := obj.(*batchv1.Job); ok {
				checkSweepJob(t, f, j)
				checkImage(t, f, j.Spec.Template.Spec.Containers, "wattsched", "")
			}
			if d, ok := obj.(*appsv1.DaemonSet); ok {
				checkAgent(t, f, d)
				checkImage(t, f, d.Spec.Template.Spec.Containers, "wattsched-nvml-agent", "")
			}
			if d, ok := obj.(*appsv1.Deployment); ok {
				checkImage(t, f, d.Spec.Template.Spec.Containers, "kube-scheduler", "-k8s"+newestMinor(t))
			}
			if p, ok := obj.(*v1.Pod); ok {
				if _, err := gpushare.Demand(p); err != nil {
					t.Errorf("%s pod %s: %v", f, p.Name, err)
				}
			}
		}
	}
	for k, n := range map[string]int{"ServiceAccount": 1, "ClusterRoleBinding": 3, "ClusterRole": 1, "Deployment": 1, "Pod": 2, "Job": 2, "PersistentVolumeClaim": 1, "DaemonSet": 1} {
		if kinds[k] != n {
			t.Errorf("%d %s, want %d", kinds[k], k, n)
		}
	}
}

// checkSweepJob: the indexed job runs shard $(JOB_COMPLETION_INDEX) of as
// many shards as it has completions, and the merge names every shard of
// that job (sweepShards, set by the indexed job, which comes first).
func checkSweepJob(t *testing.T, f string, j *batchv1.Job) {
	t.Helper()
	args := strings.Join(j.Spec.Template.Spec.Containers[0].Args, " ")
	if sc := j.Spec.Template.Spec.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != 65532 {
		t.Errorf("%s: pods need fsGroup 65532 to write the volume as the image's user", f)
	}
	if j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion {
		sweepShards = int(*j.Spec.Completions)
		if !strings.Contains(args, fmt.Sprintf("--shard $(JOB_COMPLETION_INDEX)/%d", sweepShards)) {
			t.Errorf("%s: indexed job of %d completions runs %q", f, sweepShards, args)
		}
		return
	}
	if sweepShards == 0 {
		t.Fatalf("%s: the merge job is read before the indexed job", f)
	}
	for i := 0; i < sweepShards; i++ {
		if !strings.Contains(args, fmt.Sprintf("shard-%d ", i)) && !strings.HasSuffix(args, fmt.Sprintf("shard-%d", i)) {
			t.Errorf("%s: merge does not name shard %d of %d: %q", f, i, sweepShards, args)
		}
	}
	if strings.Contains(args, fmt.Sprintf("shard-%d", sweepShards)) {
		t.Errorf("%s: merge names a shard beyond the %d the job runs", f, sweepShards)
	}
}

var sweepShards int

// checkImage: the containers run the image `make images` builds for this
// version of wattsched (internal/cli's Version), so that a release that
// changes the version changes the manifests with it; suffix is the
// kube-scheduler image's minor (-k8s1.NN).
func checkImage(t *testing.T, f string, cs []v1.Container, name, suffix string) {
	t.Helper()
	want := "ghcr.io/wattsched/" + name + ":v" + cliVersion(t) + suffix
	for _, c := range cs {
		if c.Image != want {
			t.Errorf("%s: container %s runs %q, want %q", f, c.Name, c.Image, want)
		}
	}
}

// cliVersion: the Version constant of the core's internal/cli.
func cliVersion(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("../../internal/cli/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("internal/cli: %v", err)
	}
	re := regexp.MustCompile(`(?m)^\s*(?:const\s+)?Version\s*=\s*"([^"]+)"`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	t.Fatal("no Version constant in internal/cli")
	return ""
}

// checkAgent: the NVML agent labels its series with the node's name and
// takes no GPU from the pods that need them.
func checkAgent(t *testing.T, f string, d *appsv1.DaemonSet) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	named := false
	for _, e := range c.Env {
		if e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
			named = true
		}
	}
	if !named {
		t.Errorf("%s: NODE_NAME must come from spec.nodeName (the Hostname label PowerBudget matches)", f)
	}
	for name := range c.Resources.Requests {
		if strings.Contains(string(name), "gpu") {
			t.Errorf("%s: the agent requests %s: it would take a GPU from the workloads", f, name)
		}
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9400 {
		t.Errorf("%s: want port 9400 (the DCGM exporter's), got %v", f, c.Ports)
	}
}

// The example alerting rules parse and type-check with promtool (it comes
// with Debian's prometheus package; `make prometheus` installs it).
func TestAlertRulesCheck(t *testing.T) {
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found on PATH: install the Prometheus server and tools with `make prometheus` (apt-get install -y prometheus)")
	}
	out, err := exec.Command(bin, "check", "rules", "wattsched-alerts.yaml").CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SUCCESS: 3 rules found") {
		t.Errorf("promtool: %s", out)
	}
}

// newestMinor: the Kubernetes minor k8s/go.mod pins (the newest supported;
// the manifests run its kube-scheduler image).
func newestMinor(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes\s+v(1\.[0-9]+)\.`).FindSubmatch(b)
	if m == nil {
		t.Fatal("k8s/go.mod pins no k8s.io/kubernetes")
	}
	return string(m[1])
}
