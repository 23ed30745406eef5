package cedla

import (
	"testing"

	pcedla "github.com/wattsched/wattsched/policy/cedla"
)

// BenchmarkPlan is one rolling plan of the size (160 nodes, 280
// jobs, 96-slot look-ahead): budget 5 s within a 1% gap on one core; the
// exact problem, relax-and-fix with 4 binary slots, and the study's
// setting (relax-and-fix with the far part of the window in hourly blocks).
func BenchmarkPlan(b *testing.B) {
	for _, c := range []struct {
		mode  pcedla.Mode
		bin   int
		study bool
		name  string
	}{{pcedla.Soft, 0, false, "soft-exact"}, {pcedla.Hard, 0, false, "hard-exact"}, {pcedla.Soft, 4, false, "soft-relax-fix"}, {pcedla.Hard, 4, false, "hard-relax-fix"},
		{pcedla.Soft, 4, true, "soft-study-blocks"}, {pcedla.Hard, 4, true, "hard-study-blocks"}} {
		b.Run(c.name, func(b *testing.B) {
			var gap, solve, cols, jobs, lpIt float64
			mip := 0.0
			for b.Loop() {
				info, n, err := BenchPlan(c.mode, c.bin)
				if c.study {
					info, n, err = BenchPlanStudy(c.mode)
				}
				if err != nil {
					b.Fatal(err)
				}
				gap, solve, cols, jobs, lpIt = info.Gap, info.Seconds, float64(info.Vars), float64(n), float64(info.LPIterations)
				if info.Heuristic == pcedla.ByMIP || info.Heuristic == pcedla.ByMIPStart {
					mip = 1
				}
			}
			b.ReportMetric(gap*100, "gap%")
			b.ReportMetric(solve, "solve-s")
			b.ReportMetric(cols, "columns")
			b.ReportMetric(jobs, "jobs")
			b.ReportMetric(mip, "mip")
			b.ReportMetric(lpIt, "lp-iterations")
		})
	}
}
