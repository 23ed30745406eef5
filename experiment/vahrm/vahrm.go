package vahrm

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/trace/gpuvar"
	"github.com/wattsched/wattsched/trace/swf"
)

// Systems returns the paper's systems (Table V) by name, all eight when
// no name is given; an unknown name is an error.
func Systems(names ...string) ([]scenario.System, error) {
	all := scenario.HPCSystems()
	if len(names) == 0 {
		return all, nil
	}
	out := make([]scenario.System, 0, len(names))
	for _, n := range names {
		k := slices.IndexFunc(all, func(s scenario.System) bool { return s.Name == n })
		if k < 0 {
			return nil, fmt.Errorf("unknown VAHRM system %q", n)
		}
		out = append(out, all[k])
	}
	return out, nil
}

// mustSystems is Systems for the study's own fixed lists.
func mustSystems(names ...string) []scenario.System {
	s, err := Systems(names...)
	if err != nil {
		panic(err) // the study's lists name presets only; a test covers them
	}
	return s
}

// Workload is one of the paper's nine workloads (Table III): the share
// of GPU jobs and the power level (0 small, 1 medium, 2 large) of its jobs.
type Workload struct {
	ID       int
	GPUShare float64
	Level    int
}

// Workloads returns workloads 0-8: CPU:GPU 9:1, 5:5, 1:9, each small,
// medium, large.
func Workloads() []Workload {
	var out []Workload
	for id := 0; id < 9; id++ {
		out = append(out, Workload{ID: id, GPUShare: []float64{0.1, 0.5, 0.9}[id/3], Level: id % 3})
	}
	return out
}

// Log holds the scheduler log: the jobs of an SWF log with a positive
// run time and processor count, in submission order.
type Log struct {
	Source string
	Jobs   []swf.Job
	// ProcsPerNode converts a job's processors to nodes (rounded up, at most
	// the system's 540); 1 for the NASA log, whose processors are nodes.
	ProcsPerNode int
}

// NASASource describes the embedded log as the stand-in it is.
const NASASource = "NASA Ames iPSC/860 SWF log (Parallel Workloads Archive), standing in for the TSUBAME3.0 log (not public)"

// LoadLog reads n jobs from the embedded NASA iPSC/860 log.
func LoadLog(n int) (*Log, error) {
	l, err := swf.NASAiPSC()
	if err != nil {
		return nil, err
	}
	return LogFrom(l, NASASource, n, 1)
}

// LogFrom takes the first n usable jobs of an SWF log (all when n is
// 0): a run time > 0, a processor count > 0 and a submit time >= 0.
func LogFrom(l *swf.Log, source string, n, procsPerNode int) (*Log, error) {
	if procsPerNode < 1 || procsPerNode > swf.MaxProcs {
		return nil, fmt.Errorf("vahrm: %d processors per node, want 1..%d", procsPerNode, int64(swf.MaxProcs))
	}
	out := &Log{Source: source, ProcsPerNode: procsPerNode}
	for _, j := range l.Jobs {
		if j.Run > 0 && j.Procs() > 0 && j.Submit >= 0 {
			out.Jobs = append(out.Jobs, j)
		}
	}
	slices.SortStableFunc(out.Jobs, func(a, b swf.Job) int { return cmp.Compare(a.Submit, b.Submit) })
	if n > 0 && len(out.Jobs) > n {
		out.Jobs = out.Jobs[:n]
	}
	if len(out.Jobs) == 0 || len(out.Jobs) < n {
		return nil, fmt.Errorf("vahrm: %s has %d usable jobs (run time, processors and submit time known), want %d", source, len(out.Jobs), max(n, 1))
	}
	return out, nil
}

// MaxNodes is the largest job's node count.
func (l *Log) MaxNodes() int {
	m := 0
	for _, j := range l.Jobs {
		m = max(m, l.nodes(j))
	}
	return m
}

