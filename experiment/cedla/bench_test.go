package cedla

import (
	"testing"

	pcedla "github.com/wattsched/wattsched/policy/cedla"
)

// BenchmarkPlan is one rolling plan of the size (160 nodes, 280
// jobs, 96-slot look-ahead): budget 5 s within a 1% gap on one core; the
// exact problem and relax-and-fix with 4 binary slots (the study's setting).
func BenchmarkPlan(b *testing.B) {
	for _, c := range []struct {
		mode pcedla.Mode
		bin  int
		name string
	}{{pcedla.Soft, 0, "soft-exact"}, {pcedla.Hard, 0, "hard-exact"}, {pcedla.Soft, 4, "soft-relax-fix"}, {pcedla.Hard, 4, "hard-relax-fix"}} {
		b.Run(c.name, func(b *testing.B) {
			var gap, solve, cols, jobs float64
			limited := 0.0
			for b.Loop() {
				info, n, err := BenchPlan(c.mode, c.bin)
				if err != nil {
					b.Fatal(err)
				}
				gap, solve, cols, jobs = info.Gap, info.Seconds, float64(info.Vars), float64(n)
				if info.Status == "time limit" {
					limited = 1
				}
			}
			b.ReportMetric(gap*100, "gap%")
			b.ReportMetric(solve, "solve-s")
			b.ReportMetric(cols, "columns")
			b.ReportMetric(jobs, "jobs")
			b.ReportMetric(limited, "time-limited")
		})
	}
}
