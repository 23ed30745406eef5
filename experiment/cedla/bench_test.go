package cedla

import (
	"testing"

	pcedla "github.com/wattsched/wattsched/policy/cedla"
)

// BenchmarkPlan is one rolling plan of the size (160 nodes, 280
// jobs, 96-slot look-ahead): budget 5 s within a 1% gap on one core.
func BenchmarkPlan(b *testing.B) {
	for _, mode := range []pcedla.Mode{pcedla.Soft, pcedla.Hard} {
		b.Run(string(mode), func(b *testing.B) {
			var gap float64
			for b.Loop() {
				info, _, err := BenchPlan(mode)
				if err != nil {
					b.Fatal(err)
				}
				gap = info.Gap
			}
			b.ReportMetric(gap*100, "gap%")
		})
	}
}