// nodes is a job's node count on the system.
func (l *Log) nodes(j swf.Job) int {
	p := j.Procs()
	if p < 1 {
		return 1 // LogFrom keeps jobs with processors only
	}
	// (p-1)/ppn + 1 is ceil(p/ppn) without the overflow of p+ppn-1.
	return int(min((p-1)/int64(l.ProcsPerNode)+1, Nodes))
}

// earliestEnd is the time before which a run of the log at shrink ratio
// sr cannot end (every job ends no sooner than its submit time plus its
// run time), and the SWF line of the job that sets it.
func (l *Log) earliestEnd(sr float64) (job.Time, int) {
	t0 := l.Jobs[0].Submit
	var end job.Time
	line := 0
	for _, j := range l.Jobs {
		if e := job.Time(math.Round(float64(j.Submit-t0)*1000/sr)) + job.Time(j.Run*1000); e > end {
			end, line = e, j.Line
		}
	}
	return end, line
}

// CheckSR refuses a shrink ratio that is not a positive number or that
// stretches the log's submission span past swf.MaxSeconds (what the SWF
// reader accepts for one submit time): the error names the last job's
// line. Submit times in milliseconds then stay far inside int64, and the
// hourly energy record of a run stays bounded.
func (l *Log) CheckSR(sr float64) error {
	if !(sr > 0) || math.IsInf(sr, 0) {
		return fmt.Errorf("shrink ratio %v, want a positive number", sr)
	}
	last := l.Jobs[len(l.Jobs)-1]
	if span := float64(last.Submit-l.Jobs[0].Submit) / sr; span > swf.MaxSeconds {
		return fmt.Errorf("shrink ratio %g stretches the submit time of the log's last job (%s line %d) to %.4g s after the first, above %g s (31 years)",
			sr, l.Source, last.Line, span, float64(swf.MaxSeconds))
	}
	return nil
}

// Setting is one simulation setting (the paper's Table I parameters and
// the knobs of its sweeps).
type Setting struct {
	SR  float64 // shrink ratio of submission times
	PCR float64 // power constraint ratio (of system TDP)
	// LimitW, when > 0, is the power limit in watts instead of PCR's.
	LimitW        float64
	Beta          float64
	FirstRunRatio float64
	// ModelNoise, when > 0, replaces TSMVA's errors with normal noise of
	// this relative standard deviation (Table VII).
	ModelNoise float64
	Seed       uint64
}

// DefaultSetting is the paper's main setting: beta = (1/4)^6, SR = 1, PCR = 1.
func DefaultSetting() Setting {
	return Setting{SR: 1, PCR: 1, Beta: math.Pow(0.25, 6), Seed: 42}
}

// Jobs builds a workload's job list: types drawn per job with the
// workload's GPU share (seeded), first runs drawn with the setting's ratio.
func (l *Log) JobsFor(w Workload, s Setting) []policy.HPCJob {
	r := rand.New(rand.NewPCG(s.Seed, uint64(w.ID)+1))
	t0 := l.Jobs[0].Submit
	out := make([]policy.HPCJob, len(l.Jobs))
	for i, j := range l.Jobs {
		typ := w.Level
		if r.Float64() < w.GPUShare {
			typ = 3 + w.Level
		}
		first := r.Float64() < s.FirstRunRatio
		out[i] = policy.HPCJob{ID: i, Submit: job.Time(math.Round(float64(j.Submit-t0) * 1000 / s.SR)), Runtime: job.Time(j.Run * 1000),
			Nodes: l.nodes(j), Type: typ, FirstRun: first}
	}
	return out
}

