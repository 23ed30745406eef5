package tasks

import (
	"fmt"
	"math"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/report"
)

// bandSeries is series with each point's 95% interval over n seeds
// (sd: the standard deviation over seeds, in y's unit; y positive) as its
// band, on the log scale (experiment.Positive95).
func bandSeries(curves []CurvePoint, names []string, n int, y, sd func(CurvePoint) float64) []report.Series {
	out := series(curves, names, y)
	for i, name := range names {
		for _, c := range Series(curves, name) {
			lo, hi := experiment.Positive95(y(c), sd(c), n)
			out[i].Lo = append(out[i].Lo, lo)
			out[i].Hi = append(out[i].Hi, hi)
		}
	}
	return out
}

// yearBars draws each policy's EOPC at half the cluster's GPUs requested
// and, with a grid, the money and carbon of a year at that power, with
// their 95% intervals over the seeds.
func yearBars(r *InflationResult, curves []CurvePoint) (experiment.Figure, error) {
	usdPerW, kgPerW := r.YearPerWatt()
	names := r.Scenario.PolicyNames()
	eopc := report.BarPanel{Label: "EOPC (kW)", Format: "%.1f"}
	usd := report.BarPanel{Label: "cost (USD per year)", Format: "%.2f"}
	co2 := report.BarPanel{Label: "CO2 (t per year)", Format: "%.1f"}
	for _, name := range names {
		c, ok := At(Series(curves, name), 0.5)
		if !ok {
			return experiment.Figure{}, fmt.Errorf("plot year_bars.svg: policy %s has no point at 0.5 requested", name)
		}
		lo, hi := experiment.Positive95(c.EOPCW, c.EOPCStdW, r.Scenario.Seeds)
		bar := func(scale float64) report.Bar {
			return report.Bar{Value: c.EOPCW * scale, Lo: lo * scale, Hi: hi * scale}
		}
		eopc.Bars = append(eopc.Bars, bar(1.0/1000))
		usd.Bars = append(usd.Bars, bar(usdPerW))
		co2.Bars = append(co2.Bars, bar(kgPerW/1000))
	}
	bp := report.BarPlot{Title: "At half the GPUs requested (mean and 95% interval over seeds)", Names: names, Panels: []report.BarPanel{eopc}}
	if !math.IsNaN(usdPerW) {
		bp.Panels = append(bp.Panels, usd, co2)
	}
	svg, err := bp.SVG()
	if err != nil {
		return experiment.Figure{}, fmt.Errorf("plot year_bars.svg: %w", err)
	}
	caption := "Each policy's estimated power (EOPC) when the tasks that arrived request half the cluster's GPUs; with a grid, the money and CO2 of a year at that power. Bars: mean over the seeds; whiskers: 95% interval over the seeds on the log scale (mean x exp(±t x standard error / mean)), which cannot reach zero."
	return experiment.Figure{File: "year_bars.svg", Caption: caption, SVG: svg}, nil
}

// inflationSummary is the plain-language paragraph at the top of an
// inflation report: what was run, which policy drew the least power at
// half load and by how much against the reference, when GPU requests
// first went unplaced, and what a year at that power costs. Every value
// names the policy it belongs to.
func inflationSummary(r *InflationResult, curves []CurvePoint, ps []PolicySummary) string {
	s := r.Scenario
	var b strings.Builder
	fmt.Fprintf(&b, "On %d nodes with %d GPUs, tasks drawn at random from the %s pod list arrive and stay until they request %.0f%% of the cluster's GPUs; %d policies, %d seeds each (values are means over the seeds). ",
		r.Nodes, r.TotalGPUMilli/1000, s.Trace.Pods, 100*s.Target, len(s.Policies), s.Seeds)
	best, bestW := "", math.Inf(1)
	for _, name := range s.PolicyNames() {
		if c, ok := At(Series(curves, name), 0.5); ok && c.EOPCW < bestW {
			best, bestW = name, c.EOPCW
		}
	}
	if best == "" {
		return strings.TrimSpace(b.String())
	}
	ref := s.ReferencePolicy()
	byName := map[string]PolicySummary{}
	for _, p := range ps {
		byName[p.Policy] = p
	}
	fmt.Fprintf(&b, "With half the cluster's GPUs requested, %s drew the least estimated power (EOPC): %.1f kW", best, bestW/1000)
	if rc, ok := At(Series(curves, ref), 0.5); ok && ref != best && rc.EOPCW > 0 {
		fmt.Fprintf(&b, ", %.1f%% less than %s (%.1f kW)", 100*(1-bestW/rc.EOPCW), ref, rc.EOPCW/1000)
		if m := byName[best].SavingMean15to80; !math.IsNaN(float64(m)) {
			fmt.Fprintf(&b, "; from 15%% to 80%% requested, %s saved %.1f%% on average against %s", best, 100*float64(m), ref)
		}
	}
	b.WriteString(". ")
	first, firstName := math.Inf(1), ""
	for _, name := range s.PolicyNames() {
		if v := float64(byName[name].FirstGRARBelow1); !math.IsNaN(v) && v < first {
			first, firstName = v, name
		}
	}
	if firstName != "" {
		fmt.Fprintf(&b, "Every policy placed every task until %.0f%% of the GPUs were requested (the first to leave a request unplaced: %s); savings beyond that point can come from tasks left unplaced rather than from better placement. ", 100*first, firstName)
	}
	if g := byName[best]; !math.IsNaN(float64(g.GRARAt100)) {
		fmt.Fprintf(&b, "With all GPUs requested, %s placed %.1f%% of the requested GPUs", best, 100*float64(g.GRARAt100))
		if rg, ok := byName[ref]; ok && ref != best {
			fmt.Fprintf(&b, " (%s: %.1f%%)", ref, 100*float64(rg.GRARAt100))
		}
		b.WriteString(". ")
	}
	if p := byName[best]; !math.IsNaN(float64(p.CostPerYearAt50USD)) {
		fmt.Fprintf(&b, "A year at %s's half-load power costs %s USD and emits %.1f t CO2eq", best, usdCents(float64(p.CostPerYearAt50USD)), float64(p.CO2PerYearAt50Kg)/1000)
		if rp, ok := byName[ref]; ok && ref != best {
			fmt.Fprintf(&b, " (%s: %s USD, %.1f t)", ref, usdCents(float64(rp.CostPerYearAt50USD)), float64(rp.CO2PerYearAt50Kg)/1000)
		}
		b.WriteString(".")
	}
	return strings.TrimSpace(b.String())
}

