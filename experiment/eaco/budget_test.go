package eaco

import (
	"fmt"
	"testing"

	"github.com/wattsched/wattsched/scenario"
)

// TestEstimateColocMeasured keeps the peak resident sets measured for
// coloc scenarios (/usr/bin/time -f %M wattsched run -c FILE, KiB) and
// checks the estimate against each: never below a peak (a refused run
// must be one that would not fit), and within 1.5x of it (issues 39,
// 40). The figures are docs/performance.md's; a new measurement is a new
// row.
func TestEstimateColocMeasured(t *testing.T) {
	for _, m := range []struct {
		what          string
		jobs, nodes   int
		measuredBytes int64
	}{
		// FIFO, one seed, jobs drawn from gavel-msr (the estimate reads
		// the jobs, runs and workers only). Before issue 39 (docs/performance.md, memory per unit of work).
		{"3,000 jobs on 28 nodes", 3000, 28, 40_000_000},
		{"30,000 jobs on 28 nodes", 30000, 28, 71_000_000},
		// Issue 39 (Poisson 800/h), before and after StartFIFO copied the
		// table only when a job starts: 375,208 and 359,556 KiB.
		{"300,000 jobs on 4,096 nodes", 300000, 4096, 375208 << 10},
		{"300,000 jobs on 4,096 nodes, again", 300000, 4096, 359556 << 10},
		// The same jobs under EaCO instead of FIFO (commit f9318ea).
		{"300,000 jobs on 4,096 nodes, EaCO", 300000, 4096, 394140 << 10},
		// Again at commit 4ccabf9, and after EaCO's bound (commit 553a074, the make build binary).
		{"300,000 jobs on 4,096 nodes, EaCO, again", 300000, 4096, 392504 << 10},
		{"300,000 jobs on 4,096 nodes, EaCO, bound", 300000, 4096, 368084 << 10},
	} {
		t.Run(m.what, func(t *testing.T) {
			s, err := scenario.Parse([]byte(fmt.Sprintf(`name: m
mode: coloc
seeds: 1
coloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 800, count: %d, nodes: %d, systems: [FIFO]}
`, m.jobs, m.nodes)), "m.yaml")
			if err != nil {
				t.Fatal(err)
			}
			est := EstimateScenario(s, m.jobs, 1, 2).Bytes
			r := float64(est) / float64(m.measuredBytes)
			t.Logf("estimate %d B, measured %d B: %.2fx", est, m.measuredBytes, r)
			if r < 1 {
				t.Errorf("estimate %d B below the measured peak %d B", est, m.measuredBytes)
			}
			if r > 1.5 {
				t.Errorf("estimate %d B is %.2fx the measured peak %d B, want at most 1.5x", est, r, m.measuredBytes)
			}
		})
	}
}
