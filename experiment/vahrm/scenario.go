package vahrm

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/gpuvar"
	"github.com/wattsched/wattsched/trace/swf"
)

// StandIns says what stands in for the VAHRM paper's private inputs
// in every HPC run: the job log (unless it is the user's), the device power
// and the power models.
func StandIns(log *Log) []string {
	return []string{
		"Job log: " + log.Source + fmt.Sprintf("; the first %d jobs with run time and processors, nodes = processors / %d rounded up (largest job: %d of 540 nodes)", len(log.Jobs), log.ProcsPerNode, log.MaxNodes()),
		"GPU power: " + gpuvar.Source + ": the measured V100s keep their measured mean power per application as the first GPUs of the 2,160; the rest is drawn from each application's measured mean and deviation (paper: 256 measured TSUBAME3.0 P100s, rest drawn likewise)",
		"GPU job types: PageRank (small), ResNet (medium), SGEMM (large) stand in for the paper's three CUDA kernels",
		fmt.Sprintf("CPU power: no per-CPU measurements are public; each CPU draws Table IV's typical value (per node / 2) times 1 + N(0, %.0f%%)", 100*vahrmCPUCV),
		"Power-model inputs: per-application mean SM clock and memory clock stand in for PMC profiles (GPUs); the job type's typical per-CPU power (CPUs)",
		fmt.Sprintf("Predictions: VAHRM+TSMVA and the variation-aware FCFS systems use TSMVA (RF+RF) fitted, for GPUs, on the measured runs' training split plus simulated profile history of every (GPU, application) pair not measured (%d earlier runs each, the true power times 1 + N(0, cv), cv the application's run-to-run variation measured on the Longhorn GPUs), so every GPU gets its own prediction; for CPUs, on simulated profile history (%d earlier runs per CPU and job type, each the true power times 1 + N(0, %.0f%%); no per-CPU data is public, so this history is simulated from the truth and its noise level is our choice, which favours TSMVA); VAHRM+IDEAL uses the true power", gpuProfileRuns, cpuProfileRuns, 100*cpuRunCV),
	}
}

// ScenarioResult is a run of an hpc scenario.
type ScenarioResult struct {
	Version  string             `json:"version"`
	Scenario *scenario.Scenario `json:"scenario"`
	StandIns []string           `json:"stand_ins"`
	Jobs     int                `json:"jobs"`
	// OfferedLoad is node-seconds asked for / (nodes x submission span) at the scenario's SR.
	OfferedLoad Num      `json:"offered_load"`
	Seeds       []uint64 `json:"seeds"`
	// Runs holds every (seed, workload, system) relative to the first
	// system on the same seed and workload; Averages the means per system.
	Runs     []Relative `json:"runs"`
	Averages []Relative `json:"averages"`
	// Grid says which price and carbon series charged the runs.
	Grid string `json:"grid"`
}

// LoadScenarioLog reads the scenario's SWF log (a relative path from the
// scenario file's directory).
func LoadScenarioLog(s *scenario.Scenario) (*Log, error) {
	h := s.HPC
	if h.SWF == scenario.SWFNASAiPSC {
		l, err := swf.NASAiPSC()
		if err != nil {
			return nil, err
		}
		return LogFrom(l, NASASource, h.Jobs, h.ProcsPerNode)
	}
	l, err := swf.ReadFile(s.Path(h.SWF))
	if err != nil {
		return nil, err
	}
	return LogFrom(l, "SWF log "+filepath.Base(h.SWF), h.Jobs, h.ProcsPerNode)
}

// settingOf is the scenario's setting for one seed: its shrink ratio,
// first-run ratio and power limit (none: PCR 1, which never binds).
func settingOf(s *scenario.Scenario, seed uint64) Setting {
	h := s.HPC
	set := Setting{SR: h.SR, PCR: 1, Beta: math.Pow(0.25, 6), FirstRunRatio: h.FirstRunRatio, Seed: seed}
	if l := s.PowerLimit; l != nil {
		if l.Watts > 0 {
			set.LimitW = l.Watts
		} else {
			set.PCR = l.TDPFraction
		}
	}
	return set
}

