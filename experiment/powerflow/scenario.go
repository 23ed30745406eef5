package powerflow

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/philly"
)

// ScenarioRun is one system on one seed of an elastic scenario.
type ScenarioRun struct {
	Seed uint64 `json:"seed"`
	// CostUSD and CO2Kg price the run's hourly energy (scenario.Account).
	CostUSD float64 `json:"cost_usd"`
	CO2Kg   float64 `json:"co2_kg"`
	RunResult
}

// ScenarioSummary is one system's mean and standard deviation over seeds.
type ScenarioSummary struct {
	System       string  `json:"system"`
	AvgJCTh      float64 `json:"avg_jct_h"`
	AvgJCThStd   float64 `json:"avg_jct_h_std"`
	EnergyMWh    float64 `json:"energy_mwh"`
	EnergyMWhStd float64 `json:"energy_mwh_std"`
	MakespanH    float64 `json:"makespan_h"`
	LimitW       float64 `json:"power_limit_w"`
	MaxActualW   float64 `json:"max_actual_w"`
	// AboveLimitH is the mean time over seeds the power drawn was above
	// the limit (0 without a limit).
	AboveLimitH float64 `json:"time_above_limit_h"`
	Restarts    float64 `json:"restarts"`
	CostUSD     float64 `json:"cost_usd"`
	CO2Kg       float64 `json:"co2_kg"`
}

// ScenarioResult is a run of an elastic scenario.
type ScenarioResult struct {
	Version  string             `json:"version"`
	Scenario *scenario.Scenario `json:"scenario"`
	StandIns []string           `json:"stand_ins"`
	Workload WorkloadInfo       `json:"workload"`
	Systems  []ScenarioSummary  `json:"systems"`
	Runs     []ScenarioRun      `json:"runs"`
	// Grid says which price and carbon series charged the runs.
	Grid string `json:"grid"`
}

// scenarioJobs reads the scenario's GPU job trace.
func scenarioJobs(s *scenario.Scenario) ([]trace.GPUJob, string, error) {
	e := s.Elastic
	if e.Jobs == scenario.PhillyDay {
		gj, err := philly.Day()
		if err != nil {
			return nil, "", err
		}
		return gj, "Microsoft Philly, jobs submitted 2017-10-13 (embedded, " + philly.DayName + ")", nil
	}
	gj, err := LoadPhillyJobs(s.Path(e.Jobs), e.Start, e.Hours)
	if err != nil {
		return nil, "", err
	}
	from := e.Start
	if from == "" {
		from = "its earliest job"
	}
	return gj, fmt.Sprintf("Philly job table %s (%d jobs in the %g h from %s)", e.Jobs, len(gj), e.Hours, from), nil
}

