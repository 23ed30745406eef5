package experiment_test

import (
	"runtime"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/internal/cli"
)

// BenchmarkInflationDefault times one inflation run of the openb Default
// trace to 1.3x capacity on the 1213-node cluster, per policy, on one core.
// Budget (DESIGN.md): under 1 s per run.
func BenchmarkInflationDefault(b *testing.B) {
	s, err := experiment.PWRScenario("default", 1, "")
	if err != nil {
		b.Fatal(err)
	}
	in, err := experiment.LoadInputs(s.Trace)
	if err != nil {
		b.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	r := &experiment.Runner{Registry: cli.Registry(), Catalog: hw.Default(), Workers: 1}
	for _, p := range s.Policies {
		b.Run(p.Name, func(b *testing.B) {
			one := *s
			one.Policies = []experiment.PolicySpec{p}
			tasks := 0
			for b.Loop() {
				res, err := r.RunInflation(&one, in)
				if err != nil {
					b.Fatal(err)
				}
				tasks += res.Runs[0].Tasks
			}
			b.ReportMetric(float64(tasks)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}
