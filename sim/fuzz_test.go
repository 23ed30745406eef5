package sim

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
)

// FuzzTaskEngine runs the task engine (replay and inflation) on small
// clusters and task lists decoded from the fuzzer's bytes: no input may
// panic, and every run keeps its invariants (times in order, energy
// finite and non-negative, the hours summing to the total, the cluster
// consistent after every step).
func FuzzTaskEngine(f *testing.F) {
	f.Add([]byte{2, 1, 4, 2, 10, 1, 250, 0, 5, 3, 0, 1, 0, 9, 7, 2, 2, 200, 3})
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		at := func(i int) int {
			if len(b) == 0 {
				return 0
			}
			return int(b[i%len(b)])
		}
		models := []string{"T4", "V100M16", "A100"}
		var specs []cluster.NodeSpec
		for i := 0; i < 1+at(0)%3; i++ {
			g := at(1+i) % 5
			m := ""
			if g > 0 {
				m = models[at(4+i)%3]
			}
			specs = append(specs, cluster.NodeSpec{Name: string(rune('a' + i)), CPUMilli: int64(1+at(7+i)%64) * 1000, MemMiB: 1 << 16, GPUs: g, GPUModel: m})
		}
		var tasks []job.Task
		for k := 0; k < at(10)%20; k++ {
			o := 11 + 5*k
			d := job.Demand{CPUMilli: int64(at(o)%8) * 500, MemMiB: 64}
			switch at(o+1) % 3 {
			case 1:
				d.GPUCount, d.GPUMilli = 1, int64(1+at(o+2)%1000)
			case 2:
				d.GPUCount, d.GPUMilli = 1+at(o+2)%3, job.MilliPerGPU
			}
			if d.Validate() != nil {
				continue
			}
			tasks = append(tasks, job.Task{ID: job.ID(len(tasks)), Class: -1, Demand: d,
				Submit: job.Time(at(o+3)) * 60000, Work: float64(at(o+4)) * 97})
		}
		for _, mode := range []Mode{Replay, Inflation} {
			c, err := cluster.New(hw.Default(), specs)
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
			pl, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "b", Scorer: sc, Weight: 1}})
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(c, &policy.Online{Placer: pl}, Options{Mode: mode, CheckInvariants: true, PowerLimit: 0})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run(tasks)
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			total := float64(res.CPUEnergy + res.GPUEnergy)
			if math.IsNaN(total) || math.IsInf(total, 0) || total < 0 {
				t.Fatalf("%s: energy %v", mode, total)
			}
			var sum float64
			for _, h := range res.Hourly {
				sum += float64(h)
			}
			if math.Abs(sum-total) > 1e-6*math.Max(1, total) {
				t.Fatalf("%s: hours sum to %v, total %v", mode, sum, total)
			}
			for _, r := range res.Tasks {
				if r.Start >= 0 && r.Start < r.Submit || r.End >= 0 && r.End < r.Start {
					t.Fatalf("%s: task %+v out of order", mode, r)
				}
			}
		}
	})
}