// usdCents prints dollars with cents and thousands separators
// (273004.5 -> "273,004.50").
func usdCents(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	s := fmt.Sprintf("%.2f", math.Abs(v))
	whole, frac := s[:len(s)-3], s[len(s)-3:]
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	sign := ""
	if v < 0 && s != "0.00" {
		sign = "-"
	}
	return sign + b.String() + frac
}

// inflationDefinitions says what every column and figure of an inflation
// report means, with the section of the PWR paper (pwr-fgd) that defines
// it where it has one.
func inflationDefinitions(r *InflationResult) *report.Table {
	ref := r.Scenario.ReferencePolicy()
	if ref == "" {
		ref = "the reference policy (FGD; none in this scenario, so no saving is computed)"
	}
	n := r.Scenario.Seeds
	rows := [][]string{
		{"requested GPU capacity", "the x axis of the curves: the GPUs requested by every task that has arrived so far, as a fraction of the cluster's GPUs. Tasks are drawn at random (with replacement) from the trace's pod list and never leave, until the requests reach the scenario's target (pwr-fgd Section V-A, the FGD simulator's workload inflation). 0.5 means tasks asking for half the cluster's GPUs have arrived."},
		{"EOPC", "Estimated Overall Power Consumption: the CPU and GPU power of every node in watts, idle or busy, from the PWR power model (pwr-fgd Section V-C, Equation 3 of Section II): a GPU with any task on it draws its TDP and an idle one its idle power; a CPU socket with any allocated core draws its TDP, an idle one its idle power (a GPU model with a measured power curve in the catalog draws the curve's power at its allocated share instead)."},
		{"EOPC @0.5 (kW), EOPC @1.0 (kW)", "EOPC when the tasks that arrived request 50% (100%) of the cluster's GPUs, mean over the seeds."},
		{"saving", "1 - EOPC(policy) / EOPC(" + ref + ") at the same requested capacity: positive means the policy draws less power than " + ref + " (pwr-fgd Section VI-B, Figs. 2-3)."},
		{"saving min 0.15-0.80", "the smallest saving at any requested capacity from 15% to 80%: the range the paper calls sustained savings, phase (2) of its five phases (pwr-fgd Section VI-B). A policy with a positive minimum saved power at every load in that range."},
		{"saving mean 0.15-0.80", "the average saving over the requested capacities from 15% to 80% (points 0.01 apart)."},
		{"saving min 0.80-0.90", "the smallest saving from 80% to 90% requested, phase (3), where the paper's savings fall steeply as the cluster nears saturation (pwr-fgd Section VI-B)."},
		{"GRAR", "GPU Resource Allocation Ratio: GPUs allocated to placed tasks divided by GPUs requested by arrived tasks (pwr-fgd Section V-C). 1 means every task found room; below 1, some requests could not be placed (fragmentation or a full cluster)."},
		{"GRAR @1.0", "GRAR when the requests reach 100% of the cluster's GPUs."},
		{"GRAR gap to FGD @1.0", "GRAR(" + ref + ") - GRAR(policy) at 100% requested: how many more GPUs (as a fraction of those requested) the policy left unplaced than " + ref + " (pwr-fgd Section VI-D compares gaps of about 0.01-0.02)."},
		{"first GRAR<1", "the first requested capacity at which GRAR falls below 0.999, i.e. the first task the policy could not place. Savings at capacities beyond it may come from unplaced tasks rather than better placement (pwr-fgd Section VI-D)."},
		{"alloc share final", "GPUs allocated at the end of the run (requests at the target) divided by all the cluster's GPUs: how full the policy managed to pack the cluster."},
		{"failed final", "tasks that found no node by the end of the run, mean over the seeds (a task that fits no node fails and is not retried; inflation tasks never leave)."},
		{"fragmentation ratio", "FGD's fragmentation measure of the idle GPUs (the GPU capacity that the typical task could not use), divided by the idle GPU capacity (FGD paper's definition, with its default target workload)."},
		{"USD/yr, t CO2/yr", "the cluster drawing that EOPC for a whole year, each hour priced at the grid's hourly price and carbon intensity (see the note above), times the PUE: a capacity experiment has no time of its own, so this prices a constant load."},
		{"shaded band, whiskers", fmt.Sprintf("the 95%% confidence interval of the mean over the %d seeds on the log scale (mean x exp(±t(0.975, n-1) x standard error / mean), which cannot reach zero); the seeds differ in which tasks are drawn and how ties between equally scored nodes are broken. No band with one seed.", n)},
	}
	return &report.Table{Title: "What each figure means", Head: []string{"figure", "definition"}, Rows: rows}
}
