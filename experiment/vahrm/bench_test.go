package vahrm_test

import (
	"runtime"
	"testing"

	"github.com/wattsched/wattsched/experiment/vahrm"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
)

// vahrmEnv is the environment `wattsched bench` times (ideal predictions:
// the run time does not depend on prediction errors).
func vahrmEnv(tb testing.TB, jobs int) *vahrm.Env {
	tb.Helper()
	env, err := vahrm.NewEnvIdeal(builtin.Registries(), jobs, 42)
	if err != nil {
		tb.Fatal(err)
	}
	return env
}

func system(tb testing.TB, name string) scenario.System {
	tb.Helper()
	s, err := vahrm.Systems(name)
	if err != nil {
		tb.Fatal(err)
	}
	return s[0]
}

// BenchmarkVAHRMRun: one 10,000-job replay on 540 nodes (budget: 2 s on one core).
func BenchmarkVAHRMRun(b *testing.B) {
	env := vahrmEnv(b, 10000)
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	for _, sr := range []float64{1, 8} {
		s := vahrm.DefaultSetting()
		s.SR = sr
		b.Run(map[float64]string{1: "SR=1", 8: "SR=8"}[sr], func(b *testing.B) {
			jobs := 0
			for b.Loop() {
				if _, err := env.Run(system(b, "VAHRM+TSMVA"), vahrm.Workloads()[4], s); err != nil {
					b.Fatal(err)
				}
				jobs += 10000
			}
			b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// BenchmarkVAHRMDecision: one scheduling decision with 2,000 queued jobs
// and 100 free nodes (budget: 1 ms; the paper reports 30 ms).
func BenchmarkVAHRMDecision(b *testing.B) {
	env := vahrmEnv(b, 2000)
	decide, err := env.DecisionBench(2000, 100)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		decide()
	}
}
