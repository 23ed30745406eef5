package powerflow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/fit"
	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/powerflow"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/alibaba2020"
	"github.com/wattsched/wattsched/trace/philly"
	"github.com/wattsched/wattsched/userfile"
)

// Names of the systems, as the paper's Figure 7 names them (the presets
// of scenario.ElasticSystems).
const (
	NamePowerFlow    = "PowerFlow"
	NameOracle       = "PowerFlow-oracle"
	NameGandiva      = "Gandiva"
	NameTiresias     = "Tiresias"
	NameGandivaZeus  = "Gandiva+Zeus"
	NameTiresiasZeus = "Tiresias+Zeus"
	NameAFS          = "AFS"
)

// Systems are the systems of the end-to-end comparison.
var Systems = []string{NamePowerFlow, NameGandiva, NameTiresias, NameGandivaZeus, NameTiresiasZeus, NameAFS}

// System returns a preset system at a parameter: eta (the power limit as a
// fraction of G x Pmax) for PowerFlow and its oracle, the fixed frequency
// in MHz for Gandiva, Tiresias and AFS; the Zeus combinations take none.
func System(name string, param float64) (scenario.System, error) {
	all := scenario.ElasticSystems()
	k := slices.IndexFunc(all, func(s scenario.System) bool { return s.Name == name })
	if k < 0 {
		return scenario.System{}, fmt.Errorf("unknown PowerFlow system %q (have %v and %s)", name, Systems, NameOracle)
	}
	s := all[k]
	switch s.Policy {
	case "powerflow":
		if !(param > 0 && param <= 1) {
			return s, fmt.Errorf("%s: eta %v must be in (0, 1]", name, param)
		}
		s.PowerLimit = &scenario.Limit{TDPFraction: param}
	case "gandiva", "tiresias", "afs":
		if param != math.Trunc(param) || param <= 0 {
			return s, fmt.Errorf("%s: frequency %v MHz", name, param)
		}
		s = s.WithArg("freq_mhz", int(param))
	}
	return s, nil
}

// Baselines says how the baselines run: as the paper's (every node on,
// their own placement) or with PowerFlow's energy mechanisms (Section 5.3)
// given to them, node shutdown and buddy placement with migration, to
// measure how much of PowerFlow's gain each accounts for.
type Baselines struct {
	Name string `json:"name"`
	// Shutdown powers down nodes without jobs; Packed places Gandiva's
	// and Tiresias' jobs with PowerFlow's buddy allocation and migration
	// (policy.FixedFreq).
	Shutdown bool `json:"shutdown"`
	Packed   bool `json:"packed"`
}

// Names of the baseline variants.
const (
	BaselinesPaper    = "paper"
	BaselinesShutdown = "shutdown"
	BaselinesPacked   = "packed"
	BaselinesBoth     = "shutdown+packed"
)

// BaselineVariants are the variants `reproduce powerflow` runs: the
// paper's (its primary Fig. 7) first, then the other three.
var BaselineVariants = []Baselines{{Name: BaselinesPaper}, {Name: BaselinesShutdown, Shutdown: true},
	{Name: BaselinesPacked, Packed: true}, {Name: BaselinesBoth, Shutdown: true, Packed: true}}

// Apply sets the variant's switches on a baseline system (Zeus: on its
// base); other systems are returned as they are.
func (b Baselines) Apply(s scenario.System) scenario.System {
	set := func(args map[string]any) map[string]any {
		out := make(map[string]any, len(args)+2)
		for k, v := range args {
			out[k] = v
		}
		out["keep_idle_nodes_on"] = !b.Shutdown
		out["packed_placement"] = b.Packed
		return out
	}
	switch s.Policy {
	case "gandiva", "tiresias", "afs":
		s.Args = set(s.Args)
	case "zeus":
		base, _ := s.Args["base"].(map[string]any)
		nb := make(map[string]any, len(base)+1)
		for k, v := range base {
			nb[k] = v
		}
		inner, _ := nb["args"].(map[string]any)
		nb["args"] = set(inner)
		s = s.WithArg("base", nb)
	}
	return s
}

