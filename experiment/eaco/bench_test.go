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

// BenchmarkColoc4096: 30,000 gavel-msr jobs arriving Poisson at 800 an
// hour on 4,096 nodes (issue 39's large co-location run at a tenth of
// its jobs), FIFO and EaCO, one seed; the workload is drawn before the
// timer. With -cpuprofile it shows where a large run's time goes
// (docs/performance.md).
func BenchmarkColoc4096(b *testing.B) {
	e, err := NewEnv(hw.Default())
	if err != nil {
		b.Fatal(err)
	}
	jobs := e.Workload(1, 30_000, 800)
	for _, pol := range []string{"fifo", "eaco"} {
		b.Run(pol, func(b *testing.B) {
			for b.Loop() {
				r, err := e.RunOne(builtin.Registries(), pol, nil, 4096, 1, jobs, false)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(r.Res.Events), "events")
			}
		})
	}
}
