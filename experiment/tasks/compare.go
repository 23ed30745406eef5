package tasks

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// CompareRun is one policy under one setting (a variant) replaying the
// trace on one seed. Seeds differ in how ties between equally scored nodes
// are broken (a seeded order of the nodes by name, cluster.TieRank), which
// is the run-to-run variation a replay has.
type CompareRun struct {
	Policy string
	// Variant names the setting (scenario.BaseVariant: the scenario's own).
	Variant string
	Seed    uint64
	Result  *sim.Result
	// CostUSD and CO2Kg price the run's hourly energy (scenario.Account).
	CostUSD, CO2Kg float64
	// PowerDown: the run powered idle nodes off (its setting's power_down).
	PowerDown bool
	// Measured is what recorded readings did (scenario measured).
	Measured *MeasuredSummary
	// explain is the run's explain.csv rows (--explain; nil otherwise).
	explain *explainLog
	// notes are the Placer's notes (policy.Noter: where a scorer fell back).
	notes []string
	// errs are the power model's error figures per GPU model; powerModel
	// the setting's power_model ("" the default).
	errs       errorOf
	powerModel string
}

// RunCompare replays the scenario's trace under every policy and setting
// (CompareSystems) on every seed (mode replay). Every setting is checked
// before any run.
func RunCompare(env *experiment.Env, s *scenario.Scenario, in *Inputs) ([]*CompareRun, error) {
	if s.Mode != scenario.Replay {
		return nil, fmt.Errorf("scenario %s: compare replays a trace at its recorded times: mode %q, want replay", s.Name, s.Mode)
	}
	sets, err := prepareSettings(env, s, in)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	// The estimate after the checks: the series' coverage bounds the hours
	// it counts.
	if err := EstimateCompare(s, in, env.Workers).Check(env.MaxMemory); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	systems := CompareSystems(s)
	label := func(i int) string {
		sys := systems[i/s.Seeds]
		name := s.Policies[sys.Policy].Name
		if len(sets) > 1 {
			name += " / " + sets[sys.Variant].spec.Name
		}
		return fmt.Sprintf("%s seed %d", name, s.FirstSeed+uint64(i%s.Seeds))
	}
	out, errs := experiment.ShardedRun(env.Shards, len(systems)*s.Seeds, env.Workers, func(i int) (*CompareRun, error) {
		sys := systems[i/s.Seeds]
		st, ps := sets[sys.Variant], &s.Policies[sys.Policy]
		seed := s.FirstSeed + uint64(i%s.Seeds)
		r, err := replayOnce(st.env, st.s, ps, st.in, st.acct, st.rec, seed, st.spec.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", label(i), err)
		}
		return &CompareRun{Policy: ps.Name, Variant: st.spec.Name, Seed: seed, Result: r.res, CostUSD: r.usd, CO2Kg: r.kg,
			PowerDown: st.s.PowerDown != nil, Measured: r.measured, explain: r.explain, notes: r.notes}, nil
	}, env.Progress, label)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// Set here, not in the run, so that runs merged from shards (which
	// carry exported fields only) get them too.
	for i, r := range out {
		if r != nil {
			st := sets[systems[i/s.Seeds].Variant]
			r.errs, r.powerModel = runErrors(st.env.Catalog, st.s.PowerModel), st.s.PowerModel
		}
	}
	return out, nil
}

// compareMetric is one per-run figure of a comparison.
type compareMetric struct {
	key, head, unit, format, definition string
	of                                  func(r *CompareRun) float64
}

// taskTimes are the wait (start - submit) and completion (end - submit)
// times of a run's jobs in seconds: each task of its own, then each gang
// once (sim.GangResult); jobs that never started or ended are left out.
func taskTimes(r *sim.Result) (wait, jct []float64) {
	for _, t := range r.Tasks {
		if t.Gang != "" {
			continue
		}
		if t.Start >= 0 {
			wait = append(wait, (t.Start - t.Submit).Seconds())
		}
		if t.End >= 0 {
			jct = append(jct, (t.End - t.Submit).Seconds())
		}
	}
	for _, g := range r.Gangs {
		if g.Start >= 0 {
			wait = append(wait, (g.Start - g.Submit).Seconds())
		}
		if g.End >= 0 {
			jct = append(jct, (g.End - g.Submit).Seconds())
		}
	}
	return wait, jct
}

// quantile is the q-quantile of xs (sorted here; NaN for none).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return stat.Quantile(q, stat.Empirical, s, nil)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stat.Mean(xs, nil)
}

