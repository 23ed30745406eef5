package tasks_test

import (
	"runtime"
	"testing"

	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/scenario"
)

// BenchmarkInflationDefault times one inflation run of the openb Default
// trace to 1.3x capacity on the 1213-node cluster, per policy, on one core.
// Budget (DESIGN.md): under 1 s per run.
func BenchmarkInflationDefault(b *testing.B) {
	s, err := scenario.Builtin("pwr-default")
	if err != nil {
		b.Fatal(err)
	}
	s.Seeds = 1
	in, err := tasks.LoadInputs(s)
	if err != nil {
		b.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	env := testEnv()
	env.Workers = 1
	for _, p := range s.Policies {
		b.Run(p.Name, func(b *testing.B) {
			one := *s
			one.Policies = []scenario.PolicySpec{p}
			ntasks := 0
			for b.Loop() {
				res, err := tasks.RunInflation(env, &one, in)
				if err != nil {
					b.Fatal(err)
				}
				ntasks += res.Runs[0].Tasks
			}
			b.ReportMetric(float64(ntasks)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}