// RunResult is one system on one workload.
type RunResult struct {
	System   string  `json:"system"`
	Workload int     `json:"workload"`
	EnergyJ  float64 `json:"energy_j"`
	// AllIdleJ is what the system would draw idle over the same makespan;
	// EnergyJ - AllIdleJ is the energy above idle.
	AllIdleJ float64 `json:"all_idle_energy_j"`
	// GPUBusyJ is the energy of the GPUs running GPU jobs: the part the
	// per-device GPU model prices and its error band covers (ModelBandJ).
	GPUBusyJ     float64 `json:"gpu_busy_energy_j"`
	MeanTATS     float64 `json:"mean_turnaround_s"`
	MeanWaitS    float64 `json:"mean_wait_s"`
	MaxWaitS     float64 `json:"max_wait_s"`
	MakespanS    float64 `json:"makespan_s"`
	ThroughputPH float64 `json:"throughput_jobs_per_h"`
	MaxPredW     float64 `json:"max_predicted_w_at_start"`
	MaxActualW   float64 `json:"max_actual_w"`
	CapW         float64 `json:"cap_w"`
	ExcessS      float64 `json:"actual_above_cap_s"`
	MaxExcessW   float64 `json:"max_actual_excess_w"`
	Decisions    int     `json:"decisions"`
	// CostUSD and CO2Kg price the run's hourly energy (Env.Account).
	CostUSD float64 `json:"cost_usd"`
	CO2Kg   float64 `json:"co2_kg"`
	// Domains is each power domain's predicted power over the run, the
	// power the limits hold (Env.Domains; nil: none).
	Domains []DomainFigures `json:"domains,omitempty"`
}

// DomainFigures is one power domain's power over an HPC run: predicted
// (what the limit is enforced on) and actual (the system's truth).
type DomainFigures struct {
	Name        string  `json:"name"`
	LimitW      float64 `json:"limit_w"`
	Nodes       int     `json:"nodes"`
	PredPeakW   float64 `json:"predicted_peak_w"`
	PredP99W    float64 `json:"predicted_p99_w"`
	PredMeanW   float64 `json:"predicted_mean_w"`
	ActualPeakW float64 `json:"actual_peak_w"`
	ActualP99W  float64 `json:"actual_p99_w"`
	ActualMeanW float64 `json:"actual_mean_w"`
	// ActualAboveS is the time the actual power spent above the
	// scenario's report_above times the limit.
	ActualAboveS float64 `json:"actual_above_s"`
}

// NodeName is the name of node i of the VAHRM system in a scenario's
// topology (node-000 ... node-539).
func NodeName(i int) string { return fmt.Sprintf("node-%03d", i) }

// Env is what every run shares.
type Env struct {
	// Registries build the systems' policies.
	Registries *policy.Registries
	Truth      *power.HPCNodes
	Log        *Log
	// FittedGPU and FittedCPU are the prediction table's GPU and CPU rows
	// from the fitted TSMVA models (FittedGPU, FittedCPU); GPUFit and
	// CPUFitMAPE say what the GPU rows came from and the CPU model's
	// error on fresh simulated runs.
	FittedGPU  [][]float64
	FittedCPU  [][]float64
	GPUFit     *GPUFit
	CPUFitMAPE float64
	// Workloads run by Sweep (nil: all nine).
	Workloads []Workload
	// Account prices every run's energy (BuildEnv: grid's default; a
	// scenario's grid section replaces it; nil: no price).
	Account *grid.Account
	// Shards splits the runs over processes (experiment.ShardedRun).
	Shards *experiment.Shards
	// Domains are power domains over the nodes (NodeName order; nil:
	// none), enforced beside the cap; DomainsAbove is the report's
	// threshold (a fraction of each limit).
	Domains      *power.Domains
	DomainsAbove float64
}

