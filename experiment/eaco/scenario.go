package eaco

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/gavel"
)

// ScenarioSummary is one system over the scenario's seeds (mean, std).
type ScenarioSummary struct {
	System      string     `json:"system"`
	EnergyMWh   [2]float64 `json:"energy_mwh_mean_std"`
	RunH        [2]float64 `json:"avg_runtime_h_mean_std"`
	JTTH        [2]float64 `json:"avg_jtt_h_mean_std"`
	ActiveNodes [2]float64 `json:"avg_active_nodes_mean_std"`
	Misses      []int      `json:"deadline_misses_per_seed"`
	Undos       []int      `json:"undos_per_seed"`
	Joins       []int      `json:"co_locations_per_seed"`
	// Dropped counts the jobs Gavel's failed-round rule removed without a
	// completion, per seed (timing gavel-rounds only).
	Dropped []int `json:"dropped_jobs_per_seed,omitempty"`
	// CostUSD and CO2Kg price each run's hourly energy (scenario grid).
	CostUSD [2]float64 `json:"cost_usd_mean_std"`
	CO2Kg   [2]float64 `json:"co2_kg_mean_std"`
}

// scenarioInterference says what a scenario of mode coloc runs: Gavel's
// table as it is (placeholders included, as Gavel's simulator runs it).
const scenarioInterference = "the paper's measured co-location slowdowns inside Gavel (its Table 3 is not in the text): Gavel's own measured V100 pair throughputs; sets of 3-4 by the multiplicative rule"

// ScenarioWorkload is a coloc section's jobs for one seed: WorkloadFrom,
// and under deadlines: none no job keeps a deadline or a priority (the
// classes are still drawn, so arrivals and job types are those of
// deadlines: drawn).
func (e *Env) ScenarioWorkload(pool []gavel.Job, c *scenario.ColocSpec, seed uint64) []policy.ColocJob {
	jobs := e.WorkloadFrom(pool, seed, c.Count, c.PerHour, c.Arrivals == "trace")
	if c.Deadlines == scenario.DeadlinesNone {
		for i := range jobs {
			jobs[i].Deadline, jobs[i].Priority = policy.NoDeadline, 0
		}
	}
	return jobs
}

// progressJobs is the job count from which a run reports how far it has
// got (a smaller run ends within seconds).
const progressJobs = 20_000

// EstimateScenario is a coloc scenario's memory estimate: runs runs of
// jobs jobs, workers at once, with the figures of its timing
// (experiment.FiguresFor: the event-driven engine's or, for Gavel's
// round-based timing, the job engines').
func EstimateScenario(s *scenario.Scenario, jobs, runs, workers int) experiment.Estimate {
	c := s.Coloc
	what := fmt.Sprintf("coloc.count %d (%s arrivals), %d systems", c.Count, c.Arrivals, len(c.Systems))
	return experiment.EstimateJobs(s, what, jobs, runs, workers)
}

