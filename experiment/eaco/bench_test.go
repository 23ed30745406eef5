package eaco

import (
	"runtime"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
)

// BenchmarkEaCODecision: one EaCO decision with 500 queued jobs on a full
// 28-node cluster (budget: 1 ms).
func BenchmarkEaCODecision(b *testing.B) {
	e, err := NewEnv(hw.Default())
	if err != nil {
		b.Fatal(err)
	}
	decide, err := e.DecisionBench(28, 500)
	if err != nil {
		b.Fatal(err)
	}
	placed := 0
	for b.Loop() {
		placed = decide()
	}
	b.ReportMetric(float64(placed), "placements")
}

// BenchmarkEaCOReproduce: the whole study (2 clusters x 6 schedulers x 5
// seeds, 1,000 jobs each) on two cores (budget: 30 s).
func BenchmarkEaCOReproduce(b *testing.B) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	e, err := NewEnv(hw.Default())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Reproduce(Options{Registries: builtin.Registries(), Env: e, Jobs: DefaultJobs, PerHour: DefaultPerHour, Seeds: DefaultSeeds, Workers: 2}); err != nil {
			b.Fatal(err)
		}
	}
}