// Setup is the simulated cluster and the engine's costs.
type Setup struct {
	Nodes int `json:"nodes"`
	// RestartSec is the checkpoint/restart pause on rescaling, migration or
	// resumption; PreRunSec and ProfileSec the profiling durations.
	RestartSec float64 `json:"restart_s"`
	PreRunSec  float64 `json:"pre_run_s"`
	ProfileSec float64 `json:"profile_window_s"`
	// ProfileFreqs is how many frequencies profiling cycles (evenly spaced,
	// the highest included).
	ProfileFreqs int     `json:"profile_freqs"`
	Noise        float64 `json:"measurement_noise"`
	// BootSec is how long a powering-on node draws idle power before use
	// (charged as transition energy; the node is usable at once).
	BootSec float64 `json:"boot_s"`
	Seed    uint64  `json:"seed"`
}

// DefaultSetup is the setup of `reproduce powerflow`.
func DefaultSetup() Setup {
	return Setup{Nodes: 24, RestartSec: 30, PreRunSec: 240, ProfileSec: 240, ProfileFreqs: 8, Noise: 0.02, BootSec: 60, Seed: 42}
}

// Env is everything the PowerFlow runs share: the ground-truth library,
// the fitted per-DNN models and the workload.
type Env struct {
	// Registries build the systems' policies.
	Registries *policy.Registries
	Lib        *perf.Library
	GPU        hw.GPUModel
	Models     map[string]*powerflow.Models
	Fits       []ModelFit
	Setup      Setup
	// Shards splits the runs over processes (experiment.ShardedRun).
	Shards *experiment.Shards
	// Account prices each run's hourly energy (default: the embedded
	// US-NY-NYIS 2023 series from 2023-01-01 00:00 UTC, repeated past its
	// end).
	Account *elgrid.Account
	// Domains are power domains over the nodes (NodeName order; nil:
	// none): every system's decisions pass policy.ElasticDomainGuard and
	// the engine enforces each limit; DomainsAbove is the report's
	// threshold (a fraction of each limit).
	Domains      *power.Domains
	DomainsAbove float64
}

// NodeName is the name of node i of an elastic scenario's cluster in its
// topology (node-000, node-001, ...).
func NodeName(i int) string { return fmt.Sprintf("node-%03d", i) }

// DomainFigures is one power domain's power over an elastic run: charged
// (the power the limit holds: metered draw, or the GPU envelope at the
// frequency until metered) and actual (the truth's), and how many of
// the systems' allocations the domain moved or held back
// (policy.ElasticDomainGuard).
type DomainFigures struct {
	Name         string  `json:"name"`
	Level        string  `json:"level,omitempty"`
	LimitW       float64 `json:"limit_w"`
	Nodes        int     `json:"nodes"`
	PredMeanW    float64 `json:"predicted_mean_w"`
	PredP99W     float64 `json:"predicted_p99_w"`
	PredPeakW    float64 `json:"predicted_peak_w"`
	ActualMeanW  float64 `json:"actual_mean_w"`
	ActualP99W   float64 `json:"actual_p99_w"`
	ActualPeakW  float64 `json:"actual_peak_w"`
	ActualAboveS float64 `json:"actual_above_s"`
	Moved        int     `json:"moved"`
	Held         int     `json:"held_back"`
}

// GPUEnvelope is the most a GPU draws at each frequency index over every
// DNN, batch size and GPU count of the profile library: the hardware's
// power-vs-clock envelope, the same for every job and system (what a power
// domain is charged for a GPU whose draw is not metered yet).
func (env *Env) GPUEnvelope() []hw.Watts {
	out := make([]hw.Watts, len(env.Lib.FreqsMHz))
	for _, d := range perf.DNNs {
		for _, b := range d.Batches {
			p := env.Lib.Profile(d.Name, b)
			for _, n := range perf.Counts {
				if n > p.MaxGPUs() {
					break
				}
				for fi := range out {
					_, w := p.Truth(n, fi)
					out[fi] = max(out[fi], hw.Watts(w))
				}
			}
		}
	}
	return out
}