// limitLabel describes the scenario's power limit.
func limitLabel(s *scenario.Scenario) string {
	switch l := s.PowerLimit; {
	case l == nil:
		return "no power limit"
	case l.Watts > 0:
		return fmt.Sprintf("power limit %g W", l.Watts)
	default:
		return fmt.Sprintf("power limit %g x system TDP", l.TDPFraction)
	}
}

// RunScenario replays the scenario's log for each seed, workload and
// system on the VAHRM paper's system (mode hpc).
func RunScenario(_ context.Context, env *experiment.Env, s *scenario.Scenario) ([]*experiment.Results, error) {
	h := s.HPC
	for i, sys := range h.Systems {
		if sys.PowerLimit != nil {
			return nil, fmt.Errorf("scenario %s: hpc.systems[%d].power_limit: not supported in mode hpc (set the scenario's power_limit)", s.Name, i)
		}
	}
	log, err := LoadScenarioLog(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := experiment.EstimateJobs(s, fmt.Sprintf("hpc.jobs: %d jobs of %s, %d workloads x %d systems", len(log.Jobs), h.SWF, len(h.Workloads), len(h.Systems)),
		len(log.Jobs), len(h.Workloads)*len(h.Systems), env.Workers).Check(env.MaxMemory); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := log.CheckSR(h.SR); err != nil {
		return nil, fmt.Errorf("scenario %s: hpc.sr: %w", s.Name, err)
	}
	acct, err := s.Account()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	end, line := log.earliestEnd(h.SR)
	if err := experiment.CheckOutlasts(acct, end, fmt.Sprintf("the job at hpc.swf %s line %d (at sr %g)", h.SWF, line, h.SR)); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	// Seeds run one after another, each a sweep of workloads x systems.
	env.Notef("%s: %d jobs of %s on the 540-node VAHRM system, %d workloads x %d systems x %d seeds", s.Name, len(log.Jobs), h.SWF, len(h.Workloads), len(h.Systems), s.Seeds)
	res := &ScenarioResult{Version: env.Version, Scenario: s, StandIns: StandIns(log), Jobs: len(log.Jobs), OfferedLoad: Num(log.Utilization(h.SR))}
	var ws []Workload
	for _, id := range h.Workloads {
		ws = append(ws, Workloads()[id])
	}
	for k := 0; k < s.Seeds; k++ {
		seed := s.FirstSeed + uint64(k)
		res.Seeds = append(res.Seeds, seed)
		e, _, _, err := BuildEnv(env.Registries, log, seed)
		if err != nil {
			return nil, err
		}
		e.Workloads, e.Shards = ws, env.Shards
		if e.Domains, err = bindTopology(env, s, e.Truth, k == 0); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		e.DomainsAbove = s.Topology.Above()
		if e.Account, err = s.Account(); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		res.Grid = e.Account.Where
		// The first system is the baseline; it is listed again so that its
		// own row (ratios 1) appears with its absolute figures.
		rel, err := e.Sweep([]string{"seed=" + strconv.FormatUint(seed, 10)}, []Setting{settingOf(s, seed)}, h.Systems, h.Systems[0], env.Workers, env.Progress)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, rel...)
	}
	all := make([]Relative, len(res.Runs))
	for i, r := range res.Runs {
		all[i] = r
		all[i].Setting = "all"
	}
	res.Averages = Averages(all)
	return scenarioResults(res)
}

// ScenarioTable is the printed summary: per system, means over seeds and
// workloads relative to the first system.
func ScenarioTable(r *ScenarioResult) report.Table {
	h := r.Scenario.HPC
	t := report.Table{Title: fmt.Sprintf("%s: %d jobs, SR=%g (offered load %.1f%%), %s, first-run ratio %g; relative to %s, mean of %d workloads x %d seeds",
		r.Scenario.Name, r.Jobs, h.SR, 100*float64(r.OfferedLoad), limitLabel(r.Scenario), h.FirstRunRatio, h.Systems[0].Name, len(h.Workloads), len(r.Seeds)),
		Head: []string{"system", "energy saving", "common window", "above idle", "energy MWh", "cost USD", "CO2 t", "turnaround", "throughput", "waiting", "mean wait h", "longest wait h", "max s above cap", "max excess W"}}
	for _, a := range r.Averages {
		t.Rows = append(t.Rows, []string{a.System, fmt.Sprintf("%.2f%%", 100*a.EnergySave), fmt.Sprintf("%.2f%%", 100*a.CommonSave), fmt.Sprintf("%.2f%%", 100*a.AboveIdleSave), fmt.Sprintf("%.3f", a.EnergyJ/3.6e9), fmt.Sprintf("%.2f", a.CostUSD), fmt.Sprintf("%.1f", a.CO2Kg/1000), fmt.Sprintf("%.3f", a.TATRatio),
			fmt.Sprintf("%.3f", a.ThroughRat), fmt.Sprintf("%.3f", a.WaitRatio), fmt.Sprintf("%.2f", a.MeanWaitS/3600), fmt.Sprintf("%.1f", a.MaxWaitS/3600),
			fmt.Sprintf("%.0f", a.ExcessS), fmt.Sprintf("%.0f", a.MaxExcessW)})
	}
	return t
}

