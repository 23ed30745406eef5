package tasks

import (
	"fmt"
	"strconv"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
)

// Summary is what summary.json holds.
type Summary struct {
	Version       string                   `json:"version"`
	Scenario      *scenario.Scenario       `json:"scenario"`
	Seeds         []uint64                 `json:"seeds"`
	Source        string                   `json:"data_source"`
	StandIns      []string                 `json:"stand_ins,omitempty"`
	Nodes         int                      `json:"nodes"`
	ClusterGPUs   int64                    `json:"cluster_gpus"`
	Reference     string                   `json:"saving_reference_policy"`
	Policies      []PolicySummary          `json:"policies"`
	Claims        []experiment.ClaimResult `json:"paper_claims,omitempty"`
	FGDSimCompare *FGDSimCompare           `json:"fgd_sim_compare,omitempty"`
	// NeverStart counts the pods of the list that fit no node even on the
	// empty cluster (every draw of one fails).
	NeverStart *NeverStart `json:"never_start,omitempty"`
	// ModelError is each policy's EOPC and saving at 0.5 and 1.0 requested
	// against the power model's error.
	ModelError []EOPCModelError `json:"eopc_model_error,omitempty"`
}

// FGDSimCompare compares FGD's allocation curve in the FGD simulator's own
// reduction with the simulator's published mean over seeds 42-51.
type FGDSimCompare struct {
	Note       string         `json:"note"`
	MaxAbsDiff experiment.Num `json:"max_abs_diff_points"`
	AtPercent  int            `json:"at_percent"`
}

// CapacityCSV renders capacity.csv: one row per (policy, requested ratio),
// with the money and carbon of a year at that EOPC (usdPerW and kgPerW:
// InflationResult.YearPerWatt; empty when NaN). Watts are written exactly
// (six significant digits would round 1 MW to 10 W).
func CapacityCSV(curves []CurvePoint, usdPerW, kgPerW float64) []byte {
	rows := [][]string{{"policy", "requested_gpu_ratio", "eopc_w", "eopc_cpu_w", "eopc_gpu_w", "power_saving_vs_fgd",
		"grar", "frag_ratio", "failed_tasks", "alloc_gpu_share", "frag_gpu_milli", "eopc_w_std", "grar_std", "cost_usd_per_year", "co2_kg_per_year"}}
	for _, c := range curves {
		rows = append(rows, []string{c.Policy, strconv.FormatFloat(c.Ratio, 'f', 2, 64), report.Exact(c.EOPCW), report.Exact(c.CPUW), report.Exact(c.GPUW),
			report.F(c.SavingVsFGD), report.F(c.GRAR), report.F(c.FragRatio), report.F(c.Failed), report.F(c.AllocShare),
			report.F(c.FragGPUMilli), report.Exact(c.EOPCStdW), report.F(c.GRARStd), report.F(c.EOPCW * usdPerW), report.F(c.EOPCW * kgPerW)})
	}
	return report.CSV(rows)
}

// FGDSimCSV renders each run's allocation curve in the FGD simulator's
// expected-results format (workload, policy, tune, seed, total_gpus, 0..130).
func FGDSimCSV(r *InflationResult) []byte {
	head := []string{"workload", "sc_policy", "tune", "seed", "total_gpus"}
	for k := 0; k < FGDSimPercents; k++ {
		head = append(head, strconv.Itoa(k))
	}
	rows := [][]string{head}
	for _, run := range r.Runs {
		row := []string{"openb_pod_list_" + r.Scenario.Trace.Pods, run.Policy, strconv.FormatFloat(r.Scenario.Target, 'f', -1, 64),
			strconv.FormatUint(run.Seed, 10), strconv.FormatInt(r.TotalGPUMilli/1000, 10)}
		for _, v := range run.FGDSimAlloc {
			row = append(row, report.F(v))
		}
		rows = append(rows, row)
	}
	return report.CSV(rows)
}

func series(curves []CurvePoint, names []string, y func(CurvePoint) float64) []report.Series {
	var out []report.Series
	for _, n := range names {
		s := report.Series{Name: n}
		for _, c := range Series(curves, n) {
			s.X = append(s.X, c.Ratio)
			s.Y = append(s.Y, y(c))
		}
		out = append(out, s)
	}
	return out
}