var compareMetrics = []compareMetric{
	{"energy_kwh", "energy kWh", "kWh", "%.1f", "CPU and GPU energy of every node over the run, from the catalog's power model: a GPU model with a measured curve draws the curve's power at its allocated share, any other busy GPU or CPU socket its TDP and an idle one its idle power (the PWR model); a powered-off node draws its off power",
		func(r *CompareRun) float64 { return (r.Result.CPUEnergy + r.Result.GPUEnergy).KWh() }},
	{"idle_kwh", "idle kWh", "kWh", "%.1f", "the part of the energy the nodes would draw with nothing allocated",
		func(r *CompareRun) float64 { return r.Result.IdleEnergy.KWh() }},
	{"cost_usd", "cost USD", "USD", "%.2f", "the energy of each hour times that hour's wholesale electricity price (the scenario's grid; see the note above)",
		func(r *CompareRun) float64 { return r.CostUSD }},
	{"co2_kg", "CO2 kg", "kg", "%.1f", "the energy of each hour times that hour's grid carbon intensity (kg CO2-equivalent)",
		func(r *CompareRun) float64 { return r.CO2Kg }},
	{"mean_wait_s", "mean wait s", "s", "%.1f", "wait: time from a task's submission to its start, averaged over the tasks that started",
		func(r *CompareRun) float64 { w, _ := taskTimes(r.Result); return mean(w) }},
	{"p90_wait_s", "p90 wait s", "s", "%.1f", "the wait that 90% of started tasks do not exceed",
		func(r *CompareRun) float64 { w, _ := taskTimes(r.Result); return quantile(w, 0.9) }},
	{"mean_jct_s", "mean JCT s", "s", "%.0f", "job completion time (JCT): time from a task's submission to its end, averaged over the tasks that ended",
		func(r *CompareRun) float64 { _, j := taskTimes(r.Result); return mean(j) }},
	{"p90_jct_s", "p90 JCT s", "s", "%.0f", "the JCT that 90% of ended tasks do not exceed",
		func(r *CompareRun) float64 { _, j := taskTimes(r.Result); return quantile(j, 0.9) }},
	{"peak_kw", "peak kW", "kW", "%.1f", "the highest estimated cluster power after any event",
		func(r *CompareRun) float64 {
			var p float64
			for _, s := range r.Result.Samples {
				p = max(p, float64(s.CPUW+s.GPUW))
			}
			return p / 1000
		}},
	{"makespan_h", "makespan h", "h", "%.2f", "time from the start of the trace to the last event",
		func(r *CompareRun) float64 { return float64(r.Result.End) / 3.6e6 }},
	{"never_started", "never started", "tasks", "%.0f", "tasks that never found room before the trace ended",
		func(r *CompareRun) float64 {
			n := 0
			for _, t := range r.Result.Tasks {
				if t.Start < 0 {
					n++
				}
			}
			return float64(n)
		}},
}

// measuredMetric joins compareMetrics when the scenario replays measured
// power.
var measuredMetric = compareMetric{"measured_readings", "measured readings", "", "%.0f",
	"how often the power gate counted a fresh recorded reading for a node (each node once per decision); otherwise it counted the node's estimate (summary.json gives why)",
	func(r *CompareRun) float64 { return float64(r.Measured.Measured) }}

// powerDownMetrics join compareMetrics when a setting powers idle nodes
// off (zero for a run that does not).
var powerDownMetrics = []compareMetric{
	{"off_node_h", "node-hours off", "h", "%.0f", "node-hours that nodes spent powered off (power_down)",
		func(r *CompareRun) float64 { return r.Result.OffNodeSeconds / 3600 }},
	{"power_offs", "power-offs", "", "%.0f", "how often a node that stayed empty for power_down.idle_after_s was powered off",
		func(r *CompareRun) float64 { return float64(r.Result.PowerOffs) }},
	{"wakes", "wakes", "", "%.0f", "how often a powered-off node was woken for a task that fit on no powered node",
		func(r *CompareRun) float64 { return float64(r.Result.Wakes) }},
}

// CompareSummary is one system's figures over the seeds: a policy under
// one setting.
type CompareSummary struct {
	Policy string `json:"policy"`
	// Variant names the setting (scenario.BaseVariant: the scenario's own).
	Variant string                       `json:"variant"`
	Metrics map[string]experiment.MeanCI `json:"metrics"`
	// EnergyVsBaseline is the per-seed paired relative energy difference
	// to the first system, the reference (negative: less energy).
	EnergyVsBaseline experiment.MeanCI `json:"energy_vs_first_policy"`
	// EnergyByBlock is the same difference's interval over parts of the
	// trace (nil: the trace is too short for blocks).
	EnergyByBlock *BlockCI `json:"energy_vs_reference_by_block,omitempty"`
	// Verdict is what the interval says against the threshold.
	Verdict Verdict `json:"verdict"`
	// Wait and JCT quantiles over every task of every seed (s).
	WaitQuantiles map[string]experiment.Num `json:"wait_quantiles_s"`
	JCTQuantiles  map[string]experiment.Num `json:"jct_quantiles_s"`
	// Measured sums the seeds' lookups of recorded readings (scenario
	// measured).
	Measured *MeasuredSummary `json:"measured,omitempty"`
	// ByGPUModel is what each GPU model's nodes carried, the mean over
	// the seeds (gpu_models.csv has each seed).
	ByGPUModel []ModelUsage `json:"by_gpu_model"`
	// EnergyModelBandKWh is the power model's error band of the mean
	// energy (a half-width, kWh): the sum over GPU models of the mean
	// busy-GPU energy times the model's measured p95 relative error
	// (ByGPUModel). It is not the seed interval (Metrics' lo and hi).
	EnergyModelBandKWh experiment.Num `json:"energy_kwh_model_band"`
	// GPUBusyKWh is the mean energy of busy GPUs, the part the band is
	// over.
	GPUBusyKWh experiment.Num `json:"gpu_busy_kwh"`
	// ModelError judges the difference to the reference against what the
	// power model's error could produce (nil for the reference).
	ModelError *ModelErrorVerdict `json:"energy_vs_first_policy_model_error,omitempty"`
	// Domains is each power domain's estimated power under the setting's
	// topology (nil: none): each figure the mean over the seeds, but
	// peak_w the highest of the seeds' peaks (domains.csv has each seed).
	Domains []DomainReport `json:"domains,omitempty"`
}

// Power model verdicts (ModelErrorVerdict.Verdict).
const (
	WithinModelError = "within the power model's error"
	BeyondModelError = "beyond the power model's error"
)

// modelVerdict is WithinModelError when |diff| <= bound, else
// BeyondModelError: the one rule for every figure set against the power
// model's error.
func modelVerdict(diff, bound float64) string {
	if math.Abs(diff) <= bound {
		return WithinModelError
	}
	return BeyondModelError
}

