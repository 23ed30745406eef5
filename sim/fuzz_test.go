package sim

import (
	"math"
	"strings"
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
		type variant struct {
			mode Mode
			pd   *PowerDown
		}
		variants := []variant{{Replay, nil}, {Inflation, nil}}
		if at(5)%2 == 1 {
			variants = append(variants, variant{Replay, &PowerDown{IdleAfter: job.Time(1+at(6)) * 1000, Wake: job.Time(at(9)) * 500, OffW: hw.Watts(at(8) % 20)}})
		}
		for _, v := range variants {
			mode := v.mode
			c, err := cluster.New(hw.Default(), specs)
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
			pl, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "b", Scorer: sc, Weight: 1}})
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(c, &policy.Online{Placer: pl}, Options{Mode: mode, CheckInvariants: true, PowerLimit: 0, PowerDown: v.pd})
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

// scaling is a ground truth for any power-of-two count up to 8: n GPUs
// take 1/n^0.8 s per iteration; power grows with the frequency index.
type scaling struct{}

func (scaling) Truth(j *policy.ElasticJob, n, fi int) (float64, float64) {
	return 1 / math.Pow(float64(n), 0.8), 100 + 50*float64(fi)
}
func (scaling) CanRun(j *policy.ElasticJob, n int) bool { return n >= 1 && n <= 8 && n&(n-1) == 0 }

// FuzzElasticEngine runs the elastic engine under Gandiva's in-order
// placement (policy.PlaceInOrder) on small fuzzed job lists, restart
// pauses, pre-runs, profiling windows, measurement noise and node
// power-down: no panic, every job ends, times in order, the energy parts
// add up, the hours sum to the total.
func FuzzElasticEngine(f *testing.F) {
	f.Add([]byte{3, 1, 10, 2, 4, 5, 0, 3, 9, 1, 1})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		at := func(i int) int {
			if len(b) == 0 {
				return 0
			}
			return int(b[i%len(b)])
		}
		var jobs []policy.ElasticJob
		for k := 0; k < 1+at(0)%8; k++ {
			o := 1 + 4*k
			lg := at(o) % 4
			jobs = append(jobs, policy.ElasticJob{ID: k, Submit: job.Time(at(o+1)) * 1000, Iters: float64(1 + at(o+2)*37),
				ReqGPUs: 1 << (at(o+3) % (lg + 1)), MaxGPUs: 1 << lg})
		}
		o := ElasticOptions{Nodes: 1 + at(40)%3, GPUsPerNode: 8, FreqsMHz: []int{1000, 1200, 1400}, IdleGPU: 50,
			Restart: job.Time(at(41)%3) * 1000, PreRun: job.Time(at(42)%2) * 2000, Profile: job.Time(at(43)%2) * 3000,
			ProfileFreqs: []int{0, 2}, NoiseSigma: 0.02, PowerOn: hw.Joules(at(44)), NodesStartOff: at(45)%2 == 1, Seed: uint64(at(46))}
		for _, s := range []policy.ElasticScheduler{inOrder{}} {
			res, err := RunElastic(jobs, scaling{}, s, o)
			if err != nil {
				if strings.Contains(err.Error(), "never finished") || strings.Contains(err.Error(), "sim: elastic job") {
					continue // a scheduler that leaves jobs waiting is reported, not a crash
				}
				t.Fatalf("%T: %v", s, err)
			}
			parts := res.JobEnergy + res.IdleEnergy + res.PowerOnEnergy + res.PreRunEnergy
			if !near(res.Energy, parts) || res.Energy < 0 || math.IsNaN(float64(res.Energy)) {
				t.Fatalf("%T: energy %v, parts %v", s, res.Energy, parts)
			}
			var sum hw.Joules
			for _, h := range res.Hourly {
				sum += h
			}
			if !near(sum, res.Energy) {
				t.Fatalf("%T: hours sum to %v, energy %v", s, sum, res.Energy)
			}
			for _, j := range res.Jobs {
				if j.End < j.Start || j.Start < j.Submit {
					t.Fatalf("%T: job %+v out of order", s, j)
				}
			}
		}
	})
}

// inOrder places waiting jobs on their requested GPUs in order (Gandiva's
// rule), at the top frequency, powering only used nodes.
type inOrder struct{}

func (inOrder) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	d := policy.ElasticDecision{Allocs: policy.PlaceInOrder(st, st.Jobs, len(st.FreqsMHz)-1)}
	d.NodeOn = policy.NodesInUse(d.Allocs, st.Nodes)
	return d
}
