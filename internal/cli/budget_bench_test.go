package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// estimateCommands are the command lines of docs/performance.md's table of
// memory estimates against measured peaks: every command and mode on the
// examples, and each reproduction's quick form (the large runs the figures
// were fitted on are kept as measured rows by the estimate tests of
// experiment, experiment/tasks, experiment/eaco and experiment/cedla).
var estimateCommands = [][]string{
	{"run", "-c", "../../examples/replay-openb.yaml"},
	{"run", "-c", "../../examples/replay-powerdown.yaml"},
	{"run", "-c", "../../examples/replay-measured.yaml"},
	{"run", "-c", "../../examples/replay-kwok-openb.yaml"},
	{"run", "-c", "../../examples/byo-replay.yaml"},
	{"run", "-c", "../../examples/byo-hardware.yaml"},
	{"run", "-c", "../../examples/mixed-h100-a100-l40s.yaml"},
	{"run"}, // the embedded pwr-default: inflation
	{"run", "-c", "../../examples/hpc-vahrm.yaml"},
	{"run", "-c", "../../examples/elastic-powerflow.yaml"},
	{"run", "-c", "../../examples/coloc-eaco.yaml"},
	{"run", "-c", "../../examples/coloc-gavel-rounds.yaml"},
	{"run", "-c", "../../examples/slotted-cedla.yaml"},
	{"compare", "-c", "../../examples/byo-replay.yaml"},
	{"compare", "-c", "../../examples/replay-openb.yaml"},
	{"compare", "-c", "../../examples/replay-powerdown.yaml"},
	{"compare", "-c", "../../examples/mixed-h100-a100-l40s.yaml"},
	{"reproduce", "vahrm", "--quick"},
	{"reproduce", "eaco", "--quick"},
	{"reproduce", "pwr", "--seeds", "1"},
	{"reproduce", "powerflow", "--quick"},
	{"reproduce", "cedla", "--quick"},
}

var estimateRE = regexp.MustCompile(`\(~([0-9.]+) ([KMGT])iB\)`)

// BenchmarkEstimateVsPeak runs each command of estimateCommands with the
// binary users run (built as `make build` builds bin/wattsched: static,
// stripped, with HiGHS) and reports its peak resident set (the kernel's
// maxrss), the estimate the command prints when refused under
// --max-memory 1B (which also warms the page cache: a cold binary maps
// fewer of its pages and peaks lower), and their ratio, which must be
// 1..1.5 (docs/performance.md). A benchmark, not a test: it re-measures
// the figures the tests hold (tasks.TestEstimateCompareVariantsMeasured,
// eaco.TestEstimateColocMeasured, cedla.TestEstimateSlottedMeasured).
func BenchmarkEstimateVsPeak(b *testing.B) {
	bin := shippedBinary(b)
	for _, args := range estimateCommands {
		var parts []string
		for _, a := range args {
			parts = append(parts, filepath.Base(a))
		}
		b.Run(strings.Join(parts, "_"), func(b *testing.B) {
			for b.Loop() {
				est := binRun(b, bin, append(append([]string{}, args...), "-o", filepath.Join(b.TempDir(), "out"), "--max-memory", "1B"))
				m := estimateRE.FindStringSubmatch(est.stderr)
				if m == nil {
					b.Fatalf("%v: no estimate in %q", args, est.stderr)
				}
				x, _ := strconv.ParseFloat(m[1], 64)
				estMiB := x * map[string]float64{"K": 1.0 / 1024, "M": 1, "G": 1024, "T": 1 << 20}[m[2]]
				r := binRun(b, bin, append(append([]string{}, args...), "-o", filepath.Join(b.TempDir(), "out")))
				if r.code != 0 {
					b.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
				}
				peak := float64(r.maxrssKiB) / 1024
				ratio := estMiB / peak
				b.ReportMetric(peak, "peak-MiB")
				b.ReportMetric(estMiB, "estimate-MiB")
				b.ReportMetric(ratio, "estimate/peak")
				if ratio < 1 || ratio > 1.5 {
					b.Errorf("%v: estimate %.1f MiB is %.2fx the peak %.1f MiB, want 1..1.5x", args, estMiB, ratio, peak)
				}
			}
		})
	}
}

// shippedBinary builds wattsched as the Makefile's build target does into
// a temporary directory (skipping when that cannot be done here, e.g.
// without HiGHS's pkg-config files: run it under `make env`).
func shippedBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "wattsched")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "highs,netgo,osusergo",
		"-ldflags", "-s -w -linkmode external -extldflags -static", "-o", bin, "../../cmd/wattsched")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("cannot build the shipped binary here: %v\n%s", err, out)
	}
	return bin
}

type childResult struct {
	code      int
	stderr    string
	maxrssKiB int64
}

// binRun runs bin with args under /usr/bin/time and returns its exit
// code, standard error and peak resident set. The kernel's maxrss of a
// child this process starts itself would be at least this process's own
// (Go starts children sharing its memory until exec, and the high-water
// mark survives exec), so the peak is read by time(1), whose child
// starts small.
func binRun(b *testing.B, bin string, args []string) childResult {
	b.Helper()
	rss := filepath.Join(b.TempDir(), "maxrss")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", rss, bin}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		b.Skipf("/usr/bin/time: %v", err)
	}
	out, err := os.ReadFile(rss)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Fields(string(out))
	kib, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		b.Fatalf("maxrss %q: %v", out, err)
	}
	return childResult{code: cmd.ProcessState.ExitCode(), stderr: stderr.String(), maxrssKiB: kib}
}
