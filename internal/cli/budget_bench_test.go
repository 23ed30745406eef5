package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

// estimateCommands are the command lines of docs/performance.md's table of
// memory estimates against measured peaks: every command and mode on the
// examples, and each reproduction's quick form.
var estimateCommands = [][]string{
	{"run", "-c", "../../examples/replay-openb.yaml"},
	{"run", "-c", "../../examples/byo-replay.yaml"},
	{"run", "-c", "../../examples/hpc-vahrm.yaml"},
	{"run", "-c", "../../examples/elastic-powerflow.yaml"},
	{"run", "-c", "../../examples/coloc-eaco.yaml"},
	{"run", "-c", "../../examples/slotted-cedla.yaml"},
	{"run"}, // the embedded pwr-default: inflation
	{"compare", "-c", "../../examples/byo-replay.yaml"},
	{"reproduce", "pwr", "--seeds", "1"},
	{"reproduce", "vahrm", "--quick"},
	{"reproduce", "eaco", "--quick"},
	{"reproduce", "powerflow", "--quick"},
	{"reproduce", "cedla", "--quick"},
}

var estimateRE = regexp.MustCompile(`\(~([0-9.]+) ([KMGT])iB\)`)

// BenchmarkEstimateVsPeak runs each command of estimateCommands in a child
// process and reports its peak resident set (the kernel's maxrss), the
// estimate the command prints when refused under --max-memory 1B, and
// their ratio, which must be 1..1.5 where the estimate is not dominated by
// the process's fixed figure (docs/performance.md). A benchmark, not a
// test: it re-measures the figures the tests hold
// (tasks.TestEstimateCompareVariantsMeasured, cedla.TestEstimateSlottedMeasured).
func BenchmarkEstimateVsPeak(b *testing.B) {
	for _, args := range estimateCommands {
		name := filepath.Base(args[len(args)-1])
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				est := childRun(b, append(append([]string{}, args...), "-o", filepath.Join(b.TempDir(), "out"), "--max-memory", "1B"))
				m := estimateRE.FindStringSubmatch(est.stderr)
				if m == nil {
					b.Fatalf("%v: no estimate in %q", args, est.stderr)
				}
				x, _ := strconv.ParseFloat(m[1], 64)
				estMiB := x * map[string]float64{"K": 1.0 / 1024, "M": 1, "G": 1024, "T": 1 << 20}[m[2]]
				r := childRun(b, append(append([]string{}, args...), "-o", filepath.Join(b.TempDir(), "out")))
				if r.code != 0 {
					b.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
				}
				b.ReportMetric(float64(r.maxrssKiB)/1024, "peak-MiB")
				b.ReportMetric(estMiB, "estimate-MiB")
				b.ReportMetric(estMiB/(float64(r.maxrssKiB)/1024), "estimate/peak")
			}
		})
	}
}

type childResult struct {
	code      int
	stderr    string
	maxrssKiB int64
}

// childRun runs args in a child process (TestOutdirChild) and returns its
// exit code, standard error and peak resident set.
func childRun(b *testing.B, args []string) childResult {
	b.Helper()
	spec, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOutdirChild$")
	cmd.Env = append(os.Environ(), "WATTSCHED_OUTDIR_CHILD="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		b.Fatal(err)
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss
	}
	return childResult{code: cmd.ProcessState.ExitCode(), stderr: stderr.String(), maxrssKiB: rss}
}
