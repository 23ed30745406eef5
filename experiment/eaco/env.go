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
	// Paper is the interference calibrated to the paper's own co-location
	// figures (the reproduction's primary setting).
	Paper *coloc.PaperInterference
	// Placeholders are the Gavel pairs whose co-located rates equal the
	// isolated ones; the reproduction's Gavel setting leaves them out.
	Placeholders []coloc.Placeholder
	// Settings are the reproduction's interference settings, primary first.
	Settings []Setting
	// SpanGPUs, when set, is the most GPUs a job may have, the cluster's:
	// jobs span nodes (timing gavel-rounds); 0: one node's 8.
	SpanGPUs int
}

// Interference settings of the reproduction.
const (
	// InterfPaper: the paper's own co-location figures (PaperInterference),
	// known to the schedulers as their history H.
	InterfPaper = "paper"
	// InterfGavel: Gavel's measured V100 pairs without the placeholders,
	// the pairs never measured (placeholders) run at the estimator fitted
	// to all the others; H as before (every 5th pair held out).
	InterfGavel = "gavel"
)

// Setting is one interference model: what the engine runs (Truth) and
// what the schedulers start knowing (History).
type Setting struct {
	Name    string
	Label   string
	Truth   coloc.SetFunc
	History func() *coloc.History
	// Fig1 predicts the paper's own jobs together (the Fig. 1 table): the
	// paper's model, or Gavel's measured pairs only (a set that needs a
	// placeholder pair has no value).
	Fig1 coloc.SetFunc
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
	// Scenarios (wattsched run, mode coloc) run Gavel's table as it is.
	train, _ := coloc.Split(tp, HoldEvery)
	known := coloc.MeasuredFactors(tp, train)
	est := coloc.Fit(known)
	// The reproduction's Gavel setting: placeholders left out.
	clean, err := coloc.WithoutPlaceholders(tp)
	if err != nil {
		return nil, err
	}
	ctrain, cheld := coloc.Split(clean, HoldEvery)
	cknown := coloc.MeasuredFactors(clean, ctrain)
	cest := coloc.Fit(cknown)
	measured := coloc.MeasuredFactors(clean, clean.Pairs)
	fill := coloc.Fit(measured)
	cleanTruth := func(a, b gavel.Key) (float64, bool) {
		if x, ok := measured.Pair(a, b); ok {
			return x, true
		}
		return fill.Pair(a, b)
	}
	bp, err := bloxpal.Embedded()
	if err != nil {
		return nil, err
	}
	check, err := coloc.CheckBloxPal(bp, coloc.NewHistory(cknown, cest), HoldEvery)
	if err != nil {
		return nil, err
	}
	paper, err := coloc.NewPaperInterference(cal)
	if err != nil {
		return nil, err
	}
	e := &Env{Cal: cal, Power: p, PowerFit: res, TP: tp, Truth: coloc.MeasuredFactors(tp, tp.Pairs), Known: known, Est: est,
		HeldOut: coloc.Evaluate(cest, clean, cheld), CrossVal: coloc.CrossValidate(clean, 5), BloxPal: check, Pool: pool,
		Paper: paper, Placeholders: coloc.Placeholders(tp)}
	e.Settings = []Setting{
		{Name: InterfPaper, Label: "paper's co-location figures", Truth: paper.Factors, History: func() *coloc.History { return coloc.NewModelHistory(paper.Factors) },
			Fig1: paper.Factors},
		{Name: InterfGavel, Label: "Gavel's V100 pairs (pessimistic)", Truth: coloc.PairRule(cleanTruth), History: func() *coloc.History { return coloc.NewHistory(cknown, cest) },
			Fig1: coloc.PairRule(measured.Pair)},
	}
	return e, nil
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

// History returns a fresh H for one run of a scenario (Gavel's table as
// it is).
func (e *Env) History() *coloc.History { return coloc.NewHistory(e.Known, e.Est) }

// Setting returns the named interference setting.
func (e *Env) Setting(name string) (Setting, bool) {
	for _, s := range e.Settings {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}
