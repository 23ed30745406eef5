package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planScenario writes a replay on two racks of two one-GPU V100M32 nodes
// with twelve pods and returns its path.
func planScenario(t *testing.T, topology bool) string {
	t.Helper()
	dir := t.TempDir()
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	for i := range 12 {
		pods += fmt.Sprintf("p%d,1000,1024,1,1000,,LS,Running,%d,%d,%d\n", i, i*1800, i*1800+5400, i*1800)
	}
	top := "topology:\n  members: {a1: r1, a2: r1, b1: r2, b2: r2}\n  domains:\n    - {name: r1, level: rack, limit_w: 1500}\n    - {name: r2, level: rack, limit_w: 1500}\n"
	if !topology {
		top = ""
	}
	files := map[string]string{
		"s.yaml":    "name: plan\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies:\n  - {name: PWR, scorers: [{policy: pwr, weight: 1000}]}\n" + top,
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\na1,64000,262144,1,V100M32\na2,64000,262144,1,V100M32\nb1,64000,262144,1,V100M32\nb2,64000,262144,1,V100M32\n",
		"pods.csv":  pods,
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.yaml")
}

// plan power writes its table, summary and files; the same command again
// gives byte-identical files.
func TestPlanPowerCommand(t *testing.T) {
	scen := planScenario(t, true)
	out := filepath.Join(t.TempDir(), "plan")
	args := []string{"plan", "power", "-c", scen, "-o", out, "--add", "V100M32", "--seeds", "2", "--draws", "2", "--max-add", "2", "--cap", "--risk", "0.05"}
	code, stdout, stderr := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"stand-in: the hourly domain power is the PWR model's estimate", "With the current nodes,", "Power domains with the current nodes", "Search (each row replayed", "capped: nodes left out", "results in "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "plan power: 0 V100M32 node(s) added to each of 2 innermost domains: 6 replays") {
		t.Errorf("no progress line:\n%s", stderr)
	}
	files := []string{"summary.json", "plan.csv", "answers.csv", "domain-r1.svg", "domain-r2.svg", "report.html"}
	first := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		first[f] = string(b)
	}
	if code, _, stderr := run(t, append(args, "--force")...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	for _, f := range files {
		if b, _ := os.ReadFile(filepath.Join(out, f)); string(b) != first[f] {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// Bad input is refused before any replay, with nothing written.
func TestPlanPowerRefusesBeforeAnyRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no add", []string{"-c", planScenario(t, true)}, "--add: give the GPU model"},
		{"unknown model", []string{"-c", planScenario(t, true), "--add", "H900"}, "--add H900"},
		{"no topology", []string{"-c", planScenario(t, false), "--add", "V100M32"}, "no topology section"},
		{"risk", []string{"-c", planScenario(t, true), "--add", "V100M32", "--risk", "2"}, "--risk 2"},
	} {
		out := filepath.Join(t.TempDir(), "plan")
		code, _, stderr := run(t, append([]string{"plan", "power", "-o", out}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want an error with %q", tc.name, code, stderr, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s exists after a refused plan", tc.name, out)
		}
	}
}
