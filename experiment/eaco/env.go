// Package eaco reproduces the EaCO paper (Haghshenas and Hashemi): the
// co-location table of its four CNNs (Fig. 1) from its own measurements,
// and its Gavel simulation (Section 6.2: 28 and 64 nodes of 8 V100,
// EaCO vs FIFO, FIFO_packed and Gandiva) on Gavel's measured V100
// throughputs with a Gavel-style Poisson workload. See
// docs/reproduce-eaco.md.
package eaco

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/bloxpal"
	"github.com/wattsched/wattsched/trace/gavel"
)

// Hardware facts behind the power model that the paper does not give.
const (
	// CPUDynW is what the paper's server (2x Intel Xeon Gold 6240) adds
	// from idle to full CPU: the two sockets' TDP, 150 W each (Intel).
	CPUDynW hw.Watts = 300
	// SleepW is a sleeping (suspend-to-RAM) node's draw: the paper gives
	// none; chosen, see docs/reproduce-eaco.md.
	SleepW hw.Watts = 30
	// GPUMemGiB is the V100's memory (Gavel's V100s are 16 GB).
	GPUMemGiB = 16
	// Epochs is the number of epochs per job: the paper's Table 1 JCT over
	// epoch time is 89-90 for all four models.
	Epochs = 90
	// HoldEvery holds out every HoldEvery-th measured pair from what the
	// policies know (H); the engine still runs them at their measured rate.
	HoldEvery = 5
	// MaxAloneHours drops trace jobs that would run longer alone on one
	// V100: the trace's heavy tail would otherwise leave a few jobs running
	// for weeks after the last arrival and make every total about them.
	MaxAloneHours = 100
	// MaxShare is the most jobs per GPU set (the paper measured up to 4).
	MaxShare = 4
)

// Env holds the models every run of the study shares.
type Env struct {
	Cal      *coloc.Calibration
	Power    coloc.Power
	PowerFit []coloc.Residual
	TP       *gavel.Throughputs
	// Truth is every measured pair (what the engine runs); Known the
	// pairs policies may know; Est the estimator fitted to Known.
	Truth, Known *coloc.Factors
	Est          *coloc.Fitted
	HeldOut      coloc.HeldOutError
	// CrossVal is the estimator's error on each of 5 folds of the pairs.
	CrossVal []coloc.HeldOutError
	// BloxPal checks the model on blox-pal's pairs (independent data).
	BloxPal coloc.BloxPalCheck
	Pool    []gavel.Job
	// SpanGPUs, when set, is the most GPUs a job may have, the cluster's:
	// jobs span nodes (timing gavel-rounds); 0: one node's 8.
	SpanGPUs int
}

// NewEnv builds the models from the embedded data and the catalog's V100.
func NewEnv(cat *hw.Catalog) (*Env, error) {
	tp, err := gavel.V100()
	if err != nil {
		return nil, err
	}
	return NewEnvFrom(cat, tp)
}

// NewEnvFrom builds the models with tp as the measured throughputs (the
// interference truth, what policies may know and the estimator) and the
// embedded Gavel trace, less the jobs that tp cannot run or that run
// longer than MaxAloneHours alone at tp's rates, as the job pool.
func NewEnvFrom(cat *hw.Catalog, tp *gavel.Throughputs) (*Env, error) {
	cal, err := coloc.PaperCalibration()
	if err != nil {
		return nil, err
	}
	g, err := cat.GPU("V100M16")
	if err != nil {
		return nil, err
	}
	p, res, err := coloc.FitPower(cal, g.IdleW, CPUDynW, SleepW, 8)
	if err != nil {
		return nil, err
	}
	pool, err := gavel.MSR()
	if err != nil {
		return nil, err
	}
	var kept []gavel.Job
	for _, j := range pool {
		if iso, ok := tp.Rate(j.Key()); ok && j.Steps/iso <= MaxAloneHours*3600 {
			kept = append(kept, j)
		}
	}
	pool = kept
	train, held := coloc.Split(tp, HoldEvery)
	known := coloc.MeasuredFactors(tp, train)
	est := coloc.Fit(known)
	bp, err := bloxpal.Embedded()
	if err != nil {
		return nil, err
	}
	check, err := coloc.CheckBloxPal(bp, coloc.NewHistory(known, est), HoldEvery)
	if err != nil {
		return nil, err
	}
	return &Env{Cal: cal, Power: p, PowerFit: res, TP: tp, Truth: coloc.MeasuredFactors(tp, tp.Pairs), Known: known, Est: est,
		HeldOut: coloc.Evaluate(est, tp, held), CrossVal: coloc.CrossValidate(tp, 5), BloxPal: check, Pool: pool}, nil
}

