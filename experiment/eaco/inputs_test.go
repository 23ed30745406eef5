package eaco

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/scenario"
)

// TestLoadScenarioInputs reads a coloc section's Gavel table and job list
// and checks them against each other before any run (issue 26).
func TestLoadScenarioInputs(t *testing.T) {
	d := t.TempDir()
	files := map[string]string{
		// 10-field layout: a 2-GPU job of a type the table has on 1 GPU only.
		"two.trace": "A3C\tc\tdir\t-n\t1\t100\t1\t1\t-1\t0\nA3C\tc\tdir\t-n\t1\t100\t2\t1\t-1\t5\n",
		"bad.trace": "ResNet-18\tc\t-n\t1\t100\t0\t1\n",
		"t.json":    `{"v100": {"('A3C', 1)": {"null": 2, "('A3C', 1)": [1, 1]}}, "p100": {"('A3C', 1)": {"null": -3}}}`,
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(d, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, coloc string
		jobs        int    // jobs read, when the inputs are good
		want        string // a piece of the error otherwise
	}{
		{"Gavel trace, Gavel's V100 table", "{jobs: gavel-max_min_fairness, throughputs: gavel-simulation}", 96, ""},
		{"Gavel trace, P100", "{jobs: gavel-minimize_makespan, throughputs: gavel-simulation, worker: p100}", 100, ""},
		// 951 jobs, 28 of them over 100 h alone on a V100 (counted with python).
		{"msr trace, default table", "{jobs: gavel-msr}", 923, ""},
		{"file trace, file table", "{jobs: two.trace, throughputs: t.json}", 0, filepath.Join(d, "two.trace") + `:2: column scale_factor: "A3C" has no v100 throughput on 2 GPU(s) in ` + filepath.Join(d, "t.json") + ` (scale factors there: 1)`},
		{"multi-GPU job, default table", "{jobs: gavel-artifact_evaluation}", 0, `gavel:artifact_evaluation.trace:2: column scale_factor: "Transformer (batch size 16)" has no v100 throughput on 2 GPU(s) in gavel:v100_scale1.json`},
		{"job that does not run on K80", "{jobs: gavel-max_min_fairness, throughputs: gavel-simulation, worker: k80}", 0, `gavel:max_min_fairness.trace:91: column scale_factor: "ResNet-50 (batch size 128)" on 2 GPU(s) has throughput 0 on k80`},
		{"negative rate", "{jobs: two.trace, throughputs: t.json, worker: p100}", 0, filepath.Join(d, "t.json") + `: $.p100["('A3C', 1)"].null: isolated throughput is not a number of steps/s >= 0`},
		{"job type missing", "{jobs: bad.trace, throughputs: gavel-simulation, worker: k80}", 0, `bad.trace:1: column job_type: unknown job type "ResNet-18": not in gavel:simulation_throughputs.json for k80 (job types there: A3C; CycleGAN;`},
		{"msr trace, table without its types", "{jobs: gavel-msr, throughputs: t.json}", 0, `gavel:msr-ed69ec.trace:1: column job_type: unknown job type "Transformer (batch size 128)"`},
		{"table missing", "{jobs: gavel-msr, throughputs: none.json}", 0, "coloc.throughputs: open " + filepath.Join(d, "none.json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(d, strings.ReplaceAll(c.name, " ", "_")+".yaml")
			if err := os.WriteFile(path, []byte("name: t\ncoloc: "+c.coloc+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := scenario.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			in, err := LoadScenarioInputs(hw.Default(), s)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(in.Pool) != c.jobs || in.Env.TP.Worker != s.Coloc.WorkerType() {
					t.Errorf("%d jobs on %s, want %d on %s", len(in.Pool), in.Env.TP.Worker, c.jobs, s.Coloc.WorkerType())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}
