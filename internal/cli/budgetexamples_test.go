package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/wattsched/wattsched/hw"
)

// budgetFigure matches a power budget given in watts in a doc, a chart
// values file or a manifest: PowerBudget's budgetWatts, or a scenario's
// power_limit {watts: N}.
var budgetFigure = regexp.MustCompile(`(?:budgetWatts:\s*|power_limit:\s*\{\s*watts:\s*)([0-9][0-9_.]*)`)

// budgetExampleFiles are the files whose budget figures are examples or
// fixtures a user may copy, and, by figure ("*": any other), the cluster
// each is used with: a dump (-f), a node list (--nodes), or "" where the
// text names no cluster (the figure is then only listed, not checked).
var budgetExampleFiles = map[string]map[string]string{
	"../../charts/wattsched-scheduler/ci/budget-values.yaml": {"*": clusterDump}, // its fgdWorkload is cluster.json's pods.csv
	"../../charts/wattsched-scheduler/values.yaml":           {"*": ""},
	"../../charts/wattsched-scheduler/README.md":             {"*": ""},
	// The budget.yaml limits are for the openb Default replay; 24000 is
	// the rendered configuration's example, of no named cluster.
	"../../docs/kubernetes.md":     {"*": "openb-gpu", "24000": ""},
	"../../docs/measured-power.md": {"*": ""},
	// The domains example's cluster budget names no cluster.
	"../../docs/power-domains.md": {"*": ""},
}

// Every budget given in watts in the docs, the chart and the manifests is
// above the baseline power (idle with system pods) the PWR model gives the
// cluster it is used with, where that cluster is known: a budget at or
// below it admits no pod that raises the count. Files with figures must
// be listed above, so a new example is classified when it is added.
func TestExampleBudgetsAboveIdle(t *testing.T) {
	var files []string
	for _, glob := range []string{"../../docs/*.md", "../../charts/wattsched-scheduler/*.yaml", "../../charts/wattsched-scheduler/*.md",
		"../../charts/wattsched-scheduler/ci/*.yaml", "../../k8s/deploy/*.yaml", "../../examples/*.yaml"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found := budgetFigure.FindAllSubmatch(b, -1)
		if len(found) == 0 {
			continue
		}
		clusters, listed := budgetExampleFiles[f]
		if !listed {
			t.Errorf("%s has budgets in watts (%s...): list it in budgetExampleFiles with the cluster it is used with", f, found[0][0])
			continue
		}
		for _, m := range found {
			cl, ok := clusters[string(m[1])]
			if !ok {
				cl = clusters["*"]
			}
			if cl == "" {
				continue
			}
			var fl powerBudgetFlags
			if cl == "openb-gpu" {
				fl.nodes = cl
			} else {
				fl.in = cl
			}
			nodes, _, err := readBudgetCluster(t.Context(), fl)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := modelClusterPower(hw.Default(), nodes)
			if err != nil {
				t.Fatal(err)
			}
			w, err := strconv.ParseFloat(string(m[1]), 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", f, m[0], err)
			}
			checked++
			if hw.Watts(w) <= cp.base {
				t.Errorf("%s: %s W is not above the baseline %.1f W (idle %.1f W) of %s, the cluster it is used with: it admits no pod", f, m[1], float64(cp.base), float64(cp.idle), cl)
			}
		}
	}
	if checked == 0 {
		t.Error("no budget figure was checked: the patterns or the file list are stale")
	}
}