// scenarioResults renders summary.json, runs.csv, energy_by_workload.svg
// and report.html.
func scenarioResults(r *ScenarioResult) ([]*experiment.Results, error) {
	res, err := experiment.NewResults(r.Scenario.Name, r.Version, r)
	if err != nil {
		return nil, err
	}
	byW := make([]Relative, len(r.Runs))
	var xs []float64
	for i, x := range r.Runs {
		byW[i] = x
		byW[i].Setting = "w" + strconv.Itoa(x.Workload)
	}
	for _, id := range r.Scenario.HPC.Workloads {
		xs = append(xs, float64(id))
	}
	lp := sweepPlot("Energy saving by workload", "energy saving vs "+r.Scenario.HPC.Systems[0].Name+" (%)", byW, xs, func(x Relative) float64 { return 100 * x.EnergySave }, false)
	lp.XLabel = "workload (Table III: 0-2 mostly CPU, 3-5 mixed, 6-8 mostly GPU jobs)"
	if res.Figures, err = experiment.Draw(experiment.Plot{File: "energy_by_workload.svg", Caption: "Energy saving by workload (mean over seeds)", Plot: lp}); err != nil {
		return nil, err
	}
	res.AddNotes(r.Scenario.Description)
	res.AddGrid(r.Grid)
	res.AddStandIns(r.StandIns)
	res.Tables, res.Files["runs.csv"], res.Listing = []report.Table{ScenarioTable(r)}, relCSV(r.Runs), "summary.json, runs.csv, energy_by_workload.svg, report.html"
	if rows := domainRows(r.Runs); len(rows) > 1 {
		res.Files["domains.csv"] = report.CSV(rows)
		res.Listing = "summary.json, runs.csv, domains.csv, energy_by_workload.svg, report.html"
	}
	return []*experiment.Results{res}, nil
}

// bindTopology binds the scenario's topology (nil: none) to the VAHRM
// system's nodes, named NodeName(i), each idle at the truth's idle power;
// warn prints its warnings (once, for the first seed).
func bindTopology(env *experiment.Env, s *scenario.Scenario, truth *power.HPCNodes, warn bool) (*power.Domains, error) {
	names := make([]string, truth.Nodes())
	idle := make([]hw.Watts, len(names))
	for i := range names {
		names[i], idle[i] = NodeName(i), truth.Idle()
	}
	d, ws, err := s.BindTopology(names, idle)
	if err != nil {
		return nil, err
	}
	for i, w := range ws {
		if warn {
			env.Notef("warning (topology, %d of %d): %s", i+1, len(ws), w)
		}
	}
	return d, nil
}

// domainRows is domains.csv: one row per run and domain (only the header
// when no run has domains).
func domainRows(runs []Relative) [][]string {
	out := [][]string{{"setting", "system", "workload", "domain", "limit_w", "nodes", "predicted_mean_w", "predicted_p99_w", "predicted_peak_w",
		"actual_mean_w", "actual_p99_w", "actual_peak_w", "actual_above_s"}}
	f := func(v float64) string { return report.F(v) }
	for _, r := range runs {
		for _, d := range r.Domains {
			out = append(out, []string{r.Setting, r.System, strconv.Itoa(r.Workload), d.Name, f(d.LimitW), strconv.Itoa(d.Nodes),
				f(d.PredMeanW), f(d.PredP99W), f(d.PredPeakW), f(d.ActualMeanW), f(d.ActualP99W), f(d.ActualPeakW), f(d.ActualAboveS)})
		}
	}
	return out
}
