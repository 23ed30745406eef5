package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunGavelInputs runs mode coloc on Gavel's own inputs (issue 26): a
// trace file in Gavel's 10-field layout and an embedded physical-cluster
// trace, on Gavel's simulation throughputs for two worker types; each run
// writes one row per seed and system.
func TestRunGavelInputs(t *testing.T) {
	d := t.TempDir()
	// Two jobs: Transformer (batch size 16) on 2 GPUs and A3C on one,
	// arriving at 0 and 60 s (fields as in Gavel's physical-cluster traces).
	trace := "Transformer (batch size 16)\tpython3 train.py\ttranslation\t-step\t1\t1000\t2\t1\t-1.000000\t0\n" +
		"A3C\tpython3 main.py\trl\t--max-steps\t1\t500\t1\t1\t-1.000000\t60\n"
	if err := os.WriteFile(filepath.Join(d, "j.trace"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, jobs, worker, gpu string }{
		{"file on V100", "j.trace", "v100", "8 V100"},
		{"file on K80", "j.trace", "k80", "8 K80"},
		{"artifact_evaluation on P100", "gavel-artifact_evaluation", "p100", "8 P100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := filepath.Join(d, strings.ReplaceAll(c.name, " ", "_")+".yaml")
			y := "name: g\nseeds: 2\ncoloc:\n  jobs: " + c.jobs + "\n  throughputs: gavel-simulation\n  worker: " + c.worker + "\n  nodes: 1\n  systems: [FIFO, Gandiva]\n"
			if err := os.WriteFile(s, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(d, "out-"+c.worker+c.jobs)
			code, stdout, stderr := run(t, "run", "-c", s, "-o", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "g: 1 nodes x "+c.gpu) {
				t.Errorf("stdout lacks %q:\n%s", c.gpu, stdout)
			}
			b, err := os.ReadFile(filepath.Join(out, "runs.csv"))
			if err != nil {
				t.Fatal(err)
			}
			// A header and 2 seeds x 2 systems.
			if n := strings.Count(string(b), "\n"); n != 5 {
				t.Errorf("runs.csv has %d lines, want 5:\n%s", n, b)
			}
		})
	}
}
