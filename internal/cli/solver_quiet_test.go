package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/solver"
)

// A slotted run of CE-DLA, three seeds side by side, in a child process
// whose stdout (file descriptor 1, where HiGHS's printf went) is a pipe:
// twice the same bytes, and nothing of HiGHS in them (issue 28: "Iteration
// total error" lines in the middle of the table).
func TestSlottedStdoutQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs CE-DLA in child processes")
	}
	if !solver.Available() {
		t.Skip("CE-DLA needs HiGHS (build tag highs)")
	}
	if args := os.Getenv("WATTSCHED_QUIET_CLI_CHILD"); args != "" {
		os.Exit(Run(context.Background(), strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	dir := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "name: quiet\nseeds: 3\n" + strings.TrimPrefix(slottedDoc("{GTX1060-3GB: 2, RTX2060: 2, GTX1080: 2}",
		"[{name: soft, policy: cedla, args: {mode: soft}}, {name: hard, policy: cedla, args: {mode: hard}}]"), "name: hostile\n")
	for name, body := range map[string]string{"s.yaml": doc, "jobs.csv": slottedJobs, "load.csv": slottedLoad} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var outs []string
	out := filepath.Join(t.TempDir(), "out") // the same path twice: stdout names it
	for k := range 2 {
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSlottedStdoutQuiet$")
		cmd.Env = append(os.Environ(), "WATTSCHED_QUIET_CLI_CHILD="+strings.Join([]string{"run", "-c", filepath.Join(dir, "s.yaml"), "-o", out}, "\x1f"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: %v\n%s", k, err, stderr.String())
		}
		if s := stdout.String(); strings.Contains(s, "Iteration") || !strings.Contains(s, "soft") {
			t.Fatalf("run %d: stdout:\n%s", k, s)
		}
		outs = append(outs, stdout.String())
	}
	if outs[0] != outs[1] {
		t.Errorf("stdout differs between two runs of the same scenario:\n%s\n---\n%s", outs[0], outs[1])
	}
}

// --solver-log writes HiGHS's log of every CE-DLA solve to a file and
// nothing of it to stdout; it is refused outside mode slotted.
func TestSolverLogFlag(t *testing.T) {
	if !solver.Available() {
		t.Skip("CE-DLA needs HiGHS (build tag highs)")
	}
	cfg := slottedFiles(t, "[{name: soft, policy: cedla, args: {mode: soft}}]", slottedJobs, slottedLoad)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "highs.log")
	code, stdout, stderr := run(t, "run", "-c", cfg, "-o", filepath.Join(dir, "out"), "--solver-log", logPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// One "Running HiGHS" banner per run of HiGHS; the scenario plans at
	// least once per arrival (3 jobs).
	if n := strings.Count(string(b), "Running HiGHS"); n < 3 || !strings.Contains(string(b), "Solving report") {
		t.Errorf("log holds %d HiGHS runs:\n%.2000s", n, b)
	}
	if strings.Contains(stdout, "HiGHS") || strings.Contains(stderr, "Solving report") {
		t.Errorf("HiGHS's log reached stdout or stderr:\n%s\n%s", stdout, stderr)
	}
	code, _, stderr = run(t, "run", "-c", "../../examples/replay-openb.yaml", "-o", filepath.Join(dir, "out2"), "--solver-log", filepath.Join(dir, "x.log"))
	if code != 2 || !strings.Contains(stderr, "--solver-log applies to mode slotted") {
		t.Errorf("replay with --solver-log: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.log")); !os.IsNotExist(err) {
		t.Errorf("refused run created its log file")
	}
}
