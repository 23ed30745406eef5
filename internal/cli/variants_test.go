package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// variantsFixture writes a small replay: 6 nodes of 2 GPUs, 60 pods over
// 5 hours, and returns the directory.
func variantsFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	nodes := "sn,cpu_milli,memory_mib,gpu,model\n"
	for i := 0; i < 6; i++ {
		nodes += fmt.Sprintf("n%d,32000,131072,2,%s\n", i, []string{"T4", "V100M16", "A100"}[i%3])
	}
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	for i := 0; i < 60; i++ {
		pods += fmt.Sprintf("p%d,%d,1024,1,%d,,LS,Running,%d,%d,\n", i, 1000+(i%4)*1000, []int{250, 500, 1000}[i%3], i*300, i*300+3600+(i%7)*900)
	}
	os.WriteFile(filepath.Join(dir, "nodes.csv"), []byte(nodes), 0o644)
	os.WriteFile(filepath.Join(dir, "pods.csv"), []byte(pods), 0o644)
	return dir
}

// Two identical policies: the summary says "no meaningful difference"
// and names no winner; every system's verdict in summary.json says the
// same.
func TestCompareIdenticalPolicies(t *testing.T) {
	dir := variantsFixture(t)
	sc := filepath.Join(dir, "same.yaml")
	os.WriteFile(sc, []byte(`name: same
mode: replay
seeds: 3
trace: {nodes: nodes.csv, pods: pods.csv}
power_down: {idle_after_s: 600, wake_s: 120, off_w: 10}
policies:
  - {name: A, scorers: [{policy: pwr, weight: 1000}]}
  - {name: B, scorers: [{policy: pwr, weight: 1000}]}
`), 0o644)
	out := filepath.Join(dir, "o")
	code, stdout, errs := run(t, "compare", "-c", sc, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.Contains(first, "no meaningful difference in energy") || strings.Contains(first, "used the least energy") {
		t.Errorf("summary names a winner between identical policies:\n%s", first)
	}
	var sum struct {
		Equivalence float64 `json:"equivalence_threshold"`
		Policies    []struct {
			Policy  string `json:"policy"`
			Verdict string `json:"verdict"`
		} `json:"policies"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Equivalence != 0.01 || len(sum.Policies) != 2 || sum.Policies[1].Verdict != "no meaningful difference" {
		t.Errorf("summary.json: threshold %v, systems %+v; want 0.01 and B 'no meaningful difference'", sum.Equivalence, sum.Policies)
	}
}

// A power-down variant and a PUE variant sit in one table beside the
// scenario's own settings: every policy under every setting, one row
// each, runs.csv with a variant column, the settings and the hardware
// models used recorded in summary.json and report.html.
func TestCompareVariantsOneTable(t *testing.T) {
	dir := variantsFixture(t)
	sc := filepath.Join(dir, "v.yaml")
	os.WriteFile(sc, []byte(`name: v
mode: replay
seeds: 2
trace: {nodes: nodes.csv, pods: pods.csv}
policies:
  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}
  - {name: PWR, scorers: [{policy: pwr, weight: 1000}]}
variants:
  - name: power-down
    power_down: {idle_after_s: 300, wake_s: 60, off_w: 5}
  - name: pue 1.5
    pue: 1.5
`), 0o644)
	out := filepath.Join(dir, "o")
	code, stdout, errs := run(t, "compare", "-c", sc, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, row := range []string{`FGD +as configured +\d`, `PWR +as configured +\d`, `FGD +power-down +\d`, `PWR +power-down +\d`, `FGD +pue 1.5 +\d`, `PWR +pue 1.5 +\d`} {
		if !regexp.MustCompile(`(?m)^` + row).MatchString(stdout) {
			t.Errorf("no row %q in the table:\n%s", row, stdout)
		}
	}
	if strings.Contains(stdout, "automatic") {
		t.Error("an automatic power-down variant although the scenario has one")
	}
	for _, want := range []string{"node-hours off", "power-offs", "wakes", "Settings compared", "Hardware models used", "idle_after_s 300, wake_s 60, off_w 5"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table output lacks %q", want)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(out, "runs.csv"))
	if !strings.HasPrefix(string(csv), "policy,variant,seed,energy_kwh") || strings.Count(string(csv), "\n") != 1+3*2*2 {
		t.Errorf("runs.csv: want a variant column and 12 runs:\n%s", csv)
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	js, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	for _, f := range []struct {
		name string
		b    []byte
	}{{"report.html", html}, {"summary.json", js}} {
		for _, want := range []string{"pue 1.5", "power-down", "V100M16", "A100"} {
			if !strings.Contains(string(f.b), want) {
				t.Errorf("%s lacks %q", f.name, want)
			}
		}
	}
	if !strings.Contains(string(js), `"models_used"`) || !strings.Contains(string(js), `"idle_w"`) {
		t.Error("summary.json does not record the catalog entries used")
	}
}

// Without power-down anywhere, compare adds the automatic variant for the
// first policy and labels it.
func TestCompareAutomaticPowerDown(t *testing.T) {
	dir := variantsFixture(t)
	sc := filepath.Join(dir, "a.yaml")
	os.WriteFile(sc, []byte(`name: a
mode: replay
seeds: 2
trace: {nodes: nodes.csv, pods: pods.csv}
policies:
  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}
  - {name: PWR, scorers: [{policy: pwr, weight: 1000}]}
`), 0o644)
	code, stdout, errs := run(t, "compare", "-c", sc, "-o", filepath.Join(dir, "o"), "--equivalence", "2%")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`(?m)^FGD +power-down \(automatic\) +\d`).MatchString(stdout) || regexp.MustCompile(`(?m)^PWR +power-down \(automatic\) +\d`).MatchString(stdout) {
		t.Errorf("want the automatic variant for FGD only:\n%s", stdout)
	}
	if !strings.Contains(stdout, "equivalence threshold 2%") {
		t.Error("--equivalence 2% not in the definitions")
	}
}
