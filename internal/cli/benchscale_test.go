package cli

import (
	"runtime"
	"testing"

	"github.com/wattsched/wattsched/experiment/pwr"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/scenario"
)

// BenchmarkInflationScale runs one inflation run of the openb Default pod
// list to 1.3x capacity per policy on the GPU node list and on the list
// repeated ten times (wattsched traces scale --factor 10), one core, and
// reports the CPU time of each and their ratio (budget, issue 30: at most
// 12x for every single scorer; the tasks grow 9.9x).
func BenchmarkInflationScale(b *testing.B) {
	s, err := pwr.Scenario("default", 1, "")
	if err != nil {
		b.Fatal(err)
	}
	in, err := tasks.LoadInputs(s)
	if err != nil {
		b.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	for _, p := range s.Policies {
		b.Run(p.Name, func(b *testing.B) {
			one := *s
			one.Policies = []scenario.PolicySpec{p}
			var x1, x10 float64
			for b.Loop() {
				pts, err := measureScale(&one, in, []int{1, 10}, 1, nil)
				if err != nil {
					b.Fatal(err)
				}
				x1, x10 = x1+pts[0].CPU, x10+pts[1].CPU
			}
			b.ReportMetric(x1/float64(b.N), "cpu-s-x1")
			b.ReportMetric(x10/float64(b.N), "cpu-s-x10")
			b.ReportMetric(x10/x1, "x10/x1")
		})
	}
}