// RunScenario runs each system of an elastic scenario on each seed (mode
// elastic): the scenario's trace, each job given a DNN and batch size
// (seeded) as the PowerFlow paper does, on the scenario's cluster of 8-GPU
// A100 nodes, with the PowerFlow reproduction's ground truth and fitted
// models.
func RunScenario(_ context.Context, env *experiment.Env, s *scenario.Scenario) ([]*experiment.Results, error) {
	e := s.Elastic
	gj, src, err := scenarioJobs(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	systems := make([]scenario.System, len(e.Systems))
	for i, sys := range e.Systems {
		if sys.PowerLimit == nil {
			sys.PowerLimit = s.PowerLimit
		}
		systems[i] = sys
	}
	if err := checkScenario(env, s, gj, systems); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	acct, err := s.Account()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := experiment.EstimateJobs(s, fmt.Sprintf("elastic.jobs: %d jobs of %s, %d systems", len(gj), src, len(systems)),
		len(gj), s.Seeds*len(systems), env.Workers).Check(env.MaxMemory); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	last := 0
	for i, g := range gj {
		if g.SubmitSec > gj[last].SubmitSec {
			last = i
		}
	}
	if err := experiment.CheckOutlasts(acct, job.Time(math.Round(gj[last].SubmitSec*1000)), fmt.Sprintf("the job at elastic.jobs %s line %d", e.Jobs, gj[last].Line)); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	env.Notef("%s: %d jobs of %s on %d nodes, %d systems x %d seeds", s.Name, len(gj), src, e.Nodes, len(systems), s.Seeds)
	res := &ScenarioResult{Version: env.Version, Scenario: s, StandIns: StandIns(src), Grid: acct.Where}
	seeds := s.SeedList()
	runs := make([]ScenarioRun, len(seeds)*len(systems))
	var doms *power.Domains
	for k, seed := range seeds {
		setup := DefaultSetup()
		setup.Nodes, setup.Seed = e.Nodes, seed
		pe, err := NewEnv(env.Registries, setup)
		if err != nil {
			return nil, err
		}
		pe.Account = acct
		if k == 0 {
			if doms, err = bindTopology(env, s, pe); err != nil {
				return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
			}
		}
		pe.Domains, pe.DomainsAbove = doms, s.Topology.Above()
		jobs := pe.Jobs(gj, seed)
		if k == 0 {
			res.Workload = workloadInfo(pe, jobs, src)
		}
		sruns, errs := experiment.ShardedRun(env.Shards, len(systems), env.Workers, func(i int) (ScenarioRun, error) {
			r, err := pe.Run(systems[i], jobs, 0, false)
			if err != nil {
				return ScenarioRun{}, fmt.Errorf("%s seed %d: %w", systems[i].Name, seed, err)
			}
			return ScenarioRun{Seed: seed, CostUSD: r.CostUSD, CO2Kg: r.CO2Kg, RunResult: *r}, nil
		}, env.Progress, func(i int) string { return fmt.Sprintf("%s seed %d", systems[i].Name, seed) })
		copy(runs[k*len(systems):], sruns)
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	res.Runs = runs
	for i, sys := range systems {
		var jct, en []float64
		sum := ScenarioSummary{System: sys.Name}
		for k := range seeds {
			r := runs[k*len(systems)+i]
			jct, en = append(jct, r.AvgJCTh), append(en, r.EnergyMWh)
			sum.MakespanH += r.MakespanH / float64(len(seeds))
			sum.Restarts += float64(r.Restarts) / float64(len(seeds))
			sum.AboveLimitH += r.AboveLimitH / float64(len(seeds))
			sum.CostUSD += r.CostUSD / float64(len(seeds))
			sum.CO2Kg += r.CO2Kg / float64(len(seeds))
			sum.LimitW, sum.MaxActualW = r.LimitW, max(sum.MaxActualW, r.MaxActualW)
		}
		sum.AvgJCTh, sum.AvgJCThStd = experiment.MeanStd(jct)
		sum.EnergyMWh, sum.EnergyMWhStd = experiment.MeanStd(en)
		res.Systems = append(res.Systems, sum)
	}
	return scenarioResults(res)
}

// bindTopology binds the scenario's topology (nil: none) to the elastic
// cluster's nodes, named NodeName(i), each idle at its GPUs' idle power
// (the engine counts GPU power only); its warnings are printed.
func bindTopology(env *experiment.Env, s *scenario.Scenario, pe *Env) (*power.Domains, error) {
	names := make([]string, s.Elastic.Nodes)
	idle := make([]hw.Watts, len(names))
	for i := range names {
		names[i], idle[i] = NodeName(i), pe.GPU.IdleW*perf.GPUsPerNode
	}
	d, ws, err := s.BindTopology(names, idle)
	if err != nil {
		return nil, err
	}
	for i, w := range ws {
		env.Notef("warning (topology, %d of %d): %s", i+1, len(ws), w)
	}
	return d, nil
}

// checkScenario refuses, before any run (and before fitting models), what
// would make a run fail only at its end: a system that can never run a job
// (CheckSystem: a power limit below the least power any job draws, a frequency the
// GPU does not support) and a job larger than the cluster on any seed
// (each seed draws the DNNs, which cap the GPU count a job runs on).
func checkScenario(env *experiment.Env, s *scenario.Scenario, gj []trace.GPUJob, systems []scenario.System) error {
	e := s.Elastic
	setup := DefaultSetup()
	setup.Nodes = e.Nodes
	base, err := newBaseEnv(env.Registries, setup)
	if err != nil {
		return err
	}
	for i, sys := range systems {
		if err := base.CheckSystem(sys, e.Nodes); err != nil {
			where := fmt.Sprintf("elastic.systems[%d] (%s)", i, sys.Name)
			if e.Systems[i].PowerLimit == nil && s.PowerLimit != nil {
				where += " under power_limit"
			}
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	gpus := e.Nodes * perf.GPUsPerNode
	for _, seed := range s.SeedList() {
		jobs := base.Jobs(gj, seed)
		if big := tooLarge(gj, jobs, gpus, true); len(big) > 0 {
			k := big[0]
			return fmt.Errorf("elastic.jobs %s line %d: job %s asks for %d GPUs and runs on %d (seed %d), more than the cluster's %d (elastic.nodes: %d x %d GPUs); %d job(s) in all are too large: drop them or add nodes",
				e.Jobs, gj[k].Line, gj[k].ID, gj[k].GPUs, policy.ReqCount(&jobs[k]), seed, gpus, e.Nodes, perf.GPUsPerNode, len(big))
		}
	}
	return nil
}

// ScenarioTable is the printed summary: per system, means over seeds.
func ScenarioTable(r *ScenarioResult) report.Table {
	t := report.Table{Title: fmt.Sprintf("%s: %d jobs on %d nodes, mean (std) over %d seeds", r.Scenario.Name, r.Workload.Jobs, r.Scenario.Elastic.Nodes, r.Scenario.Seeds),
		Head: []string{"system", "avg JCT (h)", "energy (MWh)", "makespan (h)", "power limit (kW)", "max power (kW)", "h above limit", "restarts", "cost (USD)", "CO2 (t)"}}
	for _, s := range r.Systems {
		lim, above := "-", "-"
		if s.LimitW > 0 {
			lim, above = fmt.Sprintf("%.1f", s.LimitW/1000), fmt.Sprintf("%.2f", s.AboveLimitH)
		}
		t.Rows = append(t.Rows, []string{s.System, fmt.Sprintf("%.2f (%.2f)", s.AvgJCTh, s.AvgJCThStd), fmt.Sprintf("%.3f (%.3f)", s.EnergyMWh, s.EnergyMWhStd),
			fmt.Sprintf("%.1f", s.MakespanH), lim, fmt.Sprintf("%.1f", s.MaxActualW/1000), above, fmt.Sprintf("%.0f", s.Restarts),
			fmt.Sprintf("%.2f", s.CostUSD), fmt.Sprintf("%.2f", s.CO2Kg/1000)})
	}
	return t
}

func scenarioResults(r *ScenarioResult) ([]*experiment.Results, error) {
	res, err := experiment.NewResults(r.Scenario.Name, r.Version, r)
	if err != nil {
		return nil, err
	}
	rows := [][]string{{"seed", "system", "avg_jct_h", "energy_mwh", "job_mwh", "job_mwh_model_band", "idle_mwh", "power_on_mwh", "pre_run_mwh", "makespan_h", "power_limit_w", "max_predicted_w", "max_actual_w", "max_actual_over_limit", "time_above_limit_h", "energy_above_limit_kwh", "restarts", "power_ons", "decisions", "events", "cost_usd", "co2_kg"}}
	for _, x := range r.Runs {
		rows = append(rows, []string{strconv.FormatUint(x.Seed, 10), x.System, report.F(x.AvgJCTh), report.F(x.EnergyMWh), report.F(x.JobMWh), report.F(JobBand(x.JobMWh)), report.F(x.IdleMWh),
			report.F(x.PowerOnMWh), report.F(x.PreRunMWh), report.F(x.MakespanH), report.F(x.LimitW), report.F(x.MaxPredW), report.F(x.MaxActualW),
			overLimit(x.RunResult), report.F(x.AboveLimitH), report.F(x.AboveLimitKWh),
			strconv.Itoa(x.Restarts), strconv.Itoa(x.PowerOns), strconv.Itoa(x.Decisions), strconv.Itoa(x.Events), report.F(x.CostUSD), report.F(x.CO2Kg)})
	}
	lp := report.LinePlot{Title: "Average JCT vs total GPU energy (" + r.Scenario.Name + ")", XLabel: "total energy (MWh)", YLabel: "average JCT (h)"}
	for _, s := range r.Systems {
		var pts []ScenarioRun
		for _, x := range r.Runs {
			if x.System == s.System {
				pts = append(pts, x)
			}
		}
		slices.SortStableFunc(pts, func(a, b ScenarioRun) int { return cmp.Compare(a.EnergyMWh, b.EnergyMWh) })
		ser := report.Series{Name: s.System}
		for _, p := range pts {
			// a small cross per seed
			e, j := p.EnergyMWh, p.AvgJCTh
			ser.X = append(ser.X, e*0.99, e*1.01, e, e, e)
			ser.Y = append(ser.Y, j, j, j, j*0.97, j*1.03)
		}
		lp.Series = append(lp.Series, ser)
	}
	t := experiment.NewTotals(experiment.TotalsPanel{Label: "energy (MWh)", Format: "%.2f"}, experiment.TotalsPanel{Label: "cost (USD)", Format: "%.2f"}, experiment.TotalsPanel{Label: "CO2 (t)", Format: "%.2f"})
	for _, s := range r.Systems {
		for _, x := range r.Runs {
			if x.System == s.System {
				t.Add(s.System, x.EnergyMWh, x.CostUSD, x.CO2Kg/1000)
			}
		}
	}
	seeds := len(r.Scenario.SeedList())
	totals, err := t.SVG(fmt.Sprintf("Energy, cost and CO2 (mean and 95%% interval over %d seeds)", seeds))
	if err != nil {
		return nil, fmt.Errorf("plot totals.svg: %w", err)
	}
	curve, err := experiment.Draw(experiment.Plot{File: "jct_vs_energy.svg", Caption: "Average JCT vs total GPU energy, one cross per seed", Plot: lp})
	if err != nil {
		return nil, err
	}
	res.Figures = append([]experiment.Figure{{File: "totals.svg", Caption: "Each system's energy, cost and CO2: bars the mean over the seeds, whiskers the 95% interval of that mean on the log scale (experiment.PositiveCI95: it cannot reach zero)", SVG: totals}}, curve...)
	res.AddNotes(r.Scenario.Description)
	res.AddGrid(r.Grid)
	res.AddStandIns(r.StandIns)
	res.AddModelBand(ModelBandNote())
	res.Tables, res.Files["runs.csv"], res.Listing = []report.Table{ScenarioTable(r)}, report.CSV(rows), "summary.json, runs.csv, totals.svg, jct_vs_energy.svg, report.html"
	if drows := domainRows(r.Runs); len(drows) > 1 {
		res.Tables = append(res.Tables, DomainTable(r))
		res.Files["domains.csv"] = report.CSV(drows)
		res.Listing = "summary.json, runs.csv, domains.csv, totals.svg, jct_vs_energy.svg, report.html"
	}
	return []*experiment.Results{res}, nil
}

// domainRows is domains.csv: one row per run and domain (only the header
// when no run has domains).
func domainRows(runs []ScenarioRun) [][]string {
	out := [][]string{{"seed", "system", "domain", "level", "limit_w", "nodes", "predicted_mean_w", "predicted_p99_w", "predicted_peak_w",
		"actual_mean_w", "actual_p99_w", "actual_peak_w", "actual_above_s", "moved", "held_back"}}
	for _, x := range runs {
		for _, d := range x.Domains {
			out = append(out, []string{strconv.FormatUint(x.Seed, 10), x.System, d.Name, d.Level, report.F(d.LimitW), strconv.Itoa(d.Nodes),
				report.F(d.PredMeanW), report.F(d.PredP99W), report.F(d.PredPeakW), report.F(d.ActualMeanW), report.F(d.ActualP99W), report.F(d.ActualPeakW),
				report.F(d.ActualAboveS), strconv.Itoa(d.Moved), strconv.Itoa(d.Held)})
		}
	}
	return out
}

// DomainTable is the printed per-domain summary: per system and domain,
// the highest predicted and actual peak over the seeds as a share of the
// limit, the mean actual hours above the report threshold, and the
// allocations moved and held back (means over seeds).
func DomainTable(r *ScenarioResult) report.Table {
	t := report.Table{Title: fmt.Sprintf("Power domains (above: actual power over %g x the limit; moved/held: allocations the domain sent elsewhere or held back, mean over seeds)", r.Scenario.Topology.Above()),
		Head: []string{"system", "domain", "limit (kW)", "charged peak / limit", "actual peak / limit", "h above", "moved", "held back"}}
	seeds := float64(len(r.Scenario.SeedList()))
	for _, sys := range r.Systems {
		type acc struct {
			limit, pred, act, above, moved, held float64
		}
		var names []string
		by := map[string]*acc{}
		for _, x := range r.Runs {
			if x.System != sys.System {
				continue
			}
			for _, d := range x.Domains {
				a := by[d.Name]
				if a == nil {
					a = &acc{limit: d.LimitW}
					by[d.Name] = a
					names = append(names, d.Name)
				}
				a.pred, a.act = max(a.pred, d.PredPeakW), max(a.act, d.ActualPeakW)
				a.above += d.ActualAboveS / 3600 / seeds
				a.moved += float64(d.Moved) / seeds
				a.held += float64(d.Held) / seeds
			}
		}
		for _, n := range names {
			a := by[n]
			t.Rows = append(t.Rows, []string{sys.System, n, fmt.Sprintf("%.1f", a.limit/1000), fmt.Sprintf("%.3f", a.pred/a.limit), fmt.Sprintf("%.3f", a.act/a.limit),
				fmt.Sprintf("%.2f", a.above), fmt.Sprintf("%.1f", a.moved), fmt.Sprintf("%.1f", a.held)})
		}
	}
	return t
}
