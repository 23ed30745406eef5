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
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/eaco"
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
	// Multi is Gavel's V100 table at every GPU count (isolated rates of
	// the multi-GPU jobs of the primary setting's workload).
	Multi *gavel.Throughputs
	// ByScale are the pool's jobs whose type Multi runs on each GPU count
	// of ScaleCounts, and PriorH the pool's median length alone on one
	// GPU (hours): EaCO's length prediction before any job completed.
	ByScale map[int][]gavel.Job
	PriorH  float64
	// SpanGPUs, when set, is the most GPUs a job may have, the cluster's:
	// jobs span nodes (timing gavel-rounds); 0: one node's 8.
	SpanGPUs int
}

// Interference settings of the reproduction.
const (
	// InterfPaper: the paper's own co-location figures (PaperInterference)
	// run by the engine; the schedulers' history H starts from what the
	// paper's profiling reports (PaperInterference.Profiled) and learns
	// from noisy observations; the workload has multi-GPU jobs and EaCO
	// predicts job lengths.
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
	// ObsNoise is the observations' measurement noise (sim.ColocOptions).
	ObsNoise float64
	// Multi draws multi-GPU jobs in ScaleCounts' proportions (else every
	// job has one GPU).
	Multi bool
	// EacoArgs are added to EaCO's arguments (YAML lines).
	EacoArgs string
}

// ObsNoise is the primary setting's measurement noise of an observed
// factor (log-normal sigma): the paper gives none; chosen, see
// docs/reproduce-eaco.md.
const ObsNoise = 0.05

// ScaleCounts are the jobs per GPU count (1, 2, 4, 8) of Gavel's
// Philly-derived msr traces (scheduler/traces/msr/seed=0, all 15 virtual
// clusters, 15,264 jobs): the jobs of at most 8 GPUs but for 2 of 7 GPUs,
// a count Gavel's table lacks; 359 jobs of 12-64 GPUs are larger than a
// node. The primary setting's workload draws GPU counts in these
// proportions (70.3%, 3.1%, 13.7%, 12.9%).
var ScaleCounts = [][2]int{{1, 10480}, {2, 463}, {4, 2044}, {8, 1916}}

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
	multi, err := gavel.Simulation("v100")
	if err != nil {
		return nil, err
	}
	byScale := map[int][]gavel.Job{}
	var alone []float64
	for _, j := range pool {
		alone = append(alone, j.Steps/tp.Isolated[j.Key()]/3600)
		for _, sc := range ScaleCounts {
			if r, ok := multi.Rate(gavel.Key{Type: j.Type, Scale: sc[0]}); ok && r > 0 {
				byScale[sc[0]] = append(byScale[sc[0]], j)
			}
		}
	}
	prior := eaco.Args{}.Default().LengthPriorH // an empty pool (a table that runs none of its jobs)
	if len(alone) > 0 {
		slices.Sort(alone)
		prior = alone[len(alone)/2]
	}
	e := &Env{Multi: multi, ByScale: byScale, PriorH: prior, Cal: cal, Power: p, PowerFit: res, TP: tp, Truth: coloc.MeasuredFactors(tp, tp.Pairs), Known: known, Est: est,
		HeldOut: coloc.Evaluate(cest, clean, cheld), CrossVal: coloc.CrossValidate(clean, 5), BloxPal: check, Pool: pool,
		Paper: paper, Placeholders: coloc.Placeholders(tp)}
	e.Settings = []Setting{
		{Name: InterfPaper, Label: "paper's co-location figures", Truth: paper.Factors, History: func() *coloc.History { return coloc.NewLearningHistory(paper.Profiled) },
			Fig1: paper.Factors, ObsNoise: ObsNoise, Multi: true, EacoArgs: fmt.Sprintf("lengths: history\nlength_prior_h: %g", e.PriorH)},
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
	return e.workload(pool, seed, n, perHour, traceArrivals, e.TP.Isolated)
}

// workload is WorkloadFrom with the isolated rates iso.
func (e *Env) workload(pool []gavel.Job, seed uint64, n int, perHour float64, traceArrivals bool, isoRates map[gavel.Key]float64) []policy.ColocJob {
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
		iso := isoRates[k]
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

// WorkloadFor is the workload of set: Workload, with GPU counts drawn in
// ScaleCounts' proportions when set.Multi (a job's type and steps then
// drawn from the pool's jobs whose type runs on that many GPUs; its
// deadline from its isolated rate on them).
func (e *Env) WorkloadFor(set Setting, seed uint64, n int, perHour float64) []policy.ColocJob {
	if !set.Multi {
		return e.Workload(seed, n, perHour)
	}
	r := rand.New(rand.NewPCG(seed, 0x6a1e))
	var total int
	for _, sc := range ScaleCounts {
		total += sc[1]
	}
	pool := make([]gavel.Job, n)
	t := 0.0
	for i := range pool {
		t += r.ExpFloat64() / perHour * 3600
		u, scale := r.IntN(total), 1
		for _, sc := range ScaleCounts {
			if u < sc[1] {
				scale = sc[0]
				break
			}
			u -= sc[1]
		}
		from := e.ByScale[scale]
		pool[i] = from[r.IntN(len(from))]
		pool[i].Scale, pool[i].ArrivalSec = scale, t
	}
	return e.workload(pool, seed, n, perHour, true, e.Multi.Isolated)
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
