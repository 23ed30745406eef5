package powerflow_test

import (
	"runtime"
	"testing"

	"github.com/wattsched/wattsched/experiment/powerflow"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/trace/philly"
)

func pfBenchEnv(b *testing.B) (*powerflow.Env, []policy.ElasticJob) {
	b.Helper()
	env, err := powerflow.NewEnv(builtin.Registries(), powerflow.DefaultSetup())
	if err != nil {
		b.Fatal(err)
	}
	gj, err := philly.Day()
	if err != nil {
		b.Fatal(err)
	}
	return env, env.Jobs(gj, 42)
}

// BenchmarkPowerFlowSweep: the 1,896-job Philly day under PowerFlow at the
// 10 etas of the JCT-vs-energy curve (budget: 5 s on one core).
func BenchmarkPowerFlowSweep(b *testing.B) {
	env, jobs := pfBenchEnv(b)
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	for b.Loop() {
		if _, err := env.Sweep(jobs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPowerFlowDecision: one allocation decision with 500 queued jobs.
func BenchmarkPowerFlowDecision(b *testing.B) {
	env, jobs := pfBenchEnv(b)
	decide, err := env.DecisionBench(jobs, 500)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		decide()
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
}