// ModelErrorVerdict is a system's energy difference to the reference set
// against the bound on the power model's error of that difference.
type ModelErrorVerdict struct {
	// DiffKWh is the mean energy less the reference's mean energy.
	DiffKWh experiment.Num `json:"diff_kwh"`
	// BoundKWh bounds the power model's error of the difference: with the
	// same power model, sum over GPU models of |busy-GPU kWh - the
	// reference's| x p95 relative error (a common relative error scales
	// both and cancels); with different models, the sum of both bands.
	BoundKWh       experiment.Num `json:"bound_kwh"`
	SamePowerModel bool           `json:"same_power_model"`
	// Verdict is WithinModelError when |DiffKWh| <= BoundKWh, else
	// BeyondModelError.
	Verdict string `json:"verdict"`
}

// judgeModelError sets x's difference to ref against the power model's
// error bound (diffBound); same says both are priced by one power model.
func judgeModelError(x, ref CompareSummary, same bool) *ModelErrorVerdict {
	a, ea := usageErrors(x.ByGPUModel)
	b, eb := usageErrors(ref.ByGPUModel)
	v := &ModelErrorVerdict{DiffKWh: x.Metrics["energy_kwh"].Mean - ref.Metrics["energy_kwh"].Mean,
		BoundKWh: experiment.Num(diffBound(a, b, ea, eb, same)), SamePowerModel: same}
	v.Verdict = modelVerdict(float64(v.DiffKWh), float64(v.BoundKWh))
	return v
}

// cell is the verdict in the comparison table.
func (v *ModelErrorVerdict) cell() string {
	if v == nil {
		return "-"
	}
	w := "within"
	if v.Verdict == BeyondModelError {
		w = "beyond"
	}
	return fmt.Sprintf("%s (%+.1f kWh, bound %.1f)", w, float64(v.DiffKWh), float64(v.BoundKWh))
}

// label names the system in text: the policy, and the setting when the
// comparison has several.
func (x CompareSummary) label(settings int) string {
	if settings > 1 {
		return x.Policy + " / " + x.Variant
	}
	return x.Policy
}

var quantiles = []struct {
	name string
	q    float64
}{{"p10", 0.1}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}

// CompareOptions are compare's settings beside the scenario.
type CompareOptions struct {
	// Equivalence is the practical-equivalence threshold, a fraction of
	// the reference's energy (0: DefaultEquivalence).
	Equivalence float64
	// CatalogFile is --catalog's file ("" none), recorded in the results.
	CatalogFile string
}

