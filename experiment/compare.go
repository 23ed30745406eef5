package experiment

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// CompareRun is one policy replaying the trace on one seed. Seeds differ
// in how ties between equally scored nodes are broken (a seeded node
// order, TieRank), which is the run-to-run variation a replay has.
type CompareRun struct {
	Policy string
	Seed   uint64
	Result *sim.Result
	// CostUSD and CO2Kg price the run's hourly energy (scenario.Account).
	CostUSD, CO2Kg float64
	// Measured is what recorded readings did (scenario measured).
	Measured *MeasuredSummary
}

// RunCompare replays the scenario's trace under every policy on every seed
// (mode replay).
func RunCompare(env *Env, s *scenario.Scenario, in *Inputs) ([]*CompareRun, error) {
	if s.Mode != scenario.Replay {
		return nil, fmt.Errorf("scenario %s: compare replays a trace at its recorded times: mode %q, want replay", s.Name, s.Mode)
	}
	acct, err := s.Account()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	rec, err := loadRecorded(s, in)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := checkTasks(env, s, in); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	// The estimate after the checks: the series' coverage bounds the hours
	// it counts.
	if err := EstimateCompare(s, in, env.Workers).Check(env.MaxMemory); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	n := len(s.Policies) * s.Seeds
	out, errs := ShardedRun(env.Shards, n, env.Workers, func(i int) (*CompareRun, error) {
		ps := &s.Policies[i/s.Seeds]
		seed := s.FirstSeed + uint64(i%s.Seeds)
		r, err := replayOnce(env, s, ps, in, acct, rec, seed, true)
		if err != nil {
			return nil, fmt.Errorf("policy %s, seed %d: %w", ps.Name, seed, err)
		}
		return &CompareRun{Policy: ps.Name, Seed: seed, Result: r.res, CostUSD: r.usd, CO2Kg: r.kg, Measured: r.measured}, nil
	}, env.Progress, func(i int) string {
		return fmt.Sprintf("%s seed %d", s.Policies[i/s.Seeds].Name, s.FirstSeed+uint64(i%s.Seeds))
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
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
// times of a run's tasks in seconds; tasks that never started or ended are
// left out.
func taskTimes(r *sim.Result) (wait, jct []float64) {
	for _, t := range r.Tasks {
		if t.Start >= 0 {
			wait = append(wait, (t.Start - t.Submit).Seconds())
		}
		if t.End >= 0 {
			jct = append(jct, (t.End - t.Submit).Seconds())
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
	{"co2_kg", "CO2 kg", "kg", "%.0f", "the energy of each hour times that hour's grid carbon intensity (kg CO2-equivalent)",
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

// MeanCI is a mean over seeds with its two-sided 95% confidence interval
// (Student's t with n-1 degrees of freedom; NaN bounds for one seed).
type MeanCI struct {
	Mean Num `json:"mean"`
	Lo   Num `json:"ci95_lo"`
	Hi   Num `json:"ci95_hi"`
	N    int `json:"n"`
}

// ci95 summarises xs.
func ci95(xs []float64) MeanCI {
	m := MeanCI{Mean: Num(mean(xs)), Lo: Num(math.NaN()), Hi: Num(math.NaN()), N: len(xs)}
	if len(xs) < 2 {
		return m
	}
	sd := stat.StdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	h := t * sd / math.Sqrt(float64(len(xs)))
	m.Lo, m.Hi = m.Mean-Num(h), m.Mean+Num(h)
	return m
}

func (m MeanCI) format(f string) string {
	if math.IsNaN(float64(m.Mean)) {
		return "-"
	}
	s := fmt.Sprintf(f, float64(m.Mean))
	if !math.IsNaN(float64(m.Lo)) {
		s += fmt.Sprintf(" ["+f+", "+f+"]", float64(m.Lo), float64(m.Hi))
	}
	return s
}

// CompareSummary is one policy's figures over the seeds.
type CompareSummary struct {
	Policy  string            `json:"policy"`
	Metrics map[string]MeanCI `json:"metrics"`
	// EnergyVsBaseline is the per-seed paired relative energy difference
	// to the first policy (negative: less energy).
	EnergyVsBaseline MeanCI `json:"energy_vs_first_policy"`
	// Wait and JCT quantiles over every task of every seed (s).
	WaitQuantiles map[string]Num `json:"wait_quantiles_s"`
	JCTQuantiles  map[string]Num `json:"jct_quantiles_s"`
	// Measured sums the seeds' lookups of recorded readings (scenario
	// measured).
	Measured *MeasuredSummary `json:"measured,omitempty"`
}

var quantiles = []struct {
	name string
	q    float64
}{{"p10", 0.1}, {"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}

// CompareResults renders a comparison: summary.json, runs.csv (one row per
// policy and seed), a table of means with 95% intervals, wait and JCT
// quantiles, their distributions and the power over time as step plots,
// metric definitions, and a plain-language summary at the top of
// report.html.
func CompareResults(version string, s *scenario.Scenario, in *Inputs, runs []*CompareRun) (*Results, error) {
	metrics := compareMetrics
	if s.Measured != nil {
		metrics = append(slices.Clone(compareMetrics), measuredMetric)
	}
	byPolicy := map[string][]*CompareRun{}
	for _, r := range runs {
		byPolicy[r.Policy] = append(byPolicy[r.Policy], r)
	}
	base := byPolicy[s.Policies[0].Name]
	csvRows := [][]string{{"policy", "seed"}}
	for _, m := range metrics {
		csvRows[0] = append(csvRows[0], m.key)
	}
	var sums []CompareSummary
	means := report.Table{Title: fmt.Sprintf("Comparison over %d seeds: mean [95%% confidence interval]", s.Seeds), Head: []string{"policy"}}
	for _, m := range metrics {
		means.Head = append(means.Head, m.head)
	}
	means.Head = append(means.Head, "energy vs "+s.Policies[0].Name)
	dist := report.Table{Title: "Wait and completion time distributions over all tasks and seeds (s)", Head: []string{"policy"}}
	for _, q := range quantiles {
		dist.Head = append(dist.Head, "wait "+q.name)
	}
	for _, q := range quantiles {
		dist.Head = append(dist.Head, "JCT "+q.name)
	}
	var cdf, powerLines []report.Series
	for _, ps := range s.Policies {
		rs := byPolicy[ps.Name]
		sum := CompareSummary{Policy: ps.Name, Metrics: map[string]MeanCI{}, WaitQuantiles: map[string]Num{}, JCTQuantiles: map[string]Num{}}
		row := []string{ps.Name}
		for _, m := range metrics {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, m.of(r))
			}
			c := ci95(xs)
			sum.Metrics[m.key] = c
			row = append(row, c.format(m.format))
		}
		var rel []float64
		for i, r := range rs {
			b := metrics[0].of(base[i])
			rel = append(rel, metrics[0].of(r)/b-1)
		}
		sum.EnergyVsBaseline = ci95(rel)
		row = append(row, pctCI(sum.EnergyVsBaseline))
		means.Rows = append(means.Rows, row)
		for _, r := range rs {
			sum.Measured = sum.Measured.add(r.Measured)
		}
		var wait, jct []float64
		for _, r := range rs {
			w, j := taskTimes(r.Result)
			wait, jct = append(wait, w...), append(jct, j...)
			line := []string{ps.Name, strconv.FormatUint(r.Seed, 10)}
			for _, m := range metrics {
				line = append(line, report.F(m.of(r)))
			}
			csvRows = append(csvRows, line)
		}
		drow := []string{ps.Name}
		for _, q := range quantiles {
			v := quantile(wait, q.q)
			sum.WaitQuantiles[q.name] = Num(v)
			drow = append(drow, fmt.Sprintf("%.1f", v))
		}
		for _, q := range quantiles {
			v := quantile(jct, q.q)
			sum.JCTQuantiles[q.name] = Num(v)
			drow = append(drow, fmt.Sprintf("%.0f", v))
		}
		dist.Rows = append(dist.Rows, drow)
		sums = append(sums, sum)
		cdf = append(cdf, cdfSeries(ps.Name, wait))
		powerLines = append(powerLines, hourlyPowerSeries(ps.Name, rs))
	}
	defs := report.Table{Title: "What each figure means", Head: []string{"figure", "definition"}}
	for _, m := range metrics {
		defs.Rows = append(defs.Rows, []string{m.head, m.definition})
	}
	defs.Rows = append(defs.Rows,
		[]string{"energy vs " + s.Policies[0].Name, "per seed, this policy's energy divided by the first policy's on the same seed, minus 1; mean and interval over the seeds"},
		[]string{"[lo, hi]", fmt.Sprintf("95%% confidence interval of the mean over the %d seeds (Student's t); the seeds differ only in how ties between equally scored nodes are broken, so the interval measures that sensitivity, not the variation between traces", s.Seeds)})
	cdfSVG, err := report.LinePlot{Title: "Wait time distribution (all seeds)", XLabel: "wait (s)", YLabel: "share of started tasks", Series: cdf, Steps: true}.SVG()
	if err != nil {
		return nil, err
	}
	bars, err := compareBars(s, sums)
	if err != nil {
		return nil, err
	}
	powSVG, err := report.LinePlot{Title: fmt.Sprintf("Hourly average cluster power (mean over %d seeds)", s.Seeds), XLabel: "time (h)", YLabel: "power (kW)", Series: powerLines, Steps: true}.SVG()
	if err != nil {
		return nil, err
	}
	summary := compareSentence(s, in, sums)
	notes, tail, err := replayNotes(s, in)
	if err != nil {
		return nil, err
	}
	js, err := report.JSON(struct {
		Version    string             `json:"version"`
		Scenario   *scenario.Scenario `json:"scenario"`
		Source     string             `json:"data_source"`
		Summary    string             `json:"summary"`
		NeverStart *NeverStart        `json:"never_start,omitempty"`
		Policies   []CompareSummary   `json:"policies"`
	}{version, s, in.Source, summary, in.NeverStart, sums})
	if err != nil {
		return nil, err
	}
	return &Results{Title: "wattsched compare: " + s.Name, Notes: append([]string{summary, s.Description}, notes...),
		Head: []string{summary, ""}, Tail: tail, Tables: []report.Table{means, dist, defs},
		Figures: []Figure{
			{File: "totals.svg", Caption: fmt.Sprintf("Each policy's energy, cost and CO2: bars the mean over the %d seeds, whiskers the 95%% confidence interval of that mean (Student's t)", s.Seeds), SVG: bars},
			{File: "wait_cdf.svg", Caption: "Share of started tasks that waited at most x seconds, all seeds", SVG: cdfSVG},
			{File: "power.svg", Caption: fmt.Sprintf("Estimated cluster power averaged over each hour (CPU and GPU energy of the hour / its length; the last hour over the part the run covers): the line is the mean over the %d seeds, the shaded band its 95%% confidence interval (Student's t)", s.Seeds), SVG: powSVG},
		},
		Footnote: "wattsched " + version,
		Files:    map[string][]byte{"summary.json": js, "runs.csv": report.CSV(csvRows)},
		Listing:  "summary.json, runs.csv, totals.svg, wait_cdf.svg, power.svg, report.html"}, nil
}

// compareBars draws each policy's energy, cost and CO2 with their 95%
// intervals over the seeds.
func compareBars(s *scenario.Scenario, sums []CompareSummary) ([]byte, error) {
	bp := report.BarPlot{Title: fmt.Sprintf("Energy, cost and CO2 (mean and 95%% interval over %d seeds)", s.Seeds),
		Panels: []report.BarPanel{{Label: "energy (kWh)", Format: "%.1f"}, {Label: "cost (USD)", Format: "%.2f"}, {Label: "CO2 (kg)", Format: "%.1f"}}}
	for _, x := range sums {
		bp.Names = append(bp.Names, x.Policy)
		for k, key := range []string{"energy_kwh", "cost_usd", "co2_kg"} {
			m := x.Metrics[key]
			bp.Panels[k].Bars = append(bp.Panels[k].Bars, report.Bar{Value: float64(m.Mean), Lo: float64(m.Lo), Hi: float64(m.Hi)})
		}
	}
	return bp.SVG()
}

func pctCI(m MeanCI) string {
	if math.IsNaN(float64(m.Mean)) {
		return "-"
	}
	s := fmt.Sprintf("%+.1f%%", 100*float64(m.Mean))
	if !math.IsNaN(float64(m.Lo)) {
		s += fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100*float64(m.Lo), 100*float64(m.Hi))
	}
	return s
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
		c := ci95(xs)
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

// compareSentence says in one paragraph what the comparison found.
func compareSentence(s *scenario.Scenario, in *Inputs, sums []CompareSummary) string {
	gpus := 0
	for _, n := range in.Nodes {
		gpus += n.GPUs
	}
	var span job.Time
	for _, t := range in.Pods {
		span = max(span, t.Submit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "On %d nodes with %d GPUs, replaying %d tasks submitted over %.1f h, %d seeds per policy: ", len(in.Nodes), gpus, len(in.Pods), span.Seconds()/3600, s.Seeds)
	best := 0
	for i, x := range sums {
		if x.Metrics["energy_kwh"].Mean < sums[best].Metrics["energy_kwh"].Mean {
			best = i
		}
	}
	first, top := sums[0], sums[best]
	e := func(x CompareSummary) float64 { return float64(x.Metrics["energy_kwh"].Mean) }
	w := func(x CompareSummary) float64 { return float64(x.Metrics["mean_wait_s"].Mean) }
	j := func(x CompareSummary) float64 { return float64(x.Metrics["mean_jct_s"].Mean) }
	if best == 0 {
		fmt.Fprintf(&b, "%s used the least energy (%.1f kWh).", first.Policy, e(first))
		return b.String()
	}
	d := top.EnergyVsBaseline
	fmt.Fprintf(&b, "%s used the least energy, %.1f kWh, %.1f%% less than %s (%.1f kWh)", top.Policy, e(top), -100*float64(d.Mean), first.Policy, e(first))
	switch {
	case math.IsNaN(float64(d.Lo)):
		b.WriteString(" (one seed: no interval)")
	case d.Hi < 0:
		fmt.Fprintf(&b, "; the 95%% interval of that saving, %.1f%% to %.1f%%, excludes zero", -100*float64(d.Hi), -100*float64(d.Lo))
	default:
		fmt.Fprintf(&b, "; the 95%% interval of that saving, %.1f%% to %.1f%%, includes zero: the difference is within the run-to-run noise", -100*float64(d.Hi), -100*float64(d.Lo))
	}
	c := func(x CompareSummary) float64 { return float64(x.Metrics["cost_usd"].Mean) }
	k := func(x CompareSummary) float64 { return float64(x.Metrics["co2_kg"].Mean) }
	// A mean over no task (none started or ended) is "-", not NaN.
	sec := func(f string, v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return fmt.Sprintf(f+" s", v)
	}
	fmt.Fprintf(&b, ". It cost %.2f USD and emitted %.1f kg CO2eq (%s: %.2f USD, %.1f kg). Its tasks waited %s on average (%s: %s) and completed in %s (%s: %s).",
		c(top), k(top), first.Policy, c(first), k(first), sec("%.1f", w(top)), first.Policy, sec("%.1f", w(first)), sec("%.0f", j(top)), first.Policy, sec("%.0f", j(first)))
	return b.String()
}
