// Package deploy holds the manifests; this test checks they decode
// strictly into the Kubernetes types they name and that the example pods
// are valid wattsched requests.
package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/wattsched/wattsched/k8s/gpushare"
)

func TestManifestsDecode(t *testing.T) {
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{Yaml: true, Strict: true})
	kinds := map[string]int{}
	for _, f := range []string{"rbac.yaml", "scheduler.yaml", "example-pods.yaml"} {
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
			if p, ok := obj.(*v1.Pod); ok {
				if _, err := gpushare.Demand(p); err != nil {
					t.Errorf("%s pod %s: %v", f, p.Name, err)
				}
			}
		}
	}
	for k, n := range map[string]int{"ServiceAccount": 1, "ClusterRoleBinding": 3, "ClusterRole": 1, "Deployment": 1, "Pod": 2} {
		if kinds[k] != n {
			t.Errorf("%d %s, want %d", kinds[k], k, n)
		}
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