// CompareResults renders a comparison: summary.json, runs.csv (one row per
// system and seed), a table of means with 95% intervals and verdicts, wait
// and JCT quantiles, their distributions and the power over time as step
// plots, the settings and hardware models used, metric definitions, and a
// plain-language summary at the top of report.html.
func CompareResults(version string, env *experiment.Env, s *scenario.Scenario, in *Inputs, runs []*CompareRun, opt CompareOptions) (*experiment.Results, error) {
	if opt.Equivalence == 0 {
		opt.Equivalence = DefaultEquivalence
	}
	sets, err := settingCatalogs(env, s, in)
	if err != nil {
		return nil, err
	}
	systems := CompareSystems(s)
	anyPD := false
	for _, r := range runs {
		anyPD = anyPD || r.PowerDown
	}
	metrics := slices.Clone(compareMetrics)
	if anyPD {
		metrics = append(metrics, powerDownMetrics...)
	}
	if s.Measured != nil {
		metrics = append(metrics, measuredMetric)
	}
	if len(runs) > 0 && runs[0].Result.Gangs != nil {
		metrics = append(metrics, gangMetrics...)
	}
	type key struct{ v, p string }
	bySystem := map[key][]*CompareRun{}
	for _, r := range runs {
		k := key{r.Variant, r.Policy}
		bySystem[k] = append(bySystem[k], r)
	}
	multi := len(sets) > 1
	first := systems[0]
	base := bySystem[key{sets[first.Variant].spec.Name, s.Policies[first.Policy].Name}]
	refName := s.Policies[first.Policy].Name
	if multi {
		refName += " / " + sets[first.Variant].spec.Name
	}
	lead := []string{"policy"}
	if multi {
		lead = append(lead, "variant")
	}
	csvRows := [][]string{append(slices.Clone(lead), "seed")}
	for _, m := range metrics {
		csvRows[0] = append(csvRows[0], m.key)
	}
	var sums []CompareSummary
	// The verdict and the energy against the reference come right after
	// the system's name, so that they are in view however many figures
	// follow (report.html at 1,400 px, a terminal).
	means := report.Table{Title: fmt.Sprintf("Comparison over %d seeds: mean [95%% confidence interval]", s.Seeds), Head: append(slices.Clone(lead), "verdict", "energy vs "+refName, "vs power model's error")}
	for _, m := range metrics {
		means.Head = append(means.Head, m.head)
		if m.key == "energy_kwh" {
			means.Head = append(means.Head, "power model ± kWh")
		}
	}
	csvRows[0] = append(csvRows[0], "gpu_busy_kwh", "energy_kwh_model_band")
	dist := report.Table{Title: "Wait and completion time distributions over all tasks and seeds (s)", Head: slices.Clone(lead)}
	for _, q := range quantiles {
		dist.Head = append(dist.Head, "wait "+q.name)
	}
	for _, q := range quantiles {
		dist.Head = append(dist.Head, "JCT "+q.name)
	}
	var refPowerModel string
	if len(base) > 0 {
		refPowerModel = powerModelName(base[0].powerModel)
	}
	var baseHourly [][]hw.Joules
	for _, r := range base {
		baseHourly = append(baseHourly, r.Result.Hourly)
	}
	var cdf, jcdf, powerLines []report.Series
	modelRows := [][]string{append(append(slices.Clone(lead), "seed"), modelHead...)}
	mt := modelTable(fmt.Sprintf("Per GPU model, mean over %d seeds (pods started, GPU-hours, energy busy and idle, completion times of the pods that ended there)", s.Seeds), lead)
	domRows := [][]string{append(append(slices.Clone(lead), "seed"), domainHead...)}
	dt := domainTable(fmt.Sprintf("mean over %d seeds, peak the highest; time above each setting's report_above of each limit", s.Seeds), lead)
	for _, sys := range systems {
		ps, vs := s.Policies[sys.Policy], sets[sys.Variant].spec
		rs := bySystem[key{vs.Name, ps.Name}]
		sum := CompareSummary{Policy: ps.Name, Variant: vs.Name, Metrics: map[string]experiment.MeanCI{}, WaitQuantiles: map[string]experiment.Num{}, JCTQuantiles: map[string]experiment.Num{}}
		name := sum.label(len(sets))
		row := []string{ps.Name}
		if multi {
			row = append(row, vs.Name)
		}
		var cells []string // the metrics' cells, after the verdict's
		for _, m := range metrics {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, m.of(r))
			}
			c := experiment.PositiveCI95(xs)
			sum.Metrics[m.key] = c
			cells = append(cells, c.Format(m.format))
			if m.key == "energy_kwh" {
				cells = append(cells, "") // the band, below
			}
		}
		usage := make([][]ModelUsage, len(rs))
		for i, r := range rs {
			usage[i] = modelUsage(in.Nodes, in.Pods, r.Result, r.errs)
		}
		sum.ByGPUModel = meanUsage(usage)
		sum.EnergyModelBandKWh = usageBand(sum.ByGPUModel)
		for _, u := range sum.ByGPUModel {
			sum.GPUBusyKWh += u.GPUBusyKWh
		}
		// The band's cell follows the energy's (metrics[0], energy_kwh).
		cells[1] = fmt.Sprintf("%.1f", float64(sum.EnergyModelBandKWh))
		modelCell := "-"
		if len(sums) > 0 {
			sum.ModelError = judgeModelError(sum, sums[0], len(rs) > 0 && powerModelName(rs[0].powerModel) == refPowerModel)
			modelCell = sum.ModelError.cell()
		}
		var xs, bs []float64
		var hourly [][]hw.Joules
		for i, r := range rs {
			xs, bs = append(xs, metrics[0].of(r)), append(bs, metrics[0].of(base[i]))
			hourly = append(hourly, r.Result.Hourly)
		}
		sum.EnergyVsBaseline = experiment.RatioCI95(xs, bs)
		sum.EnergyByBlock = blockInterval(hourly, baseHourly)
		lo, hi, _ := sum.interval()
		sum.Verdict = judge(lo, hi, opt.Equivalence)
		cell := pctCI(sum.EnergyVsBaseline)
		if b := sum.EnergyByBlock; b != nil {
			cell += fmt.Sprintf("; by %s [%+.1f%%, %+.1f%%]", b.Block, 100*float64(b.Lo), 100*float64(b.Hi))
		}
		verdict := string(sum.Verdict)
		if len(sums) == 0 {
			cell, verdict = "reference", "-"
		}
		row = append(append(row, verdict, cell, modelCell), cells...)
		means.Rows = append(means.Rows, row)
		for _, r := range rs {
			sum.Measured = sum.Measured.add(r.Measured)
		}
		for i, r := range rs {
			for _, x := range usage[i] {
				modelRows = append(modelRows, append(append(slices.Clone(row[:len(lead)]), strconv.FormatUint(r.Seed, 10)), modelCSVRow(x)...))
			}
		}
		for _, x := range sum.ByGPUModel {
			mt.Rows = append(mt.Rows, modelTableRow(row[:len(lead)], x, "%.1f"))
		}
		per := make([][]DomainReport, len(rs))
		for i, r := range rs {
			per[i] = domainReports(r.Result.Domains, sets[sys.Variant].s.Topology.Above())
			for _, d := range per[i] {
				domRows = append(domRows, domainRow(append(slices.Clone(row[:len(lead)]), strconv.FormatUint(r.Seed, 10)), d))
			}
		}
		sum.Domains = meanDomains(per)
		for _, d := range sum.Domains {
			dt.Rows = append(dt.Rows, domainTableRow(row[:len(lead)], d))
		}
		var wait, jct []float64
		for i, r := range rs {
			w, j := taskTimes(r.Result)
			wait, jct = append(wait, w...), append(jct, j...)
			line := []string{ps.Name}
			if multi {
				line = append(line, vs.Name)
			}
			line = append(line, strconv.FormatUint(r.Seed, 10))
			for _, m := range metrics {
				line = append(line, report.F(m.of(r)))
			}
			var gb experiment.Num
			for _, u := range usage[i] {
				gb += u.GPUBusyKWh
			}
			line = append(line, report.F(float64(gb)), report.F(float64(usageBand(usage[i]))))
			csvRows = append(csvRows, line)
		}
		drow := slices.Clone(row[:len(lead)])
		for _, q := range quantiles {
			v := quantile(wait, q.q)
			sum.WaitQuantiles[q.name] = experiment.Num(v)
			drow = append(drow, fmt.Sprintf("%.1f", v))
		}
		for _, q := range quantiles {
			v := quantile(jct, q.q)
			sum.JCTQuantiles[q.name] = experiment.Num(v)
			drow = append(drow, fmt.Sprintf("%.0f", v))
		}
		dist.Rows = append(dist.Rows, drow)
		sums = append(sums, sum)
		cdf = append(cdf, cdfSeries(name, wait))
		jcdf = append(jcdf, cdfSeries(name, jct))
		powerLines = append(powerLines, hourlyPowerSeries(name, rs))
	}
	defs := report.Table{Title: "What each figure means", Head: []string{"figure", "definition"}}
	for _, m := range metrics {
		defs.Rows = append(defs.Rows, []string{m.head, m.definition})
	}
	thr := 100 * opt.Equivalence
	defs.Rows = append(defs.Rows,
		[]string{"energy vs " + refName, fmt.Sprintf("per seed, this system's energy divided by the reference's (%s, the first row) on the same seed; the geometric mean of these ratios minus 1, and its 95%% interval over the seeds taken on the log of the ratios (Student's t on log ratio, turned back into a relative difference), which cannot pass -100%%", refName)},
		[]string{"by week / by day [lo, hi]", fmt.Sprintf("the same difference over parts of the trace: the span cut into weeks (into days when it holds fewer than %d weeks; none when it holds fewer than %d days), each block's energy averaged over the seeds, the blocks resampled with replacement %d times (block bootstrap) and the ratio of the totals minus 1 taken each time; the 2.5th and 97.5th percentiles. It shows how the difference varies with the workload, which the seeds (tie-breaking only) do not", minBlocks, minBlocks, bootstrapDraws)},
		[]string{"verdict", fmt.Sprintf("equivalence threshold %g%% of the reference's energy (--equivalence). The interval judged is the hull of the seeds' interval and the block interval (a verdict must hold for both), either alone when the other is missing. 'no meaningful difference': the whole interval lies within -%g%%..+%g%%; 'less energy' / 'more energy': the whole interval lies below -%g%% / above +%g%%; 'inconclusive': anything else (the interval straddles a threshold, or there is no interval)", thr, thr, thr, thr, thr)},
		[]string{"power model ± kWh", "the power model's error band of the mean energy, not a seed interval: the sum over GPU models of the mean energy of busy GPUs (any allocation; the part the model's busy term prices) times the model's measured 95th-percentile relative error on that GPU model (wattsched validate power, docs/power-models.md; a GPU model without a measurement of its own takes the figure pooled over the measured ones). CPU and idle energy carry no band: no public measurement checks them"},
		[]string{"vs power model's error", "the difference of the mean energy to the reference's against a bound on what the power model's error could produce: with both priced by the same power model, the sum over GPU models of |busy-GPU kWh - the reference's| times that model's p95 relative error (a common relative error scales both and cancels); with different power models, the sum of both bands. 'within': |difference| <= bound; 'beyond': larger"},
		[]string{"[lo, hi]", fmt.Sprintf("95%% confidence interval of the mean over the %d seeds, on the log scale because every figure here is positive: mean x exp(±t(0.975, n-1) x standard error / mean), Student's t on the log of the mean (delta method); it cannot reach zero and is close to the plain t-interval where the seeds agree; the seeds differ only in how ties between equally scored nodes are broken, so the interval measures that sensitivity, not the variation between traces", s.Seeds)})
	extendCDFs(cdf)
	extendCDFs(jcdf)
	wp := report.LinePlot{Title: "Wait time distribution (all seeds)", XLabel: "wait (s)", YLabel: "share of started tasks", Series: cdf, Steps: true}
	wp.YMin, wp.YMax = cdfRange(cdf)
	cdfSVG, err := wp.SVG()
	if err != nil {
		return nil, err
	}
	jp := report.LinePlot{Title: "Completion time distribution (all seeds)", XLabel: "JCT (s, log scale)", YLabel: "share of ended tasks", Series: jcdf, Steps: true, LogX: true}
	jp.YMin, jp.YMax = cdfRange(jcdf)
	jctSVG, err := jp.SVG()
	if err != nil {
		return nil, err
	}
	bars, err := compareBars(s, sums, len(sets))
	if err != nil {
		return nil, err
	}
	powSVG, err := report.LinePlot{Title: fmt.Sprintf("Hourly average cluster power (mean over %d seeds)", s.Seeds), XLabel: "time (h)", YLabel: "power (kW)", Series: powerLines, Steps: true}.SVG()
	if err != nil {
		return nil, err
	}
	summary := compareSentence(s, in, sums, len(sets), opt.Equivalence)
	models, err := modelsUsed(sets)
	if err != nil {
		return nil, err
	}
	settingsT, hwT := settingsTable(sets, opt.CatalogFile), modelsTable(models)
	var variants []scenario.VariantSpec
	for _, st := range sets {
		variants = append(variants, st.spec)
	}
	res, err := experiment.NewResults(s.Name, version, struct {
		Version     string                 `json:"version"`
		Scenario    *scenario.Scenario     `json:"scenario"`
		Source      string                 `json:"data_source"`
		Summary     string                 `json:"summary"`
		JobSpeed    string                 `json:"job_speed"`
		Equivalence experiment.Num         `json:"equivalence_threshold"`
		CatalogFile string                 `json:"catalog_file,omitempty"`
		Settings    []scenario.VariantSpec `json:"settings"`
		Models      []ModelUsed            `json:"models_used"`
		NeverStart  *NeverStart            `json:"never_start,omitempty"`
		Policies    []CompareSummary       `json:"policies"`
	}{version, s, in.Source, summary, in.JobSpeed, experiment.Num(opt.Equivalence), opt.CatalogFile, variants, models, in.NeverStart, sums})
	if err != nil {
		return nil, err
	}
	res.Title = "wattsched compare: " + s.Name
	res.Head = []string{summary, ""}
	res.AddNotes(summary, s.Description)
	if err := addReplayNotes(res, s, in); err != nil {
		return nil, err
	}
	if few := experiment.FewSeedsNote(s.Seeds); few != "" {
		res.AddNotes("Warning: " + few + ".")
		res.Tail = append(res.Tail, "warning: "+few)
	}
	res.Tables = []report.Table{means, dist, mt}
	for _, r := range runs {
		addPolicyNotes(res, r.Policy, r.notes)
	}
	if multi || opt.CatalogFile != "" {
		res.Tables = append(res.Tables, settingsT)
	}
	res.Tables = append(res.Tables, hwT, defs)
	res.Figures = []experiment.Figure{
		{File: "totals.svg", Caption: fmt.Sprintf("Each policy's energy, cost and CO2: bars the mean over the %d seeds, whiskers the 95%% confidence interval of that mean on the log scale (as the table's)", s.Seeds), SVG: bars},
		{File: "wait_cdf.svg", Caption: "Share of started tasks that waited at most x seconds, all seeds; every line runs to the longest wait of any system (a system whose tasks never waited is the line at 1 from 0); systems with the same distribution share one line, labelled with each name", SVG: cdfSVG},
		{File: "jct_cdf.svg", Caption: "Share of ended tasks that completed (submission to end) within x seconds, all seeds, on a log scale of x; lines as in the wait distribution", SVG: jctSVG},
		{File: "power.svg", Caption: fmt.Sprintf("Estimated cluster power averaged over each hour (CPU and GPU energy of the hour / its length; the last hour over the part the run covers): the line is the mean over the %d seeds, the shaded band its 95%% confidence interval on the log scale (as the table's)", s.Seeds), SVG: powSVG},
	}
	res.Files["runs.csv"], res.Files[GPUModelsFile] = report.CSV(csvRows), report.CSV(modelRows)
	res.Listing = "summary.json, runs.csv, " + GPUModelsFile + ", totals.svg, wait_cdf.svg, jct_cdf.svg, power.svg, report.html"
	if len(dt.Rows) > 0 {
		res.Tables = slices.Insert(res.Tables, 3, dt)
		res.Files[DomainsFile] = report.CSV(domRows)
		res.Listing = "summary.json, runs.csv, " + GPUModelsFile + ", " + DomainsFile + ", totals.svg, wait_cdf.svg, jct_cdf.svg, power.svg, report.html"
	}
	// --explain (explain.go)
	var xls []*explainLog
	for _, r := range runs {
		xls = append(xls, r.explain)
	}
	addExplain(res, s, xls, true)
	return res, nil
}

