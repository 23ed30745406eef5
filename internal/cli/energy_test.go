package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The energy scorer end to end (issue 37, item 4): with the pods' speed
// known it prefers the node where a pod needs the least energy, not the
// least power; without it (no reference GPU) it scores as PWR, and the
// printed output and report.html say so; a scorer name that does not
// exist is refused before any run.
func TestEnergyScorerRun(t *testing.T) {
	// One idle 8-H100 node and one idle 4-L40S node; one whole-GPU pod of
	// an hour. PWR: the L40S adds 350-35.6 = 314.4 W, the H100 700-71.8 =
	// 628.2 W, so PWR takes the L40S. Energy, measured on H100: 314.4 W x
	// 1/0.42 = 748.6 W-per-reference-second on the L40S, 628.2 on the H100:
	// the H100.
	const nodes = "sn,cpu_milli,memory_mib,gpu,model\nh1,64000,262144,8,H100\nl1,64000,262144,4,L40S\n"
	const pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np1,0,1024,1,1000,,LS,Running,0,3600,0\n"
	const policies = "policies:\n  - name: PWR\n    scorers: [{policy: pwr, weight: 1000}]\n  - name: Energy\n    scorers: [{policy: energy, weight: 1000}]\n"
	const note = "note: policy Energy, energy: GPU pods without a reference GPU"
	for _, tc := range []struct {
		name, ref       string
		pwrOn, energyOn string
		noted           bool
	}{
		{"speed known", "  reference_gpu: H100\n", "l1", "h1", false},
		{"no speed: PWR's choice and a note", "", "l1", "l1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			scen := "name: e\nmode: replay\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\n" + tc.ref + policies
			for f, s := range map[string]string{"s.yaml": scen, "nodes.csv": nodes, "pods.csv": pods} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errs := run(t, "run", "-c", filepath.Join(dir, "s.yaml"), "-o", filepath.Join(dir, "out"))
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			jobs, err := os.ReadFile(filepath.Join(dir, "out", "jobs.csv"))
			if err != nil {
				t.Fatal(err)
			}
			on := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(string(jobs)), "\n")[1:] {
				f := strings.Split(l, ",")
				on[f[0]] = f[7]
			}
			if on["PWR"] != tc.pwrOn || on["Energy"] != tc.energyOn {
				t.Errorf("PWR on %q, Energy on %q; want %s and %s", on["PWR"], on["Energy"], tc.pwrOn, tc.energyOn)
			}
			if got := strings.Contains(out, note); got != tc.noted {
				t.Errorf("output says %q: %v, want %v:\n%s", note, got, tc.noted, out)
			}
			page, err := os.ReadFile(filepath.Join(dir, "out", "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(page), "Policy Energy, energy: GPU pods without a reference GPU"); got != tc.noted {
				t.Errorf("report.html has the note: %v, want %v", got, tc.noted)
			}
		})
	}

	dir := t.TempDir()
	scen := "name: e\nmode: replay\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\npolicies:\n  - name: E\n    scorers: [{policy: energie, weight: 1000}]\n"
	for f, s := range map[string]string{"s.yaml": scen, "nodes.csv": nodes, "pods.csv": pods} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errs := run(t, "compare", "-c", filepath.Join(dir, "s.yaml"), "-o", filepath.Join(dir, "out"), "--seeds", "2")
	if code == 0 || !strings.Contains(errs, `"energie"`) || !strings.Contains(errs, "energy") {
		t.Errorf("an unknown scorer: exit %d, %q; want an error naming it and the known ones", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("an unknown scorer left %s behind (%v)", filepath.Join(dir, "out"), err)
	}
}