// Deadline classes (the paper: some jobs have no SLO, high-priority ones
// need immediate exclusive resources; the shares and slacks are chosen,
// docs/reproduce-eaco.md).
const (
	ShareNone  = 0.5
	ShareLoose = 0.3
	// LooseSlack and TightSlack multiply the job's isolated run time.
	LooseSlack = 2.0
	TightSlack = 1.1
)

// Workload draws n jobs: Poisson arrivals at perHour jobs per hour, each
// job type and step count drawn from the Gavel trace's jobs, a deadline
// class drawn per job.
func (e *Env) Workload(seed uint64, n int, perHour float64) []policy.ColocJob {
	return e.WorkloadFrom(e.Pool, seed, n, perHour, false)
}

// WorkloadFrom draws the workload from pool; with traceArrivals the first
// n jobs of pool (all when n <= 0) keep their own arrival times instead.
// Every job type must have a V100 throughput (checked by CheckPool).
func (e *Env) WorkloadFrom(pool []gavel.Job, seed uint64, n int, perHour float64, traceArrivals bool) []policy.ColocJob {
	r := rand.New(rand.NewPCG(seed, 0xeac0))
	if traceArrivals && (n <= 0 || n > len(pool)) {
		n = len(pool)
	}
	jobs := make([]policy.ColocJob, n)
	t := 0.0
	for i := range jobs {
		var src gavel.Job
		if traceArrivals {
			src = pool[i]
			t = src.ArrivalSec
		} else {
			t += r.ExpFloat64() / perHour * 3600
			src = pool[r.IntN(len(pool))]
		}
		k := gavel.Key{Type: src.Type, Scale: src.Scale}
		iso := e.TP.Isolated[k]
		m, _ := e.Cal.Model(coloc.StandIn(k.Type))
		j := policy.ColocJob{ID: i, Submit: job.Time(math.Round(t * 1000)), Key: k, Steps: src.Steps, EpochSteps: src.Steps / Epochs,
			IsoRate: iso, Deadline: policy.NoDeadline, CoreAvg: m.GPUAvgPct, CoreMax: m.GPUMaxPct, MemAvg: m.MemAvgPct, MemMax: m.MemMaxPct,
			MemGiB: m.MemMaxPct / 100 * GPUMemGiB}
		alone := src.Steps / iso
		switch u := r.Float64(); {
		case u < ShareNone:
		case u < ShareNone+ShareLoose:
			j.Deadline = j.Submit + job.Time(math.Ceil(LooseSlack*alone*1000))
		default:
			j.Deadline = j.Submit + job.Time(math.Ceil(TightSlack*alone*1000))
			j.Priority = 1
		}
		jobs[i] = j
	}
	return jobs
}

// CheckPool fails on the first job whose type and GPU count cannot run
// from the throughput table (file, line, and column: job_type for a type
// the table lacks, scale_factor for a GPU count it lacks or measured at 0
// steps/s).
func (e *Env) CheckPool(name string, pool []gavel.Job) error {
	for _, j := range pool {
		if err := e.TP.Check(j.Key()); err != nil {
			col := "job_type"
			if e.TP.HasType(j.Type) {
				col = "scale_factor"
			}
			return &trace.ParseError{File: name, Line: j.Line, Column: col, Err: err}
		}
		switch {
		case e.SpanGPUs > 0 && j.Scale > e.SpanGPUs:
			return &trace.ParseError{File: name, Line: j.Line, Column: "scale_factor", Err: fmt.Errorf("%d GPUs, the cluster has %d", j.Scale, e.SpanGPUs)}
		case e.SpanGPUs == 0 && j.Scale > 8:
			return &trace.ParseError{File: name, Line: j.Line, Column: "scale_factor", Err: fmt.Errorf("%d GPUs, nodes have 8 (timing gavel-rounds lets a job span nodes)", j.Scale)}
		}
	}
	return nil
}

// History returns a fresh H for one run.
func (e *Env) History() *coloc.History { return coloc.NewHistory(e.Known, e.Est) }