// ModelFit is one row of the Table 2 reproduction.
type ModelFit struct {
	DNN            string  `json:"dnn"`
	Profiles       int     `json:"profiles"`
	HeldOut        int     `json:"held_out"`
	ThroughputMAPE float64 `json:"throughput_mape"`
	EnergyMAPE     float64 `json:"energy_mape"`
	PaperTpt       float64 `json:"paper_throughput_mape"`
	PaperEnergy    float64 `json:"paper_energy_mape"`
	BreakpointMHz  int     `json:"breakpoint_mhz"`
	StandIn        string  `json:"stand_in"`
}

// paperTable2 is PowerFlow's Table 2 (MAPE as fractions).
var paperTable2 = map[string][2]float64{
	"ResNet18": {0.061, 0.069}, "VGG16": {0.038, 0.060}, "InceptionV3": {0.026, 0.045},
	"GPT2": {0.021, 0.068}, "DeepSpeech2": {0.045, 0.035},
}

// NewEnv loads the library and fits each DNN's models on 90% of its
// noisy profiles, reporting MAPE on the other 10% (paper Section 6.3).
func NewEnv(reg *policy.Registries, s Setup) (*Env, error) {
	env, err := newBaseEnv(reg, s)
	if err != nil {
		return nil, err
	}
	lib := env.Lib
	r := rand.New(rand.NewPCG(s.Seed, 0x7461626c6532))
	var bps []float64
	for fi := 0; fi < len(lib.FreqsMHz); fi += 5 {
		bps = append(bps, lib.Norm(fi))
	}
	for _, d := range perf.DNNs {
		var ps []fit.Profile
		for _, b := range d.Batches {
			p := lib.Profile(d.Name, b)
			for _, n := range perf.Counts {
				if n > p.MaxGPUs() {
					break
				}
				for fi := range lib.FreqsMHz {
					t, e := p.Observe(n, fi, s.Noise, r)
					ps = append(ps, fit.Profile{Config: p.Config(n, fi), IterSec: t, IterJ: e})
				}
			}
		}
		trIdx, teIdx := fit.HoldOut(len(ps), 0.1, s.Seed)
		train := make([]fit.Profile, len(trIdx))
		for i, k := range trIdx {
			train[i] = ps[k]
		}
		o := fit.FitOptions{Seed: s.Seed, Starts: 3}
		step, err := fit.FitStep(train, o)
		if err != nil {
			return nil, fmt.Errorf("experiment: fit %s step time: %w", d.Name, err)
		}
		o.Starts, o.MaxIter = 2, 80
		en, err := fit.FitEnergy(train, step, bps, o)
		if err != nil {
			return nil, fmt.Errorf("experiment: fit %s energy: %w", d.Name, err)
		}
		m := &powerflow.Models{Step: step, Energy: en}
		var pt, at, pe, ae []float64
		for _, k := range teIdx {
			t, e := m.Predict(ps[k].Config)
			pt, at = append(pt, 1/t), append(at, 1/ps[k].IterSec)
			pe, ae = append(pe, e), append(ae, ps[k].IterJ)
		}
		env.Models[d.Name] = m
		env.Fits = append(env.Fits, ModelFit{DNN: d.Name, Profiles: len(ps), HeldOut: len(teIdx),
			ThroughputMAPE: fit.MAPE(pt, at) / 100, EnergyMAPE: fit.MAPE(pe, ae) / 100,
			PaperTpt: paperTable2[d.Name][0], PaperEnergy: paperTable2[d.Name][1],
			BreakpointMHz: int(math.Round(en.U0 * float64(lib.MaxMHz()))), StandIn: d.StandIn})
	}
	return env, nil
}

// newBaseEnv is an Env without fitted models: the library, the GPU and
// the default account (enough to convert jobs and check systems).
func newBaseEnv(reg *policy.Registries, s Setup) (*Env, error) {
	g, err := hw.Default().GPU(perf.LibraryGPU)
	if err != nil {
		return nil, err
	}
	lib, err := perf.Load(float64(g.IdleW), float64(g.TDPW))
	if err != nil {
		return nil, err
	}
	acct, err := elgrid.StudyAccount()
	if err != nil {
		return nil, err
	}
	return &Env{Registries: reg, Lib: lib, GPU: g, Models: map[string]*powerflow.Models{}, Setup: s, Account: acct}, nil
}