// Plots draws the PWR paper's figures from the curves; EOPC and GRAR
// carry their 95% interval over the seeds as a band.
func Plots(s *scenario.Scenario, curves []CurvePoint) ([]experiment.Figure, error) {
	names := s.PolicyNames()
	ref := s.ReferencePolicy()
	// GRAR is zoomed on saturation from 0.8 (as the paper's Fig. 7) when
	// the run gets there; a run that stops short shows its whole range.
	grarMin := 0.8
	if s.Target <= grarMin {
		grarMin = 0
	}
	specs := []experiment.Plot{
		{File: "power_saving.svg", Caption: "Power saving vs FGD (EOPC) over requested GPU capacity (pwr-fgd Fig. 3)",
			Plot: report.LinePlot{Title: "Power saving vs " + ref + " (" + s.Trace.Pods + ")", XLabel: "requested GPU capacity (fraction of cluster)", YLabel: "EOPC saving vs FGD (%)",
				Series: series(curves, names, func(c CurvePoint) float64 { return 100 * c.SavingVsFGD }), XMin: 0, XMax: s.Target}},
		{File: "grar.svg", Caption: "GPU resource allocation ratio near saturation (pwr-fgd Fig. 7)",
			Plot: report.LinePlot{Title: "GRAR (" + s.Trace.Pods + ")", XLabel: "requested GPU capacity (fraction of cluster)", YLabel: "allocated / requested GPU",
				Series: bandSeries(curves, names, s.Seeds, func(c CurvePoint) float64 { return c.GRAR }, func(c CurvePoint) float64 { return c.GRARStd }), XMin: grarMin, XMax: s.Target}},
		{File: "eopc.svg", Caption: "Estimated overall power consumption (pwr-fgd Fig. 1 shows FGD's)",
			Plot: report.LinePlot{Title: "EOPC (" + s.Trace.Pods + ")", XLabel: "requested GPU capacity (fraction of cluster)", YLabel: "EOPC (kW)",
				Series: bandSeries(curves, names, s.Seeds, func(c CurvePoint) float64 { return c.EOPCW / 1000 }, func(c CurvePoint) float64 { return c.EOPCStdW / 1000 }), XMin: 0, XMax: s.Target}},
		{File: "alloc.svg", Caption: "Allocated share of cluster GPUs (FGD paper Fig. 7 style)",
			Plot: report.LinePlot{Title: "Allocated GPUs (" + s.Trace.Pods + ")", XLabel: "requested GPU capacity (fraction of cluster)", YLabel: "allocated / cluster GPU",
				Series: series(curves, names, func(c CurvePoint) float64 { return c.AllocShare }), XMin: 0, XMax: s.Target}},
		{File: "frag.svg", Caption: "GPU fragmentation ratio (FGD's definition: fragmented / idle GPU)",
			Plot: report.LinePlot{Title: "Fragmentation ratio (" + s.Trace.Pods + ")", XLabel: "requested GPU capacity (fraction of cluster)", YLabel: "fragmented / idle GPU",
				Series: series(curves, names, func(c CurvePoint) float64 { return c.FragRatio }), XMin: 0, XMax: s.Target}},
	}
	if ref == "" {
		specs = specs[1:]
	}
	return experiment.Draw(specs...)
}

// SummaryTable renders the policy summaries as a text/HTML table.
func SummaryTable(ps []PolicySummary) report.Table {
	t := report.Table{Title: "Policies", Head: []string{"policy", "saving min 0.15-0.80", "saving mean 0.15-0.80", "saving min 0.80-0.90",
		"EOPC @0.5 (kW)", "GRAR @1.0", "GRAR gap to FGD @1.0", "first GRAR<1", "alloc share final", "failed final"}}
	for _, p := range ps {
		t.Rows = append(t.Rows, []string{p.Policy, experiment.PctOrDash(p.SavingMin15to80), experiment.PctOrDash(p.SavingMean15to80), experiment.PctOrDash(p.SavingMin80to90),
			experiment.NumOrDash(p.EOPCAt50W/1000, "%.1f"), experiment.NumOrDash(p.GRARAt100, "%.4f"), experiment.NumOrDash(p.GRARGapToFGD100, "%.4f"),
			experiment.NumOrDash(p.FirstGRARBelow1, "%.2f"), fmt.Sprintf("%.4f", float64(p.AllocShareFinal)), fmt.Sprintf("%.0f", float64(p.FailedFinal))})
	}
	return t
}

// MoneyTable renders each policy's money and carbon of a year at the
// power of 0.5 and 1.0 requested capacity.
func MoneyTable(ps []PolicySummary) report.Table {
	t := report.Table{Title: "A year at constant load: money and carbon", Head: []string{"policy", "EOPC @0.5 (kW)", "USD/yr @0.5", "t CO2/yr @0.5",
		"EOPC @1.0 (kW)", "USD/yr @1.0", "t CO2/yr @1.0"}}
	usd := func(v experiment.Num) string { return usdCents(float64(v)) }
	for _, p := range ps {
		t.Rows = append(t.Rows, []string{p.Policy, experiment.NumOrDash(p.EOPCAt50W/1000, "%.1f"), usd(p.CostPerYearAt50USD),
			experiment.NumOrDash(p.CO2PerYearAt50Kg/1000, "%.1f"), experiment.NumOrDash(p.EOPCAt100W/1000, "%.1f"), usd(p.CostPerYearAt100USD), experiment.NumOrDash(p.CO2PerYearAt100Kg/1000, "%.1f")})
	}
	return t
}