// BuildEnv builds the system (true per-device power from the Longhorn
// measurements), scores the GPU power models and fits TSMVA (RF+RF) for
// the predictions VAHRM+TSMVA and the variation-aware FCFS systems use
// (FittedGPU, FittedCPU).
func BuildEnv(r *policy.Registries, log *Log, seed uint64) (*Env, []GPUStats, []ModelResult, error) {
	runs, err := gpuvar.Longhorn()
	if err != nil {
		return nil, nil, nil, err
	}
	truth, stats, err := Truth(runs, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	models, err := FitGPUPowerModels(runs, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	fitted, err := FittedGPU(runs, truth, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	cpu, err := FittedCPU(truth, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	acct, err := grid.NewAccount(grid.DefaultRegion, grid.DefaultStart, "", "", "")
	if err != nil {
		return nil, nil, nil, err
	}
	return &Env{Registries: r, Truth: truth, Log: log, FittedGPU: fitted.Pred, GPUFit: fitted, FittedCPU: cpu.Pred, CPUFitMAPE: cpu.MAPE, Account: acct}, stats, models, nil
}

// predictions returns the per-device prediction table for a setting.
func (e *Env) predictions(s Setting, ideal bool) *power.HPCNodes {
	if ideal {
		return e.Truth
	}
	if s.ModelNoise > 0 {
		// Table VII's experiment: the ideal table with added noise.
		r := rand.New(rand.NewPCG(s.Seed, 0x70726564))
		return Perturbed(e.Truth, func() float64 { return r.NormFloat64() * s.ModelNoise })
	}
	// The fitted models' predictions: GPUs from the measured runs and the
	// unmeasured GPUs' simulated profile history (FittedGPU), CPUs from
	// the simulated profile history (FittedCPU).
	p := *e.Truth
	if e.FittedGPU != nil {
		p.GPU = e.FittedGPU
	}
	if e.FittedCPU != nil {
		p.CPU = e.FittedCPU
	}
	return &p
}

// NewScheduler builds a system with the setting's predictions (the truth
// for ideal predictions) through the HPC policy registry; a VAHRM system
// without its own beta takes the setting's.
func (e *Env) NewScheduler(sys scenario.System, s Setting) (policy.HPCScheduler, error) {
	pred := e.predictions(s, sys.Predictions == "ideal")
	if _, own := sys.Args["beta"]; sys.Policy == "vahrm" && !own {
		sys = sys.WithArg("beta", s.Beta)
	}
	raw, err := sys.Ref().RawArgs()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sys.Name, err)
	}
	p, err := e.Registries.HPC.New(sys.Policy, raw, policy.HPCDeps{Pred: pred})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sys.Name, err)
	}
	return p, nil
}

// Run runs one system on one workload.
func (e *Env) Run(sys scenario.System, w Workload, s Setting) (*RunResult, error) {
	sch, err := e.NewScheduler(sys, s)
	if err != nil {
		return nil, err
	}
	if err := e.Log.CheckSR(s.SR); err != nil {
		return nil, fmt.Errorf("%s workload %d: %w", sys.Name, w.ID, err)
	}
	jobs := e.Log.JobsFor(w, s)
	capW := s.PCR * float64(e.Truth.TDP()) * float64(e.Truth.Nodes())
	if s.LimitW > 0 {
		capW = s.LimitW
	}
	if err := e.checkCap(jobs, capW); err != nil {
		return nil, fmt.Errorf("%s workload %d: %w", sys.Name, w.ID, err)
	}
	res, err := sim.RunHPC(jobs, sch, sim.HPCOptions{Truth: e.Truth, PowerLimit: power.Limit(capW), ProfileOverhead: 0.05, Seed: s.Seed,
		Domains: e.Domains, DomainsAbove: e.DomainsAbove})
	if err != nil {
		return nil, fmt.Errorf("%s workload %d: %w", sys.Name, w.ID, err)
	}
	out := &RunResult{System: sys.Name, Workload: w.ID, EnergyJ: float64(res.Energy), MakespanS: float64(res.Makespan) / 1000,
		AllIdleJ: float64(e.Truth.Idle()) * float64(e.Truth.Nodes()) * float64(res.Makespan) / 1000,
		MaxPredW: float64(res.MaxPredictedAtStart), MaxActualW: float64(res.MaxActual), CapW: capW, ExcessS: float64(res.Excess) / 1000,
		MaxExcessW: math.Max(0, float64(res.MaxExcess)), Decisions: res.Decisions}
	for i, d := range res.Domains {
		a := res.DomainsActual[i]
		out.Domains = append(out.Domains, DomainFigures{Name: d.Name, LimitW: float64(d.Limit), Nodes: d.Nodes,
			PredPeakW: float64(d.Peak), PredP99W: float64(d.P99), PredMeanW: float64(d.Mean),
			ActualPeakW: float64(a.Peak), ActualP99W: float64(a.P99), ActualMeanW: float64(a.Mean), ActualAboveS: a.Above})
	}
	if e.Account != nil {
		if out.CostUSD, out.CO2Kg, err = e.Account.Cost(res.Hourly); err != nil {
			return nil, fmt.Errorf("%s workload %d: %w", sys.Name, w.ID, err)
		}
	}
	out.GPUBusyJ = e.gpuBusyJ(jobs, res)
	for _, j := range res.Jobs {
		out.MeanTATS += float64(j.End-j.Submit) / 1000
		wait := float64(j.Start-j.Submit) / 1000
		out.MeanWaitS += wait
		out.MaxWaitS = math.Max(out.MaxWaitS, wait)
	}
	n := float64(len(res.Jobs))
	out.MeanTATS /= n
	out.MeanWaitS /= n
	if out.MakespanS > 0 {
		out.ThroughputPH = n / out.MakespanS * 3600
	}
	return out, nil
}