// Jobs turns trace jobs into training jobs as the paper does (Section
// 6.1): each gets a Table 1 DNN and batch size at random (seeded), and the
// iterations it would run in its trace duration on its requested GPUs at
// the default frequency (measured throughput). Requested counts are
// rounded up to a power of two and capped at the DNN's largest measured
// count; jobs keep trace order, IDs from 0.
func (env *Env) Jobs(gj []trace.GPUJob, seed uint64) []policy.ElasticJob {
	r := rand.New(rand.NewPCG(seed, 0x6a6f6273))
	top := len(env.Lib.FreqsMHz) - 1
	out := make([]policy.ElasticJob, len(gj))
	for i, g := range gj {
		d := perf.DNNs[r.IntN(len(perf.DNNs))]
		b := d.Batches[r.IntN(len(d.Batches))]
		p := env.Lib.Profile(d.Name, b)
		req := 1
		for req < g.GPUs {
			req *= 2
		}
		req = min(req, p.MaxGPUs())
		t, _ := p.Truth(req, top)
		out[i] = policy.ElasticJob{ID: i, Submit: job.Time(math.Round(g.SubmitSec * 1000)), DNN: d.Name, Batch: b,
			ReqGPUs: req, MaxGPUs: p.MaxGPUs(), Iters: math.Max(1, math.Round(g.DurationSec/t))}
	}
	return out
}

// pfTruth is the library bound to a job list; it is also the profiled
// oracle's predictor (exact, noiseless).
type pfTruth struct {
	lib   *perf.Library
	profs []*perf.Profile
}

func (env *Env) truth(jobs []policy.ElasticJob) *pfTruth {
	t := &pfTruth{lib: env.Lib, profs: make([]*perf.Profile, len(jobs))}
	for i := range jobs {
		t.profs[i] = env.Lib.Profile(jobs[i].DNN, jobs[i].Batch)
	}
	return t
}

func (t *pfTruth) Truth(j *policy.ElasticJob, n, fi int) (float64, float64) {
	return t.profs[j.ID].Truth(n, fi)
}

func (t *pfTruth) CanRun(j *policy.ElasticJob, n int) bool {
	return n >= 1 && n&(n-1) == 0 && n <= t.profs[j.ID].MaxGPUs()
}

func (t *pfTruth) Predict(v *policy.ElasticView, n, fi int) (float64, float64, bool) {
	if !t.CanRun(v.Job, n) {
		return 0, 0, false
	}
	s, w := t.Truth(v.Job, n, fi)
	return s, s * w * float64(n), true
}

// RunResult is one run's outcome.
type RunResult struct {
	System string `json:"system"`
	// Param is eta for PowerFlow, the fixed frequency (MHz) for Gandiva,
	// Tiresias and AFS, 0 for the Zeus combinations.
	Param      float64 `json:"param"`
	AvgJCTh    float64 `json:"avg_jct_h"`
	EnergyMWh  float64 `json:"energy_mwh"`
	JobMWh     float64 `json:"job_mwh"`
	IdleMWh    float64 `json:"idle_mwh"`
	PowerOnMWh float64 `json:"power_on_mwh"`
	PreRunMWh  float64 `json:"pre_run_mwh"`
	MakespanH  float64 `json:"makespan_h"`
	LimitW     float64 `json:"power_limit_w"`
	MaxPredW   float64 `json:"max_predicted_w"`
	MaxActualW float64 `json:"max_actual_w"`
	// AboveLimitH is how long the power actually drawn was above the
	// limit, AboveLimitKWh the energy drawn above it (0 without a limit).
	AboveLimitH   float64 `json:"time_above_limit_h"`
	AboveLimitKWh float64 `json:"energy_above_limit_kwh"`
	// Baselines names the baseline variant (BaselineVariants) a baseline
	// ran as; empty for PowerFlow.
	Baselines string `json:"baselines,omitempty"`
	Restarts  int    `json:"restarts"`
	PowerOns  int    `json:"power_ons"`
	Decisions int    `json:"decisions"`
	Events    int    `json:"events"`
	// GPU use (sim.ElasticResult): GPU-hours while progressing, their
	// mean frequency, the share on jobs with 16+ GPUs (in all and while
	// some job waited), and the
	// mean time a job waited with no GPU.
	GPUHours   float64 `json:"gpu_hours"`
	MeanMHz    float64 `json:"mean_mhz"`
	LargeShare float64 `json:"large_job_gpu_share"`
	LargeWait  float64 `json:"large_job_gpu_share_while_waiting"`
	MeanWaitH  float64 `json:"mean_wait_h"`
	// CostUSD and CO2Kg price the run's hourly energy (Env.Account).
	CostUSD float64 `json:"cost_usd"`
	CO2Kg   float64 `json:"co2_kg"`
	// Domains are the run's power domains (Env.Domains; nil: none).
	Domains []DomainFigures `json:"domains,omitempty"`
	// Res is the engine's result (timelines, hourly energy), not in JSON.
	Res *sim.ElasticResult `json:"-"`
}

