package sim_test

import (
	"math"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fcfs"
	"github.com/wattsched/wattsched/policy/vahrm"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// FuzzHPCEngine runs the HPC engine under FCFS with and without EASY
// backfilling and VAHRM, with and without a power limit, on small fuzzed
// job lists: no panic, every job that can run ends after it starts, energy
// finite, the hours summing to it, predicted power never above the limit.
func FuzzHPCEngine(f *testing.F) {
	f.Add([]byte{4, 10, 2, 0, 5, 1, 1, 3, 3, 0, 200})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, b []byte) {
		at := func(i int) int {
			if len(b) == 0 {
				return 0
			}
			return int(b[i%len(b)])
		}
		truth := threeNodes()
		var jobs []policy.HPCJob
		for k := 0; k < 1+at(0)%12; k++ {
			o := 1 + 4*k
			jobs = append(jobs, policy.HPCJob{ID: k, Submit: job.Time(at(o)) * 1000, Runtime: job.Time(1+at(o+1)) * 1000,
				Nodes: 1 + at(o+2)%3, Type: at(o+3) % 2, FirstRun: at(o+3)%5 == 0})
		}
		limit := power.Limit(0)
		if at(60)%2 == 1 {
			limit = power.Limit(300 + 4*at(61))
		}
		mk := []func() (policy.HPCScheduler, error){
			func() (policy.HPCScheduler, error) {
				return fcfs.New(fcfs.Args{Variation: fcfs.Unaware}, policy.HPCDeps{Pred: truth})
			},
			func() (policy.HPCScheduler, error) {
				return fcfs.New(fcfs.Args{Variation: fcfs.Unaware, Backfill: true}, policy.HPCDeps{Pred: truth})
			},
			func() (policy.HPCScheduler, error) {
				return vahrm.New(vahrm.Args{}.Default(), policy.HPCDeps{Pred: truth})
			},
		}
		for _, m := range mk {
			s, err := m()
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.RunHPC(append([]policy.HPCJob(nil), jobs...), s, sim.HPCOptions{Truth: truth, PowerLimit: limit, ProfileOverhead: 0.05})
			if err != nil {
				if strings.Contains(err.Error(), "never ran") {
					continue // a job that can never fit the cap is reported, not a crash
				}
				t.Fatalf("%T: %v", s, err)
			}
			e := float64(res.Energy)
			if math.IsNaN(e) || math.IsInf(e, 0) || e < 0 {
				t.Fatalf("energy %v", e)
			}
			var sum float64
			for _, h := range res.Hourly {
				sum += float64(h)
			}
			if math.Abs(sum-e) > 1e-6*math.Max(1, e) {
				t.Fatalf("hours sum to %v, energy %v", sum, e)
			}
			if limit > 0 && res.MaxPredictedAtStart > 0 && float64(res.MaxPredictedAtStart) > float64(limit)*(1+1e-9) {
				t.Fatalf("predicted %v W above the limit %v", res.MaxPredictedAtStart, limit)
			}
			for _, j := range res.Jobs {
				if j.Start >= 0 && (j.Start < j.Submit || j.End < j.Start) {
					t.Fatalf("job %+v out of order", j)
				}
			}
		}
	})
}