// checkCap refuses, before the run, a job that could never start under
// the cap: on its type's cheapest nodes, with every other node idle, its
// power above idle exceeds what the cap leaves (the run used to go on for
// minutes and end with a generic "never ran").
func (e *Env) checkCap(jobs []policy.HPCJob, capW float64) error {
	if !(capW > 0) {
		return nil
	}
	order, _ := policy.NodesByPower(e.Truth, len(e.Truth.GPUJob))
	idle := e.Truth.Idle()
	room := hw.Watts(capW) - idle*hw.Watts(e.Truth.Nodes())
	if room < 0 {
		return fmt.Errorf("the idle system alone draws %.0f W, above the cap of %.0f W: no job can ever run", idle*hw.Watts(e.Truth.Nodes()), capW)
	}
	for _, j := range jobs {
		var need hw.Watts
		for k := 0; k < j.Nodes && k < len(order[j.Type]); k++ {
			need += e.Truth.NodeW(order[j.Type][k], j.Type) - idle
		}
		if need > room {
			line := 0
			if j.ID < len(e.Log.Jobs) {
				line = e.Log.Jobs[j.ID].Line
			}
			return fmt.Errorf("job %d (%s line %d): %d nodes need at least %.0f W above idle, the cap of %.0f W leaves %.0f W: it can never run (raise the cap or drop the job)",
				j.ID, e.Log.Source, line, j.Nodes, need, capW, room)
		}
	}
	return nil
}

// vahrmTask is one run to do.
type vahrmTask struct {
	system  scenario.System
	w       Workload
	s       Setting
	setting string // label of the sweep point
}

