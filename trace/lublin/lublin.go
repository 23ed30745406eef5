// Package lublin generates rigid parallel jobs from the Lublin–Feitelson
// workload model (U. Lublin and D. G. Feitelson, "The workload on parallel
// supercomputers: modeling the characteristics of rigid jobs", J. Parallel
// Distrib. Comput. 63(11):1105-1122, 2003), as an SWF log with genuine
// arrival times: a daily cycle of arrivals, a two-stage log-uniform job
// size with serial and power-of-two peaks, and a hyper-gamma log run time
// whose mix depends on the job size.
//
// The parameter values are the model's "whole sample" column (no split
// into batch and interactive jobs), as the paper publishes them and the
// Parallel Workloads Archive's reference generator uses them. The code is
// written from the model's description, not from that generator.
package lublin

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wattsched/wattsched/trace/swf"
)

// Params are the model's parameters. Gamma distributions are (shape,
// scale): mean = shape x scale.
type Params struct {
	// Nodes is the machine size: the largest job.
	Nodes int
	// SerialProb is the share of one-node jobs.
	SerialProb float64
	// Pow2Prob is the share of parallel jobs whose size is a power of two.
	Pow2Prob float64
	// ULow, UMed, UHi, UProb: log2 of a parallel job's size is uniform on
	// [ULow, UMed] with probability UProb, else on [UMed, UHi].
	ULow, UMed, UHi, UProb float64
	// A1, B1, A2, B2: the two gammas of the hyper-gamma log run time
	// (natural log of seconds); the first is chosen with probability
	// PA x size + PB (clamped to [0, 1]), so larger jobs run longer.
	A1, B1, A2, B2, PA, PB float64
	// AArr, BArr: the gamma of the log inter-arrival time at rush hours
	// (AArr already multiplied by the model's arrive-rush-to-all ratio).
	AArr, BArr float64
	// ANum, BNum: the gamma whose mass over the 48 half-hours of the day
	// gives the daily cycle of arrivals; DayStart is the half-hour (1-based)
	// at which the model's cyclic day begins (later ones wrap past 48).
	ANum, BNum float64
	DayStart   int
	// MaxLogRun and MaxLogArrival bound the log run time (e^12 s, about
	// 45 h) and the log inter-arrival time (e^13 s): a larger draw is
	// drawn again.
	MaxLogRun, MaxLogArrival float64
}

// Default returns the model's whole-sample parameters for a machine of
// the given size. The paper fits UHi = 7 (128 nodes) with UMed = UHi - 2.5;
// for another size UHi is log2(nodes) and UMed keeps the 2.5 distance, the
// adjustment the model's authors recommend.
func Default(nodes int) Params {
	uhi := math.Log2(float64(max(nodes, 2)))
	return Params{Nodes: nodes,
		SerialProb: 0.244, Pow2Prob: 0.576,
		ULow: 0.8, UMed: math.Max(0.8, uhi-2.5), UHi: uhi, UProb: 0.86,
		A1: 4.2, B1: 0.94, A2: 312, B2: 0.03, PA: -0.0054, PB: 0.78,
		AArr: 10.2303 * 1.0225, BArr: 0.4871,
		ANum: 8.1737, BNum: 3.9631, DayStart: 11,
		MaxLogRun: 12, MaxLogArrival: 13,
	}
}

// Validate names the first bad parameter.
func (p Params) Validate() error {
	prob := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("lublin: %s = %v, want a probability in [0, 1]", name, v)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"serial_prob", p.SerialProb}, {"pow2_prob", p.Pow2Prob}, {"uprob", p.UProb}} {
		if err := prob(c.name, c.v); err != nil {
			return err
		}
	}
	if p.Nodes < 1 || p.Nodes > 1<<20 {
		return fmt.Errorf("lublin: nodes = %d, want 1..%d", p.Nodes, 1<<20)
	}
	if !(p.ULow >= 0 && p.ULow <= p.UMed && p.UMed <= p.UHi) {
		return fmt.Errorf("lublin: ulow %v, umed %v, uhi %v: want 0 <= ulow <= umed <= uhi", p.ULow, p.UMed, p.UHi)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"a1", p.A1}, {"b1", p.B1}, {"a2", p.A2}, {"b2", p.B2}, {"aarr", p.AArr}, {"barr", p.BArr}, {"anum", p.ANum}, {"bnum", p.BNum}, {"max_log_run", p.MaxLogRun}, {"max_log_arrival", p.MaxLogArrival}} {
		if !(c.v > 0) || math.IsInf(c.v, 0) {
			return fmt.Errorf("lublin: %s = %v, want > 0", c.name, c.v)
		}
	}
	if math.IsNaN(p.PA) || math.IsNaN(p.PB) || math.IsInf(p.PA, 0) || math.IsInf(p.PB, 0) {
		return fmt.Errorf("lublin: pa %v, pb %v: want finite", p.PA, p.PB)
	}
	return nil
}

// Buckets is the number of half-hours in the model's day.
const Buckets = 48