// compareBars draws each policy's energy, cost and CO2 with their 95%
// intervals over the seeds.
func compareBars(s *scenario.Scenario, sums []CompareSummary, settings int) ([]byte, error) {
	bp := report.BarPlot{Title: fmt.Sprintf("Energy, cost and CO2 (mean and 95%% interval over %d seeds)", s.Seeds),
		Panels: []report.BarPanel{{Label: "energy (kWh)", Format: "%.1f"}, {Label: "cost (USD)", Format: "%.2f"}, {Label: "CO2 (kg)", Format: "%.1f"}}}
	for _, x := range sums {
		bp.Names = append(bp.Names, x.label(settings))
		for k, key := range []string{"energy_kwh", "cost_usd", "co2_kg"} {
			m := x.Metrics[key]
			bp.Panels[k].Bars = append(bp.Panels[k].Bars, report.Bar{Value: float64(m.Mean), Lo: float64(m.Lo), Hi: float64(m.Hi)})
		}
	}
	return bp.SVG()
}

func pctCI(m experiment.MeanCI) string {
	if math.IsNaN(float64(m.Mean)) {
		return "-"
	}
	s := fmt.Sprintf("%+.1f%%", 100*float64(m.Mean))
	if !math.IsNaN(float64(m.Lo)) {
		s += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100*float64(m.Lo), 100*float64(m.Hi))
	}
	return s
}

