package experiment_test

import (
	"runtime"
	"testing"

	"github.com/wattsched/wattsched/experiment"
)

// vahrmEnv is the environment `wattsched bench` times (ideal predictions:
// the run time does not depend on prediction errors).
func vahrmEnv(tb testing.TB, jobs int) *experiment.VAHRMEnv {
	tb.Helper()
	env, err := experiment.NewVAHRMEnvIdeal(jobs, 42)
	if err != nil {
		tb.Fatal(err)
	}
	return env
}

// BenchmarkVAHRMRun: one 10,000-job replay on 540 nodes (budget: 2 s on one core).
func BenchmarkVAHRMRun(b *testing.B) {
	env := vahrmEnv(b, 10000)
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	for _, sr := range []float64{1, 8} {
		s := experiment.DefaultVAHRMSetting()
		s.SR = sr
		b.Run(map[float64]string{1: "SR=1", 8: "SR=8"}[sr], func(b *testing.B) {
			jobs := 0
			for b.Loop() {
				if _, err := env.RunVAHRM("VAHRM+TSMVA", experiment.VAHRMWorkloads()[4], s); err != nil {
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