// BucketWeights is the daily cycle: the relative arrival rate in each
// half-hour of the day (bucket 0 is 00:00-00:30), averaging 1. Bucket b's
// weight is the mass of gamma(ANum, BNum) on [i-0.5, i+0.5] for its
// 1-based index i = b+1, moved past 48 when it falls before DayStart.
func (p Params) BucketWeights() [Buckets]float64 {
	g := distuv.Gamma{Alpha: p.ANum, Beta: 1 / p.BNum}
	var w [Buckets]float64
	mean := 0.0
	for b := range w {
		i := b + 1
		if i < p.DayStart {
			i += Buckets
		}
		w[b] = g.CDF(float64(i)+0.5) - g.CDF(float64(i)-0.5)
		mean += w[b] / Buckets
	}
	for b := range w {
		// A floor keeps every half-hour reachable (the gamma's far tail
		// can be below float precision for other parameters).
		w[b] = math.Max(w[b]/mean, 1e-9)
	}
	return w
}

// Generate draws n jobs with the given seed. Submit times start at 0
// (midnight of day 0); run times are whole seconds >= 1; each job's
// allocated and requested processors are its size.
func Generate(p Params, n int, seed uint64) (*swf.Log, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if n < 1 || n > 10_000_000 {
		return nil, fmt.Errorf("lublin: %d jobs, want 1..10000000", n)
	}
	r := rand.New(rand.NewPCG(seed, 0x1b1f))
	gamma := func(shape, scale float64) distuv.Gamma {
		return distuv.Gamma{Alpha: shape, Beta: 1 / scale, Src: r}
	}
	g1, g2, arr := gamma(p.A1, p.B1), gamma(p.A2, p.B2), gamma(p.AArr, p.BArr)
	w := p.BucketWeights()
	const bucketS = 24 * 3600 / Buckets
	log := &swf.Log{Header: []string{" Generated by the Lublin-Feitelson workload model (whole-sample parameters)",
		fmt.Sprintf(" MaxNodes: %d", p.Nodes), fmt.Sprintf(" MaxProcs: %d", p.Nodes), fmt.Sprintf(" Seed: %d", seed)}}
	t := 0.0 // seconds since midnight of day 0
	for i := 0; i < n; i++ {
		// Inter-arrival: e^gamma seconds at the average rate, spent bucket
		// by bucket at each bucket's weight (a busy half-hour uses them up
		// faster, so arrivals come closer together there).
		need := math.Exp(redraw(arr.Rand, p.MaxLogArrival)) / bucketS // in average-rate buckets
		for need > 0 {
			b := int(math.Mod(t/bucketS, Buckets))
			end := (math.Floor(t/bucketS) + 1) * bucketS
			if avail := (end - t) / bucketS * w[b]; avail < need {
				need -= avail
				t = end
				continue
			}
			t += need / w[b] * bucketS
			need = 0
		}
		size := p.size(r)
		pFirst := math.Min(1, math.Max(0, p.PA*float64(size)+p.PB))
		g := g2
		if r.Float64() <= pFirst {
			g = g1
		}
		run := int64(math.Max(1, math.Floor(math.Exp(redraw(g.Rand, p.MaxLogRun)))))
		log.Jobs = append(log.Jobs, swf.Job{Number: int64(i + 1), Submit: int64(math.Floor(t)), Wait: swf.Missing, Run: run,
			AllocProcs: int64(size), AvgCPUTime: swf.Missing, UsedMemory: swf.Missing, ReqProcs: int64(size), ReqTime: swf.Missing,
			ReqMemory: swf.Missing, Status: 1, User: swf.Missing, Group: swf.Missing, Executable: swf.Missing, Queue: swf.Missing,
			Partition: swf.Missing, PrecedingJob: swf.Missing, ThinkTime: swf.Missing})
	}
	return log, nil
}

// redraw draws from draw until the value is at most limit (the model's
// rule for run and inter-arrival times); after 1,000 draws over the limit
// (parameters far from the model's) it returns the limit.
func redraw(draw func() float64, limit float64) float64 {
	for range 1000 {
		if v := draw(); v <= limit {
			return v
		}
	}
	return limit
}

// size draws a job size, as the model does with one uniform u: serial when
// u <= SerialProb; otherwise the log2 of the size is two-stage uniform,
// rounded to an integer (a power of two) when u <= SerialProb + Pow2Prob;
// the size is 2^that rounded, at most Nodes.
func (p Params) size(r *rand.Rand) int {
	u := r.Float64()
	if p.Nodes == 1 || u <= p.SerialProb {
		return 1
	}
	var par float64
	if r.Float64() <= p.UProb {
		par = p.ULow + r.Float64()*(p.UMed-p.ULow)
	} else {
		par = p.UMed + r.Float64()*(p.UHi-p.UMed)
	}
	if u <= p.SerialProb+p.Pow2Prob {
		par = math.Round(par)
	}
	return int(math.Min(float64(p.Nodes), math.Max(1, math.Round(math.Exp2(par)))))
}
