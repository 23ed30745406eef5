package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// benchReproHelperEnv makes TestBenchReproHelper act as the wattsched
// binary (the os/exec tests' helper-process pattern): bench
// --reproductions runs its reproductions as child processes of the
// binary, which under go test is the test binary.
const benchReproHelperEnv = "WATTSCHED_BENCH_REPRO_HELPER"

// TestBenchReproHelper is not a test: run as a child with the variable
// set, it runs the CLI on the arguments after "--" and exits.
func TestBenchReproHelper(t *testing.T) {
	if os.Getenv(benchReproHelperEnv) != "1" {
		t.Skip("helper process for TestBenchReproductions")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Run(context.Background(), args, os.Stdout, os.Stderr))
}

// testReproRunner runs `wattsched args...` through the test binary.
func testReproRunner(args []string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestBenchReproHelper$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), benchReproHelperEnv+"=1")
	return cmd, nil
}

// TestBenchReproductions times the cheapest reproduction (PWR, default
// trace, one seed: 9 runs) as a child process on one core and checks the
// table and that the results it kept are the results of the same
// reproduction run directly with three workers: neither timing it nor the
// number of cores changes them.
func TestBenchReproductions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a reproduction in a child process")
	}
	dir := t.TempDir()
	keep := filepath.Join(dir, "timed")
	var out, errs bytes.Buffer
	if err := cmdBenchRepros(&out, &errs, testReproRunner, "pwr-quick", keep, 1); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[2], "reproduction") {
		t.Fatalf("table:\n%s", out.String())
	}
	row := strings.Fields(lines[3])
	// name, CPU s, wall s, CPU/wall, cores, quiet s, within budget, peak
	// RSS MB, load, sha256, command...
	if len(row) < 11 || row[0] != "pwr-quick" || row[4] != "1" || row[6] != "yes" {
		t.Fatalf("row %q of\n%s", lines[3], out.String())
	}
	for i, what := range map[int]string{1: "CPU s", 2: "wall s", 7: "peak RSS MB"} {
		if row[i] == "0.0" || row[i] == "0" || strings.HasPrefix(row[i], "-") {
			t.Errorf("%s = %s, want > 0 (row %q)", what, row[i], lines[3])
		}
	}
	if cmd := strings.Join(row[10:], " "); cmd != "wattsched reproduce pwr --seeds 1 -o DIR" {
		t.Errorf("command %q", cmd)
	}
	if !strings.Contains(out.String(), "pwr-quick: ") || !strings.Contains(out.String(), "claims hold") {
		t.Errorf("no headline in\n%s", out.String())
	}
	// The same reproduction in this process, to another directory: the
	// same files, byte for byte, and the digest the table printed.
	direct := filepath.Join(dir, "direct")
	prev := runtime.GOMAXPROCS(3)
	defer runtime.GOMAXPROCS(prev)
	if code := Run(context.Background(), []string{"reproduce", "pwr", "--seeds", "1", "-o", direct}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("direct run: exit %d", code)
	}
	want, err := dirDigest(direct)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(want, row[9]) {
		t.Errorf("results digest %s, want %s (the direct run's)", row[9], want[:12])
	}
	got, err := dirDigest(filepath.Join(keep, "pwr-quick"))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("kept results differ from the direct run's")
	}
	// --keep never writes over a directory that exists.
	if err := cmdBenchRepros(&out, &errs, testReproRunner, "pwr-quick", keep, 1); err == nil {
		t.Errorf("--keep over an existing directory: no error")
	}
}

func TestBenchReproductionsRefuses(t *testing.T) {
	var out bytes.Buffer
	err := cmdBenchRepros(&out, io.Discard, testReproRunner, "pwr,warp", "", 0)
	if err == nil || !strings.Contains(err.Error(), `unknown reproduction "warp"`) {
		t.Fatalf("err = %v, want unknown reproduction warp", err)
	}
	if err := cmdBenchRepros(&out, io.Discard, testReproRunner, "pwr", "", -1); err == nil || !strings.Contains(err.Error(), "--procs -1") {
		t.Fatalf("err = %v, want --procs refused", err)
	}
	if out.Len() != 0 {
		t.Errorf("refused, yet printed %q", out.String())
	}
}

// TestSelectRepros: "all" is the five full reproductions of issue 39, a
// list keeps its order.
func TestSelectRepros(t *testing.T) {
	all, err := selectRepros("all")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range all {
		names = append(names, c.name)
	}
	if got := strings.Join(names, ","); got != "pwr,vahrm,powerflow,eaco,cedla" {
		t.Errorf("all = %s", got)
	}
	if strings.Count(pwrPaperTraces, ",") != 12 {
		t.Errorf("pwr runs %d traces, want 13", strings.Count(pwrPaperTraces, ",")+1)
	}
	two, err := selectRepros("eaco-quick, pwr")
	if err != nil || len(two) != 2 || two[0].name != "eaco-quick" || two[1].name != "pwr" {
		t.Errorf("eaco-quick, pwr = %v, %v", two, err)
	}
}

// TestReproTableVerdict: the verdict reads CPU over the cores the run may
// use; 300 s or more is "no".
func TestReproTableVerdict(t *testing.T) {
	ts := []ReproTiming{
		{Name: "a", CPU: 598, Wall: 400, Procs: 2, Digest: "0123456789abcdef", Command: "wattsched reproduce a -o DIR"}, // 598/2 = 299 s
		{Name: "b", CPU: 600, Wall: 300, Procs: 2, Digest: "0123456789abcdef", Command: "wattsched reproduce b -o DIR"}, // 600/2 = 300 s
	}
	var out bytes.Buffer
	if err := writeReproTable(&out, "2 cores", ts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	a, b := strings.Fields(lines[3]), strings.Fields(lines[4])
	if a[5] != "299.0" || a[6] != "yes" || b[5] != "300.0" || b[6] != "no" {
		t.Fatalf("table:\n%s", out.String())
	}
}