// MoneyNote says how MoneyTable's figures are priced ("" without an account).
func MoneyNote(r *InflationResult) string {
	a := r.Account
	if a == nil {
		return ""
	}
	s := fmt.Sprintf("money and carbon of a year: the cluster drawing the EOPC of that requested capacity for the 8,760 hours from %s UTC, each hour at its price and carbon intensity (a capacity experiment has no time of its own); %s",
		a.Start.Format("2006-01-02 15:04"), a.Sources)
	if a.Wraps(8760) {
		s += "; the year runs past the end of the series, whose hours are then taken again from its start"
	}
	if a.PUE != 0 {
		s += fmt.Sprintf("; PUE %g (on the IT power x %g)", a.PUE, a.PUE)
	}
	return s
}

// InflationResults condenses an inflation run into its results directory:
// the curves averaged over seeds, each policy's summary, the claims
// checked on the curves, the comparison with the FGD simulator's published
// curves where it applies (FGD on the Default trace to 1.3x), summary.json,
// capacity.csv, fgdsim_alloc.csv, SVG plots and report.html.
func InflationResults(version string, r *InflationResult, claims []experiment.Claim[[]CurvePoint]) (*experiment.Results, error) {
	curves := r.Curves()
	ps := r.Summaries(curves)
	usdPerW, kgPerW := r.YearPerWatt()
	cr := experiment.Evaluate(claims, curves)
	sum := NewSummary(version, r, ps, cr)
	cmp, err := CompareFGDSim(r)
	if err != nil {
		return nil, err
	}
	sum.FGDSimCompare = cmp
	sum.ModelError = eopcModelErrors(r, curves)
	figs, err := Plots(r.Scenario, curves)
	if err != nil {
		return nil, err
	}
	if bars, err := yearBars(r, curves); err == nil {
		figs = append([]experiment.Figure{bars}, figs...)
	} else if r.Scenario.Target >= 0.5 {
		return nil, err
	}
	res, err := experiment.NewResults(r.Scenario.Name, version, sum)
	if err != nil {
		return nil, err
	}
	summary := inflationSummary(r, curves, ps)
	res.Summary, res.Head, res.Definitions = summary, []string{summary, ""}, inflationDefinitions(r)
	res.AddNotes(r.Scenario.Description, "Data: "+sum.Source)
	res.AddNotes(sum.StandIns...)
	res.Tables, res.Figures = []report.Table{SummaryTable(ps), MoneyTable(ps)}, figs
	if len(sum.ModelError) > 0 {
		res.Tables = append(res.Tables, eopcModelErrorTable(sum.ModelError, sum.Reference))
	}
	res.Footnote = fmt.Sprintf("wattsched %s; seeds %v; %d nodes, %d GPUs.", sum.Version, sum.Seeds, sum.Nodes, sum.ClusterGPUs)
	res.Files["capacity.csv"], res.Files["fgdsim_alloc.csv"] = CapacityCSV(curves, usdPerW, kgPerW), FGDSimCSV(r)
	res.Listing = "summary.json, capacity.csv, fgdsim_alloc.csv, report.html, *.svg"
	if len(cr) > 0 {
		res.Tables = append(res.Tables, experiment.ClaimsTable(cr))
	}
	if cmp != nil {
		res.Tail = []string{fmt.Sprintf("FGD vs the FGD simulator's published curves: largest gap %.3f points at %d%% requested (%s)",
			float64(cmp.MaxAbsDiff), cmp.AtPercent, cmp.Note), ""}
	}
	if ns := r.NeverStart; ns != nil {
		line := ns.Line(r.Pods)
		res.Notes = append(res.Notes, "Warning: "+line+"; every draw of such a pod fails.")
		res.Tail = append(res.Tail, "warning: "+line+"; every draw of such a pod fails", "")
	}
	if note := MoneyNote(r); note != "" {
		res.Notes = append(res.Notes, note)
		res.Tail = append(res.Tail, note, "")
	}
	var xls []*explainLog // --explain (explain.go)
	for _, run := range r.Runs {
		xls = append(xls, run.explain)
	}
	addExplain(res, r.Scenario, xls, false)
	return res, nil
}

// NewSummary assembles summary.json's content.
func NewSummary(version string, r *InflationResult, ps []PolicySummary, claims []experiment.ClaimResult) *Summary {
	return &Summary{Version: version, Scenario: r.Scenario, Seeds: r.Scenario.SeedList(), Source: r.Source, Nodes: r.Nodes,
		ClusterGPUs: r.TotalGPUMilli / 1000, Reference: r.Scenario.ReferencePolicy(), Policies: ps, Claims: claims, NeverStart: r.NeverStart}
}
