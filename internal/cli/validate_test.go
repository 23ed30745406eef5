package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidatePower runs `validate power` on the study's test rows: the
// table printed, the files written; and on a file with a negative power:
// one error naming file, line and field, and no results directory.
func TestValidatePower(t *testing.T) {
	traces := filepath.Join("..", "..", "experiment", "validate", "testdata", "traces")
	out := filepath.Join(t.TempDir(), "vp")
	var stdout, stderr bytes.Buffer
	if rc := Run(context.Background(), []string{"validate", "power", "-o", out, "--traces", traces}, &stdout, &stderr); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	for _, w := range []string{"pwr                   P100", "measured-busy         V100", "not covered: pwr on A40", "untested: power under MIG"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("output does not contain %q:\n%s", w, stdout.String())
		}
	}
	for _, f := range []string{"summary.json", "errors.csv", "points.csv", "busy.csv", "predicted-vs-measured-pwr.svg", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}

	bad := t.TempDir()
	if err := os.CopyFS(bad, os.DirFS(traces)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(bad, "zeus-nsdi23", "summary_power_v100.csv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(",86.86460850784009"), []byte(",-86.8"), 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "vp2")
	stdout.Reset()
	stderr.Reset()
	if rc := Run(context.Background(), []string{"validate", "power", "-o", out2, "--traces", bad}, &stdout, &stderr); rc == 0 {
		t.Fatal("negative power accepted")
	}
	for _, w := range []string{"summary_power_v100.csv", "line 2", "field average_power"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("error %q does not name %q", stderr.String(), w)
		}
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("results directory left behind: %v", err)
	}
}