// RunScenario runs each system of a coloc scenario on each seed (mode
// coloc): the scenario's Gavel-format job list on its nodes of 8 GPUs of
// its worker type (V100 unless coloc.worker names another), with
// the EaCO reproduction's models and deadline rule.
func RunScenario(_ context.Context, env *experiment.Env, s *scenario.Scenario) ([]*experiment.Results, error) {
	c := s.Coloc
	in, err := LoadScenarioInputs(env.Catalog, s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	e, pool, src := in.Env, in.Pool, in.Source
	seeds := s.SeedList()
	n := len(pool)
	if c.Count > 0 && (c.Arrivals == "poisson" || c.Count < n) {
		n = c.Count // drawn, or the first Count of the file
	}
	if err := EstimateScenario(s, n, len(seeds)*len(c.Systems), env.Workers).Check(env.MaxMemory); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	acct, err := s.Account()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if c.GavelRounds() && c.Arrivals == "trace" {
		// Gavel's simulator asserts the same: rounds take jobs in arrival
		// (= ID) order.
		for i := 1; i < len(pool) && (c.Count <= 0 || i < c.Count); i++ {
			if pool[i].ArrivalSec < pool[i-1].ArrivalSec {
				return nil, fmt.Errorf("scenario %s: %w", s.Name, &trace.ParseError{File: in.Name, Line: pool[i].Line, Column: "arrival_time",
					Err: fmt.Errorf("%v s is before the previous line's %v s: timing %s needs jobs in arrival order", pool[i].ArrivalSec, pool[i-1].ArrivalSec, scenario.TimingGavel)})
			}
		}
	}
	opts := RunOptions{}
	if c.GavelRounds() {
		opts.Rounds = &sim.RoundTiming{Round: job.Time(math.Round(c.RoundS * 1000)), Reset: job.Time(math.Round(c.ResetS * 1000)), IgnoreFailures: !c.DropsFailedJobs()}
	}
	workload := func(seed uint64) []policy.ColocJob { return e.ScenarioWorkload(pool, c, seed) }
	for _, seed := range seeds {
		jobs := workload(seed)
		if len(jobs) == 0 {
			break
		}
		last := jobs[0]
		for _, j := range jobs {
			if j.Submit > last.Submit {
				last = j
			}
		}
		what := fmt.Sprintf("job %d of seed %d (arriving at %.0f h)", last.ID, seed, last.Submit.Seconds()/3600)
		if c.Arrivals == "trace" && last.ID < len(pool) {
			what = fmt.Sprintf("the job at coloc.jobs %s line %d, column arrival_time (%v s)", in.Name, pool[last.ID].Line, pool[last.ID].ArrivalSec)
		}
		if err := experiment.CheckOutlasts(acct, last.Submit, what); err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
	}
	gpu := strings.ToUpper(c.WorkerType())
	env.Notef("%s: jobs of %s (%s arrivals) on %d nodes x 8 %s, %d systems x %d seeds", s.Name, src, c.Arrivals, c.Nodes, gpu, len(c.Systems), len(seeds))
	if c.GavelRounds() {
		env.Notef("%s: timing %s (%g s rounds, allocation reset at most every %g s; failed jobs: %s)", s.Name, scenario.TimingGavel, c.RoundS, c.ResetS, c.FailedJobs)
	}
	runs := make([]*Run, len(seeds)*len(c.Systems))
	errs := experiment.Parallel(len(runs), env.Workers, func(i int) error {
		seed, sys := seeds[i/len(c.Systems)], c.Systems[i%len(c.Systems)]
		jobs := workload(seed)
		raw, err := sys.Ref().RawArgs()
		if err != nil {
			return err
		}
		o := opts
		if env.RunProgress != nil && len(jobs) >= progressJobs {
			what := fmt.Sprintf("%s seed %d", sys.Name, seed)
			o.Progress = func(ended, total int) { env.RunProgress(what, ended, total, "jobs ended") }
		}
		r, err := e.RunOneWith(env.Registries, sys.Policy, raw, c.Nodes, seed, jobs, o)
		if err != nil {
			return fmt.Errorf("%s seed %d: %w", sys.Name, seed, err)
		}
		if r.CostUSD, r.CO2Kg, err = acct.Cost(r.Res.Hourly); err != nil {
			return fmt.Errorf("%s seed %d: %w", sys.Name, seed, err)
		}
		runs[i] = r
		return nil
	}, env.Progress, func(i int) string {
		return fmt.Sprintf("%s seed %d", c.Systems[i%len(c.Systems)].Name, seeds[i/len(c.Systems)])
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var sums []ScenarioSummary
	tab := report.Table{Title: fmt.Sprintf("%s: %d nodes x 8 %s, mean ± std over %d seeds", s.Name, c.Nodes, gpu, len(seeds)),
		Head: []string{"system", "energy (MWh)", "cost (USD)", "CO2 (kg)", "avg runtime (h)", "avg JTT (h)", "active nodes", "deadline misses", "undos", "co-locations"}}
	rows := [][]string{{"seed", "system", "energy_j", "avg_runtime_s", "avg_jtt_s", "avg_active_nodes", "deadline_misses", "undos", "joins", "makespan_s", "cost_usd", "co2_kg"}}
	if c.GavelRounds() { // Gavel's failed-round rule: jobs removed without a completion
		tab.Head, rows[0] = append(tab.Head, "dropped jobs"), append(rows[0], "dropped_jobs")
	}
	for k, sys := range c.Systems {
		sum := ScenarioSummary{System: sys.Name}
		var en, ru, jt, an, cu, co []float64
		mis, und, joi, drop := 0, 0, 0, 0
		for si, seed := range seeds {
			i := si*len(c.Systems) + k
			r := runs[i].Res
			en, ru, jt, an = append(en, float64(r.Energy)/3.6e9), append(ru, r.AvgRunSec/3600), append(jt, r.AvgJTTSec/3600), append(an, r.AvgActiveNodes)
			cu, co = append(cu, runs[i].CostUSD), append(co, runs[i].CO2Kg)
			sum.Misses, sum.Undos, sum.Joins = append(sum.Misses, r.DeadlineMisses), append(sum.Undos, r.Undos), append(sum.Joins, r.Joins)
			mis, und, joi, drop = mis+r.DeadlineMisses, und+r.Undos, joi+r.Joins, drop+r.Dropped
			if c.GavelRounds() {
				sum.Dropped = append(sum.Dropped, r.Dropped)
			}
			rows = append(rows, []string{strconv.FormatUint(seed, 10), sys.Name, report.Exact(float64(r.Energy)), report.F(r.AvgRunSec), report.F(r.AvgJTTSec),
				report.F(r.AvgActiveNodes), strconv.Itoa(r.DeadlineMisses), strconv.Itoa(r.Undos), strconv.Itoa(r.Joins), report.F(r.Makespan.Seconds()),
				report.F(runs[i].CostUSD), report.F(runs[i].CO2Kg)})
			if c.GavelRounds() {
				rows[len(rows)-1] = append(rows[len(rows)-1], strconv.Itoa(r.Dropped))
			}
		}
		ms := func(x []float64) [2]float64 { m, sd := experiment.MeanStd(x); return [2]float64{m, sd} }
		sum.EnergyMWh, sum.RunH, sum.JTTH, sum.ActiveNodes = ms(en), ms(ru), ms(jt), ms(an)
		sum.CostUSD, sum.CO2Kg = ms(cu), ms(co)
		sums = append(sums, sum)
		tab.Rows = append(tab.Rows, []string{sys.Name, pm(sum.EnergyMWh, "%.3f"), pm(sum.CostUSD, "%.2f"), pm(sum.CO2Kg, "%.1f"), pm(sum.RunH, "%.2f"), pm(sum.JTTH, "%.2f"), pm(sum.ActiveNodes, "%.1f"),
			strconv.Itoa(mis), strconv.Itoa(und), strconv.Itoa(joi)})
		if c.GavelRounds() {
			tab.Rows[len(tab.Rows)-1] = append(tab.Rows[len(tab.Rows)-1], strconv.Itoa(drop))
		}
	}
	standIns := []string{scenarioInterference, StandIns()[2], StandIns()[3], StandIns()[4]}
	if c.Deadlines == scenario.DeadlinesNone {
		standIns = slices.DeleteFunc(standIns, func(l string) bool { return strings.HasPrefix(l, "deadlines") })
	}
	res, err := experiment.NewResults(s.Name, env.Version, struct {
		Version  string             `json:"version"`
		Scenario *scenario.Scenario `json:"scenario"`
		Source   string             `json:"jobs"`
		StandIns []string           `json:"stand_ins"`
		Systems  []ScenarioSummary  `json:"systems"`
	}{env.Version, s, src, standIns, sums})
	if err != nil {
		return nil, err
	}
	res.AddNotes(s.Description, "Jobs: "+src)
	res.AddGrid(acct.Where)
	res.AddStandIns(standIns)
	res.AddModelBand(ModelBandNote)
	res.Tables, res.Files["runs.csv"], res.Listing = []report.Table{tab}, report.CSV(rows), "summary.json, runs.csv, report.html"
	return []*experiment.Results{res}, nil
}