// cdfRange is the y range of distribution lines: from a little below the
// lowest share any line starts at to a little above 1, so that a line at
// 1 (every task within its first value) is drawn inside the frame rather
// than on it; 0 to 1.04 when every line starts at 1.
func cdfRange(lines []report.Series) (lo, hi float64) {
	lo = 1.0
	for _, l := range lines {
		if len(l.Y) > 0 {
			lo = min(lo, l.Y[0])
		}
	}
	if lo >= 1 {
		lo = 0
	}
	return max(0, lo-0.02*(1-lo)), 1 + 0.04*(1-lo)
}

// extendCDFs runs every distribution line to the largest value of any
// (and a line of one value, every task equal, at least to 1), so that a
// distribution that reaches 1 early is still drawn as a line there.
func extendCDFs(lines []report.Series) {
	end := 0.0
	for _, l := range lines {
		if n := len(l.X); n > 0 {
			end = max(end, l.X[n-1])
		}
	}
	for i := range lines {
		l := &lines[i]
		n := len(l.X)
		if n == 0 {
			continue
		}
		e := end
		if e <= l.X[n-1] {
			if n > 1 {
				continue
			}
			e = l.X[0] + max(1, math.Abs(l.X[0]))
		}
		l.X, l.Y = append(l.X, e), append(l.Y, l.Y[n-1])
	}
}

// cdfSeries is the empirical distribution of xs as a step line.
func cdfSeries(name string, xs []float64) report.Series {
	s := slices.Clone(xs)
	slices.Sort(s)
	line := report.Series{Name: name}
	for i, x := range s {
		if i+1 < len(s) && s[i+1] == x {
			continue
		}
		line.X = append(line.X, x)
		line.Y = append(line.Y, float64(i+1)/float64(len(s)))
	}
	return line
}

// hourlyPowerSeries is a policy's average power in each hour of its runs
// (kW: the hour's energy over the part of the hour the run covers), the
// mean over the seeds that reach that hour with its 95% interval as the
// band; a step line, with a last point at the end of the last hour.
func hourlyPowerSeries(name string, runs []*CompareRun) report.Series {
	line := report.Series{Name: name}
	hours := 0
	for _, r := range runs {
		hours = max(hours, len(r.Result.Hourly))
	}
	for h := 0; h < hours; h++ {
		var xs []float64
		for _, r := range runs {
			if h >= len(r.Result.Hourly) {
				continue
			}
			covered := min(3.6e6, float64(r.Result.End)-float64(h)*3.6e6) // ms of hour h in the run
			if covered <= 0 {
				continue
			}
			xs = append(xs, float64(r.Result.Hourly[h])/(covered/1000)/1000)
		}
		if len(xs) == 0 {
			continue
		}
		c := experiment.PositiveCI95(xs)
		line.X = append(line.X, float64(h))
		line.Y = append(line.Y, float64(c.Mean))
		line.Lo = append(line.Lo, float64(c.Lo))
		line.Hi = append(line.Hi, float64(c.Hi))
	}
	if n := len(line.X); n > 0 {
		line.X = append(line.X, line.X[n-1]+1)
		line.Y, line.Lo, line.Hi = append(line.Y, line.Y[n-1]), append(line.Lo, line.Lo[n-1]), append(line.Hi, line.Hi[n-1])
	}
	return line
}