func (env *Env) profileFreqs() []int {
	n := len(env.Lib.FreqsMHz)
	k := max(1, env.Setup.ProfileFreqs)
	var out []int
	for i := 0; i < k; i++ {
		fi := n - 1 - i*(n-1)/max(1, k-1)
		if k == 1 {
			fi = n - 1
		}
		out = append(out, fi)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RunCase runs the named system at a parameter (see System), a baseline
// as the paper's.
func (env *Env) RunCase(name string, param float64, jobs []policy.ElasticJob, nodes int, timeline bool) (*RunResult, error) {
	return env.RunVariant(name, param, BaselineVariants[0], jobs, nodes, timeline)
}

// RunVariant is RunCase with a baseline run as variant b.
func (env *Env) RunVariant(name string, param float64, b Baselines, jobs []policy.ElasticJob, nodes int, timeline bool) (*RunResult, error) {
	sys, err := System(name, param)
	if err != nil {
		return nil, err
	}
	baseline := sys.Policy != "powerflow"
	if baseline {
		sys = b.Apply(sys)
	}
	r, err := env.Run(sys, jobs, nodes, timeline)
	if err != nil {
		return nil, fmt.Errorf("%s (%v): %w", name, param, err)
	}
	r.Param = param
	if baseline {
		r.Baselines = b.Name
	}
	return r, nil
}

// Run runs one system on jobs with nodes nodes (0: the setup's): the
// policy from the elastic registry, its predictions (fitted: PowerFlow's
// models, calibrated on each job's pre-run; oracle: the exact library
// profiles), its power limit (a fraction of G x Pmax, or watts).
func (env *Env) Run(sys scenario.System, jobs []policy.ElasticJob, nodes int, timeline bool) (*RunResult, error) {
	if nodes == 0 {
		nodes = env.Setup.Nodes
	}
	truth := env.truth(jobs)
	sched, o, err := env.scheduler(sys, truth, nodes, timeline)
	if err != nil {
		return nil, err
	}
	res, err := sim.RunElastic(jobs, truth, sched, o)
	if err != nil {
		if g, ok := sched.(*policy.ElasticDomainGuard); ok && g.Blocked != "" {
			return nil, fmt.Errorf("%w (power domains: %s)", err, g.Blocked)
		}
		return nil, err
	}
	usd, kg, err := env.Account.Cost(res.Hourly)
	if err != nil {
		return nil, err
	}
	var doms []DomainFigures
	if g, ok := sched.(*policy.ElasticDomainGuard); ok {
		for i, d := range res.Domains {
			a := res.DomainsActual[i]
			doms = append(doms, DomainFigures{Name: d.Name, Level: d.Level, LimitW: float64(d.Limit), Nodes: d.Nodes,
				PredMeanW: float64(d.Mean), PredP99W: float64(d.P99), PredPeakW: float64(d.Peak),
				ActualMeanW: float64(a.Mean), ActualP99W: float64(a.P99), ActualPeakW: float64(a.Peak), ActualAboveS: a.Above,
				Moved: g.Moved[i], Held: g.Held[i]})
		}
	}
	const mwh = 3.6e9
	return &RunResult{Domains: doms, System: sys.Name, AvgJCTh: res.AvgJCTSec / 3600, EnergyMWh: float64(res.Energy) / mwh,
		JobMWh: float64(res.JobEnergy) / mwh, IdleMWh: float64(res.IdleEnergy) / mwh, PowerOnMWh: float64(res.PowerOnEnergy) / mwh, PreRunMWh: float64(res.PreRunEnergy) / mwh,
		MakespanH: res.Makespan.Seconds() / 3600, LimitW: float64(o.PowerLimit), MaxPredW: float64(res.MaxPredicted), MaxActualW: float64(res.MaxActual),
		AboveLimitH: res.AboveLimit.Seconds() / 3600, AboveLimitKWh: float64(res.AboveLimitEnergy) / 3.6e6,
		GPUHours: res.GPUHours, MeanMHz: res.MeanMHz, LargeShare: res.LargeShare, LargeWait: res.LargeWhileWaiting, MeanWaitH: res.MeanWaitSec / 3600,
		Restarts: res.Restarts, PowerOns: res.PowerOns, Decisions: res.Decisions, Events: res.Events, CostUSD: usd, CO2Kg: kg, Res: res}, nil
}

// scheduler builds sys's policy and the engine's options on nodes nodes.
func (env *Env) scheduler(sys scenario.System, truth *pfTruth, nodes int, timeline bool) (policy.ElasticScheduler, sim.ElasticOptions, error) {
	s := env.Setup
	o := sim.ElasticOptions{Nodes: nodes, GPUsPerNode: perf.GPUsPerNode, FreqsMHz: env.Lib.FreqsMHz, IdleGPU: env.GPU.IdleW,
		Restart: job.Time(s.RestartSec * 1000), Profile: job.Time(s.ProfileSec * 1000), ProfileFreqs: env.profileFreqs(),
		NoiseSigma: s.Noise, PowerOn: hw.Joules(s.BootSec * float64(env.GPU.IdleW) * perf.GPUsPerNode), Seed: s.Seed, Timeline: timeline,
		NodesStartOff: true} // every system here powers nodes with jobs only
	deps := policy.ElasticDeps{FreqsMHz: o.FreqsMHz, ProfileFreqs: o.ProfileFreqs, GPUMaxPower: env.GPU.TDPW}
	switch sys.Predictions {
	case "fitted":
		deps.Predictor = powerflow.NewFitted(env.Models, env.Lib.FreqsMHz, perf.GPUsPerNode)
		o.PreRun = job.Time(s.PreRunSec * 1000)
	case "oracle":
		deps.Predictor = truth
	}
	deps.Build = func(name string, args []byte) (policy.ElasticScheduler, error) {
		return env.Registries.Elastic.New(name, args, deps)
	}
	if l := sys.PowerLimit; l != nil {
		// The paper's limit: eta x G GPUs x Pmax (the GPU's TDP).
		o.PowerLimit = power.Limit(l.TDPFraction * float64(nodes*perf.GPUsPerNode) * float64(env.GPU.TDPW))
		if l.Watts > 0 {
			o.PowerLimit = power.Limit(l.Watts)
		}
	}
	raw, err := sys.Ref().RawArgs()
	if err != nil {
		return nil, o, err
	}
	sched, err := env.Registries.Elastic.New(sys.Policy, raw, deps)
	if err != nil {
		return nil, o, err
	}
	if env.Domains.Len() > 0 {
		if env.Domains.Nodes() != nodes {
			return nil, o, fmt.Errorf("power domains bound to %d nodes, the run has %d", env.Domains.Nodes(), nodes)
		}
		// The same step after every system's decisions.
		o.Domains, o.DomainsAbove, o.DomainGPUW = env.Domains, env.DomainsAbove, env.GPUEnvelope()
		sched = policy.NewElasticDomainGuard(sched, env.Domains, o.DomainGPUW)
	}
	return sched, o, nil
}

func perfDNNStandIns() []string {
	var out []string
	for _, d := range perf.DNNs {
		out = append(out, d.Name+": "+d.StandIn)
	}
	return out
}

// LoadPhillyJobs reads a Philly job table in the Pollux format (the
// embedded day's format) and keeps the jobs submitted in the hours after
// start ("2006-01-02 15:04:05"; empty: the earliest timestamp), with
// times from start.
func LoadPhillyJobs(path, start string, hours float64) ([]trace.GPUJob, error) {
	var t0 time.Time
	if start != "" {
		var err error
		if t0, err = time.Parse(philly.Layout, start); err != nil {
			return nil, fmt.Errorf("start %q: want %q", start, philly.Layout)
		}
	}
	all, err := philly.ReadFile(path, t0)
	if err != nil {
		return nil, err
	}
	var out []trace.GPUJob
	for _, g := range all {
		if g.SubmitSec >= 0 && g.SubmitSec < hours*3600 {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no jobs submitted in the %g h from %s", path, hours, start)
	}
	return out, nil
}

// LoadPAIJobs reads Alibaba PAI 2020 job and task tables and keeps the GPU
// jobs submitted in the first hours hours.
func LoadPAIJobs(jobPath, taskPath string, hours float64) ([]trace.GPUJob, error) {
	jf, err := userfile.Open(jobPath, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer jf.Close()
	js, err := alibaba2020.ReadJobs(jf, jobPath)
	if err != nil {
		return nil, err
	}
	tf, err := userfile.Open(taskPath, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	ts, err := alibaba2020.ReadTasks(tf, taskPath)
	if err != nil {
		return nil, err
	}
	var out []trace.GPUJob
	for _, g := range alibaba2020.GPUJobs(js, ts) {
		if g.SubmitSec < hours*3600 {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no terminated GPU jobs in the first %g h", jobPath, hours)
	}
	return out, nil
}

// Sweep runs PowerFlow at every eta of Etas on jobs, one after another
// (the budget benchmark: under 5 s on one core for the 1,901-job day).
func (env *Env) Sweep(jobs []policy.ElasticJob) ([]RunResult, error) {
	var out []RunResult
	for _, e := range Etas {
		r, err := env.RunCase(NamePowerFlow, e, jobs, 0, false)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

// DecisionBench returns one PowerFlow allocation decision (Algorithm 1 and
// placement, fitted models, eta 0.5) over queued waiting jobs from the
// Philly day, each with its pre-run measurements, on the setup's cluster.
func (env *Env) DecisionBench(jobs []policy.ElasticJob, queued int) (func(), error) {
	if queued > len(jobs) {
		return nil, fmt.Errorf("experiment: %d queued jobs asked, %d available", queued, len(jobs))
	}
	p, err := powerflow.New(powerflow.Args{}.Default(), policy.ElasticDeps{FreqsMHz: env.Lib.FreqsMHz,
		Predictor: powerflow.NewFitted(env.Models, env.Lib.FreqsMHz, perf.GPUsPerNode), ProfileFreqs: env.profileFreqs()})
	if err != nil {
		return nil, err
	}
	truth := env.truth(jobs)
	st := &policy.ElasticState{Nodes: env.Setup.Nodes, GPUsPerNode: perf.GPUsPerNode, NodeOn: make([]bool, env.Setup.Nodes),
		FreqsMHz: env.Lib.FreqsMHz, IdleGPU: env.GPU.IdleW,
		PowerLimit: power.Limit(0.5 * float64(env.Setup.Nodes*perf.GPUsPerNode) * float64(env.GPU.TDPW))}
	for i := 0; i < queued; i++ {
		v := &policy.ElasticView{Job: &jobs[i], Remaining: jobs[i].Iters}
		for _, fi := range env.profileFreqs() {
			t, w := truth.Truth(&jobs[i], 1, fi)
			v.Obs = append(v.Obs, policy.Observation{GPUs: 1, FreqIdx: fi, IterSec: t, IterJ: t * w})
		}
		st.Jobs = append(st.Jobs, v)
	}
	return func() { p.ScheduleElastic(st) }, nil
}

// Num and ClaimResult are the kit's.
type (
	Num         = experiment.Num
	ClaimResult = experiment.ClaimResult
)