// runAll runs tasks in parallel, results in task order.
func (e *Env) runAll(tasks []vahrmTask, workers int, progress func(done, total int, what string)) ([]*RunResult, error) {
	out, errs := experiment.ShardedRun(e.Shards, len(tasks), workers, func(i int) (*RunResult, error) {
		t := tasks[i]
		return e.Run(t.system, t.w, t.s)
	}, progress, func(i int) string {
		t := tasks[i]
		return fmt.Sprintf("%s %s w%d", t.setting, t.system.Name, t.w.ID)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Relative is a system's metrics relative to a baseline run on the same workload.
type Relative struct {
	Setting    string  `json:"setting"`
	System     string  `json:"system"`
	Workload   int     `json:"workload"`
	EnergySave float64 `json:"energy_saving"`
	// CommonSave is the saving over a common window: every system of the
	// comparison (same workload and setting) is charged idle power until
	// the last of them finishes, so a shorter run's idle tail does not
	// count as a saving.
	CommonSave float64 `json:"energy_saving_common_window"`
	// AboveIdleSave is the saving on energy above the all-idle draw over
	// each run's makespan (a diagnostic: where the saving comes from).
	AboveIdleSave float64 `json:"above_idle_energy_saving"`
	// BaseIdleShare is the share of the baseline's energy that is all-idle draw.
	BaseIdleShare float64 `json:"base_all_idle_share"`
	// The ratios are NaN (null in JSON) where undefined: the baseline's
	// figure is 0 and this system's is not.
	TATRatio    Num     `json:"turnaround_ratio"`
	ThroughRat  Num     `json:"throughput_ratio"`
	WaitRatio   Num     `json:"waiting_ratio"`
	EnergyJ     float64 `json:"energy_j"`
	GPUBusyJ    float64 `json:"gpu_busy_energy_j"`
	EnergyBandJ float64 `json:"energy_model_band_j"`
	MeanTATS    float64 `json:"mean_turnaround_s"`
	MeanWaitS   float64 `json:"mean_wait_s"`
	MaxWaitS    float64 `json:"max_wait_s"`
	ExcessS     float64 `json:"actual_above_cap_s"`
	MaxExcessW  float64 `json:"max_actual_excess_w"`
	MaxPredW    float64 `json:"max_predicted_w_at_start"`
	CapW        float64 `json:"cap_w"`
	ThroughputH float64 `json:"throughput_jobs_per_h"`
	CostUSD     float64 `json:"cost_usd"`
	CO2Kg       float64 `json:"co2_kg"`
	// Domains are the run's power domains (RunResult.Domains).
	Domains []DomainFigures `json:"domains,omitempty"`
}

// gpuBusyJ is the energy the GPUs of GPU jobs drew while they ran: each
// such job's node energy less its nodes' idle CPUs (power.HPCNodes.NodeW).
func (e *Env) gpuBusyJ(jobs []policy.HPCJob, res *sim.HPCResult) float64 {
	gpu := make(map[int]bool, len(jobs))
	for _, j := range jobs {
		gpu[j.ID] = e.Truth.GPUJob[j.Type]
	}
	cpuIdle := float64(e.Truth.CPUsPerNode) * float64(e.Truth.CPUIdle)
	var busy float64
	for _, j := range res.Jobs {
		if gpu[j.ID] {
			busy += float64(j.Energy) - float64(j.Nodes)*cpuIdle*float64(j.End-j.Start)/1000
		}
	}
	return busy
}

// ModelBandJ is the power model's error band on a run's energy: its
// GPU-busy energy at the per-device GPU model's p95 relative error
// (validate power's vahrm-variation, held out by device on Longhorn's
// V100s). CPU power and idle power have no public measurement, so the
// band leaves them out.
func ModelBandJ(gpuBusyJ float64) float64 {
	return experiment.BandOf(gpuBusyJ, bandModel, bandGroup)
}

// bandModel and bandGroup name the study's figure (validate.Variation
// on the device group whose measured variation the HPC engine's GPU power
// is drawn from).
const (
	bandModel = "vahrm-variation"
	bandGroup = "V100-Longhorn"
)

// ModelBandNote is the band's line for the results.
func ModelBandNote() string {
	return experiment.ModelErrorOf(bandModel, bandGroup).Note("the HPC engine's per-device GPU power: energy_model_band_j beside energy_j", "gpu_busy_energy_j, the GPU jobs' GPU energy") +
		". CPU and idle power (the rest of energy_j) have no public per-device measurement: the band leaves them out (docs/power-models.md). VAHRM's saving comes from choosing devices, so a per-device error does not cancel between two systems: a difference is beyond the model's error only when larger than the sum of both bands"
}

func relative(setting string, r, base *RunResult) Relative {
	// A ratio to a baseline figure of 0 is undefined (NaN; null in JSON)
	// unless both are 0 (e.g. nobody waited under the baseline).
	ratio := func(a, b float64) Num {
		if b == 0 {
			if a == 0 {
				return 1
			}
			return Num(math.NaN())
		}
		return Num(a / b)
	}
	return Relative{Setting: setting, System: r.System, Workload: r.Workload, EnergySave: 1 - r.EnergyJ/base.EnergyJ,
		AboveIdleSave: 1 - float64(ratio(r.EnergyJ-r.AllIdleJ, base.EnergyJ-base.AllIdleJ)), BaseIdleShare: base.AllIdleJ / base.EnergyJ,
		TATRatio: ratio(r.MeanTATS, base.MeanTATS), ThroughRat: ratio(r.ThroughputPH, base.ThroughputPH),
		WaitRatio: ratio(r.MeanWaitS, base.MeanWaitS), EnergyJ: r.EnergyJ, GPUBusyJ: r.GPUBusyJ, EnergyBandJ: ModelBandJ(r.GPUBusyJ), MeanTATS: r.MeanTATS, MeanWaitS: r.MeanWaitS,
		MaxWaitS: r.MaxWaitS, ExcessS: r.ExcessS, MaxExcessW: r.MaxExcessW, MaxPredW: r.MaxPredW, CapW: r.CapW, ThroughputH: r.ThroughputPH,
		CostUSD: r.CostUSD, CO2Kg: r.CO2Kg, Domains: r.Domains}
}

// Sweep runs systems x workloads at each setting and returns the metrics
// relative to base (run at the same setting, or at baseSetting when given).
func (e *Env) Sweep(labels []string, settings []Setting, systems []scenario.System, base scenario.System, workers int,
	progress func(done, total int, what string)) ([]Relative, error) {
	var tasks []vahrmTask
	for i, s := range settings {
		ws := e.Workloads
		if ws == nil {
			ws = Workloads()
		}
		for _, w := range ws {
			for _, sys := range append([]scenario.System{base}, systems...) {
				tasks = append(tasks, vahrmTask{system: sys, w: w, s: s, setting: labels[i]})
			}
		}
	}
	runs, err := e.runAll(tasks, workers, progress)
	if err != nil {
		return nil, err
	}
	var out []Relative
	per := len(systems) + 1
	idleW := float64(e.Truth.Idle()) * float64(e.Truth.Nodes())
	for i := 0; i < len(runs); i += per {
		end := 0.0
		for k := 0; k < per; k++ {
			end = math.Max(end, runs[i+k].MakespanS)
		}
		common := func(r *RunResult) float64 { return r.EnergyJ + idleW*(end-r.MakespanS) }
		for k := 1; k < per; k++ {
			rel := relative(tasks[i].setting, runs[i+k], runs[i])
			rel.CommonSave = 1 - common(runs[i+k])/common(runs[i])
			out = append(out, rel)
		}
	}
	return out, nil
}

// Averages averages relative metrics over workloads per (setting, system),
// in first-seen order.
func Averages(rel []Relative) []Relative {
	type key struct{ setting, system string }
	var order []key
	sums := map[key]*Relative{}
	counts := map[key]int{}
	for _, r := range rel {
		k := key{r.Setting, r.System}
		s, ok := sums[k]
		if !ok {
			order = append(order, k)
			s = &Relative{Setting: r.Setting, System: r.System, Workload: -1}
			sums[k] = s
		}
		counts[k]++
		s.EnergySave += r.EnergySave
		s.CommonSave += r.CommonSave
		s.AboveIdleSave += r.AboveIdleSave
		s.BaseIdleShare += r.BaseIdleShare
		s.TATRatio += r.TATRatio
		s.ThroughRat += r.ThroughRat
		s.WaitRatio += r.WaitRatio
		s.EnergyJ += r.EnergyJ
		s.CostUSD += r.CostUSD
		s.CO2Kg += r.CO2Kg
		s.MeanTATS += r.MeanTATS
		s.MeanWaitS += r.MeanWaitS
		s.MaxWaitS = math.Max(s.MaxWaitS, r.MaxWaitS)
		s.ExcessS = math.Max(s.ExcessS, r.ExcessS)
		s.MaxExcessW = math.Max(s.MaxExcessW, r.MaxExcessW)
		s.MaxPredW = math.Max(s.MaxPredW, r.MaxPredW)
		s.CapW = r.CapW
		s.ThroughputH += r.ThroughputH
	}
	var out []Relative
	for _, k := range order {
		s, n := sums[k], float64(counts[k])
		s.EnergySave /= n
		s.CommonSave /= n
		s.AboveIdleSave /= n
		s.BaseIdleShare /= n
		s.TATRatio /= Num(n)
		s.ThroughRat /= Num(n)
		s.WaitRatio /= Num(n)
		s.EnergyJ /= n
		s.CostUSD /= n
		s.CO2Kg /= n
		s.MeanTATS /= n
		s.MeanWaitS /= n
		s.ThroughputH /= n
		out = append(out, *s)
	}
	return out
}

// Utilization is the offered load of the log on the system at a shrink
// ratio: node-seconds asked for / (nodes x submission span).
func (l *Log) Utilization(sr float64) float64 {
	var work float64
	for _, j := range l.Jobs {
		work += float64(j.Run) * float64(l.nodes(j))
	}
	span := float64(l.Jobs[len(l.Jobs)-1].Submit-l.Jobs[0].Submit) / sr
	if span <= 0 {
		return math.Inf(1)
	}
	return work / (span * Nodes)
}

// NewEnvIdeal builds the system and log without fitting models (TSMVA
// predictions then carry no error); for benchmarks.
func NewEnvIdeal(r *policy.Registries, jobs int, seed uint64) (*Env, error) {
	runs, err := gpuvar.Longhorn()
	if err != nil {
		return nil, err
	}
	truth, _, err := Truth(runs, seed)
	if err != nil {
		return nil, err
	}
	log, err := LoadLog(jobs)
	if err != nil {
		return nil, err
	}
	return &Env{Registries: r, Truth: truth, Log: log}, nil
}

// DecisionBench sets up one VAHRM decision over a queue of the first queued
// jobs of workload 4 with free nodes spread over the system, and returns a
// function that makes that decision (the state is not changed by it).
func (e *Env) DecisionBench(queued, free int) (func(), error) {
	decide, _, err := e.DecisionBenchStarts(queued, free)
	return decide, err
}

// DecisionBenchStarts is DecisionBench on a state where the power cap
// binds: the busy nodes already draw all but room for about ten more
// nodes at TDP under the cap (0.8 x system TDP), so the decision has to
// weigh power, and some jobs start. It also returns how many jobs one
// decision starts.
func (e *Env) DecisionBenchStarts(queued, free int) (func(), int, error) {
	sys, err := Systems("VAHRM+IDEAL")
	if err != nil {
		return nil, 0, err
	}
	p, err := e.NewScheduler(sys[0], DefaultSetting())
	if err != nil {
		return nil, 0, err
	}
	jobs := e.Log.JobsFor(Workloads()[4], DefaultSetting())
	if len(jobs) < queued {
		return nil, 0, fmt.Errorf("vahrm bench: %d jobs, want %d", len(jobs), queued)
	}
	limit := 0.8 * e.Truth.TDP() * Nodes
	st := &policy.HPCState{Now: 3_600_000, Free: make([]bool, Nodes), IdleNode: e.Truth.Idle(),
		NodeTDP: e.Truth.TDP(), PowerLimit: power.Limit(limit), Predicted: limit - 10*(e.Truth.TDP()-e.Truth.Idle())}
	for n := 0; n < free; n++ {
		st.Free[n*Nodes/free] = true
	}
	st.FreeCount = free
	for i := 0; i < queued; i++ {
		jobs[i].Submit = job.Time(i)
		st.Queue = append(st.Queue, &jobs[i])
	}
	starts := len(p.ScheduleHPC(st))
	if starts == 0 {
		return nil, 0, fmt.Errorf("vahrm bench: no job starts in the benchmark state")
	}
	return func() { p.ScheduleHPC(st) }, starts, nil
}

// Num and ClaimResult are the kit's.
type (
	Num         = experiment.Num
	ClaimResult = experiment.ClaimResult
)

func systemNames(ss []scenario.System) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}