// idleDominates is the share of the reference's energy drawn idle above
// which the summary says what power-down would change.
const idleDominates = 0.5

// compareSentence says in one paragraph what the comparison found: the
// verdict on the system with the least energy against the reference
// (the first row), the largest lever measured (a policy or a setting),
// the share of energy drawn idle and, where idle dominates, what
// power-down changed; then cost, carbon, waits and completion times with
// the reference's values labelled.
func compareSentence(s *scenario.Scenario, in *Inputs, sums []CompareSummary, settings int, thr float64) string {
	gpus := 0
	for _, n := range in.Nodes {
		gpus += n.GPUs
	}
	var span job.Time
	for _, t := range in.Pods {
		span = max(span, t.Submit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "On %d nodes with %d GPUs, replaying %d tasks submitted over %.1f h, %s per system", len(in.Nodes), gpus, len(in.Pods), span.Seconds()/3600, plural(s.Seeds, "seed"))
	if settings > 1 {
		fmt.Fprintf(&b, " (%d policies under %d settings)", len(s.Policies), settings)
	}
	b.WriteString(": ")
	e := func(x CompareSummary) float64 { return float64(x.Metrics["energy_kwh"].Mean) }
	ref := sums[0]
	refName := ref.label(settings)
	best := 0
	for i, x := range sums {
		if e(x) < e(sums[best]) {
			best = i
		}
	}
	top := sums[best]
	// rel is a system's energy against the reference's, as the kWh shown.
	rel := func(x CompareSummary) float64 { return e(x)/e(ref) - 1 }
	iv := func(x CompareSummary) string {
		lo, hi, what := x.interval()
		if math.IsNaN(lo) {
			return "one seed and a trace too short for blocks: no interval"
		}
		return fmt.Sprintf("the %s of the difference is %+.1f%% to %+.1f%%", what, 100*lo, 100*hi)
	}
	equal := len(sums) > 1
	for _, x := range sums[1:] {
		equal = equal && x.Verdict == Equivalent
	}
	switch {
	case len(sums) == 1:
		fmt.Fprintf(&b, "%s used %.1f kWh.", refName, e(ref))
	case equal:
		far := sums[1]
		for _, x := range sums[1:] {
			if math.Abs(rel(x)) > math.Abs(rel(far)) {
				far = x
			}
		}
		fmt.Fprintf(&b, "no meaningful difference in energy: every system is within the equivalence threshold of ±%g%% of the reference %s (%.1f kWh); the farthest, %s (%.1f kWh, %+.2f%%): %s.",
			100*thr, refName, e(ref), far.label(settings), e(far), 100*rel(far), iv(far))
	case best == 0:
		near := sums[1]
		for _, x := range sums[1:] {
			if e(x) < e(near) {
				near = x
			}
		}
		fmt.Fprintf(&b, "the reference, %s, used the least energy (%.1f kWh); the next, %s, used %.1f kWh (%+.1f%%): %s; verdict against the equivalence threshold of ±%g%%: %s.",
			refName, e(ref), near.label(settings), e(near), 100*rel(near), iv(near), 100*thr, near.Verdict)
	case top.Verdict == Equivalent:
		fmt.Fprintf(&b, "%s used the least energy, %.1f kWh, %+.2f%% against the reference %s (%.1f kWh), but %s, within the equivalence threshold of ±%g%%: no meaningful difference.",
			top.label(settings), e(top), 100*rel(top), refName, e(ref), iv(top), 100*thr)
	case top.Verdict == Less:
		fmt.Fprintf(&b, "%s used the least energy, %.1f kWh, %.1f%% less than the reference %s (%.1f kWh); %s, wholly beyond the equivalence threshold of %g%%: a meaningful difference.",
			top.label(settings), e(top), -100*rel(top), refName, e(ref), iv(top), 100*thr)
	default:
		fmt.Fprintf(&b, "%s used the least energy, %.1f kWh, %.1f%% less than the reference %s (%.1f kWh); %s, which straddles the equivalence threshold of ±%g%%: inconclusive.",
			top.label(settings), e(top), -100*rel(top), refName, e(ref), iv(top), 100*thr)
	}
	lever(&b, s, sums, settings)
	modelErrorSentence(&b, sums, best, settings)
	if idle := float64(ref.Metrics["idle_kwh"].Mean) / e(ref); !math.IsNaN(idle) {
		fmt.Fprintf(&b, " %.0f%% of the reference's energy was drawn idle (what the powered nodes draw with nothing allocated)", 100*idle)
		if idle > idleDominates {
			switch pd := powerDownOf(s, sums, ref); {
			case pd != nil:
				fmt.Fprintf(&b, "; idle dominates: %s", pd.what)
			case s.WithVariant(s.CompareVariants()[0]).PowerDown != nil && ref.Variant == scenario.BaseVariant:
				p := s.PowerDown
				fmt.Fprintf(&b, "; idle dominates although the reference powers idle nodes off (power_down: idle_after_s %g, wake_s %g): a variant with a shorter idle_after_s would show what more powering off can save", p.IdleAfterS, p.WakeS)
			case s.Measured != nil:
				b.WriteString("; idle dominates (no power-down variant runs with measured power: the recording was made with every node on)")
			default:
				b.WriteString("; idle dominates")
			}
		}
		b.WriteString(".")
	}
	c := func(x CompareSummary) float64 { return float64(x.Metrics["cost_usd"].Mean) }
	k := func(x CompareSummary) float64 { return float64(x.Metrics["co2_kg"].Mean) }
	w := func(x CompareSummary) float64 { return float64(x.Metrics["mean_wait_s"].Mean) }
	j := func(x CompareSummary) float64 { return float64(x.Metrics["mean_jct_s"].Mean) }
	// A mean over no task (none started or ended) is "-", not NaN.
	sec := func(f string, v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf(f+" s", v)
	}
	if best != 0 {
		fmt.Fprintf(&b, " %s cost %.2f USD and emitted %.1f kg CO2eq (reference %s: %.2f USD, %.1f kg); its tasks waited %s on average (reference: %s) and completed in %s (reference: %s).",
			top.label(settings), c(top), k(top), refName, c(ref), k(ref), sec("%.1f", w(top)), sec("%.1f", w(ref)), sec("%.0f", j(top)), sec("%.0f", j(ref)))
	} else {
		fmt.Fprintf(&b, " It cost %.2f USD and emitted %.1f kg CO2eq; its tasks waited %s on average and completed in %s.",
			c(ref), k(ref), sec("%.1f", w(ref)), sec("%.0f", j(ref)))
	}
	return b.String()
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// lever names the largest change of energy measured against the
// reference: a policy under the reference's setting, or a setting with
// the reference's policy.
func lever(b *strings.Builder, s *scenario.Scenario, sums []CompareSummary, settings int) {
	if len(sums) < 2 {
		return
	}
	ref := sums[0]
	// rel is a system's energy against the reference's, as the kWh shown.
	rel := func(x *CompareSummary) float64 {
		return float64(x.Metrics["energy_kwh"].Mean)/float64(ref.Metrics["energy_kwh"].Mean) - 1
	}
	var pol, set *CompareSummary
	for i := range sums[1:] {
		x := &sums[i+1]
		d := math.Abs(rel(x))
		switch {
		case x.Variant == ref.Variant && (pol == nil || d > math.Abs(rel(pol))):
			pol = x
		case x.Policy == ref.Policy && x.Variant != ref.Variant && (set == nil || d > math.Abs(rel(set))):
			set = x
		}
	}
	say := func(x *CompareSummary, kind, name string) string {
		return fmt.Sprintf("%s %s (%+.1f%% energy, %s)", kind, name, 100*rel(x), x.Verdict)
	}
	switch {
	case pol != nil && set != nil:
		p, v := say(pol, "the policy", pol.Policy), say(set, "the setting", set.Variant)
		if math.Abs(rel(set)) > math.Abs(rel(pol)) {
			fmt.Fprintf(b, " The largest lever measured is %s; the largest change of policy is %s.", v, p)
		} else {
			fmt.Fprintf(b, " The largest lever measured is %s; the largest change of setting is %s.", p, v)
		}
	case pol != nil:
		fmt.Fprintf(b, " The largest lever measured is %s.", say(pol, "the policy", pol.Policy))
	case set != nil:
		fmt.Fprintf(b, " The largest lever measured is %s.", say(set, "the setting", set.Variant))
	}
}

// powerDownEffect says what powering idle nodes off changed.
type powerDownEffect struct{ what string }

// powerDownOf finds what power-down changed for the reference's policy:
// a setting that powers down against the reference, when the reference
// does not. nil when there is none to compare.
func powerDownOf(s *scenario.Scenario, sums []CompareSummary, ref CompareSummary) *powerDownEffect {
	vs := s.CompareVariants()
	on := func(name string) (scenario.VariantSpec, bool) {
		for _, v := range vs {
			if v.Name == name {
				return v, s.WithVariant(v).PowerDown != nil
			}
		}
		return scenario.VariantSpec{}, false
	}
	if _, refOn := on(ref.Variant); refOn {
		return nil
	}
	for _, x := range sums[1:] {
		v, xOn := on(x.Variant)
		if x.Policy != ref.Policy || !xOn {
			continue
		}
		pd := s.WithVariant(v).PowerDown
		how := fmt.Sprintf("the setting %s", v.Name)
		if v.Automatic {
			how = fmt.Sprintf("power-down, run automatically because no setting of the scenario has it (variant %q: idle_after_s %g, wake_s %g, off_w %g, the values of examples/replay-powerdown.yaml, stand-ins rather than measurements)", v.Name, pd.IdleAfterS, pd.WakeS, pd.OffW)
		}
		d := float64(x.Metrics["energy_kwh"].Mean)/float64(ref.Metrics["energy_kwh"].Mean) - 1
		return &powerDownEffect{what: fmt.Sprintf("%s changes %s's energy by %+.1f%% (%s)", how, x.Policy, 100*d, x.Verdict)}
	}
	return nil
}

// powerModelName is a scenario's power_model, "" read as the default.
func powerModelName(pm string) string {
	if pm == "" {
		return scenario.PowerModelPWR
	}
	return pm
}

// modelErrorSentence says whether the difference between the reference
// and the system with the least energy (the next after the reference when
// the reference has the least) is larger than what the power model's
// error could produce.
func modelErrorSentence(b *strings.Builder, sums []CompareSummary, best, settings int) {
	if len(sums) < 2 {
		return
	}
	x := best
	if x == 0 {
		x = 1
		for i := 2; i < len(sums); i++ {
			if sums[i].Metrics["energy_kwh"].Mean < sums[x].Metrics["energy_kwh"].Mean {
				x = i
			}
		}
	}
	v := sums[x].ModelError
	if v == nil {
		return
	}
	how := "both priced by the same power model, so a common error cancels: the bound is the sum over GPU models of the busy-GPU kWh difference times the model's measured p95 error"
	if !v.SamePowerModel {
		how = "priced by different power models, so nothing cancels: the bound is the sum of both bands"
	}
	fmt.Fprintf(b, " Power model: %s's difference to the reference, %+.1f kWh, is %s (bound %.1f kWh; %s).",
		sums[x].label(settings), float64(v.DiffKWh), v.Verdict, float64(v.BoundKWh), how)
}
