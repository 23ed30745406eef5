package validate

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
)

// DefaultTraces is where the study looks for the measurements when
// --traces is not given: the shared traces folder beside the repository,
// relative to the working directory (the repository root).
const DefaultTraces = "../shared/traces"

// Study is `wattsched validate power`.
type Study struct {
	traces string
}

// Name implements experiment.Study.
func (*Study) Name() string { return "power" }

// Synopsis implements experiment.Study.
func (*Study) Synopsis() string {
	return `-o DIR [--traces DIR] [--force]
        check the power models against public power measurements`
}

// Flags implements experiment.Study.
func (st *Study) Flags(fs *flag.FlagSet) {
	fs.StringVar(&st.traces, "traces", DefaultTraces, "folder holding zeus-nsdi23/, perseus-sosp24-dvfs/ and gpu-variability-pal/ (the shared traces beside the repository)")
}

// Inputs implements experiment.Study: the measurement files read.
func (st *Study) Inputs() []scenario.Input {
	var out []scenario.Input
	for _, s := range sources() {
		out = append(out, scenario.Input{Field: "--traces", Name: s.file, Path: st.traces + "/" + s.file})
	}
	return out
}

// Check implements experiment.Study.
func (st *Study) Check() error {
	if _, err := os.Stat(st.traces); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("validate power: --traces %s: no such folder (point --traces at the folder holding zeus-nsdi23/, perseus-sosp24-dvfs/ and gpu-variability-pal/)", st.traces)
		}
		return fmt.Errorf("validate power: --traces: %w", err)
	}
	return nil
}

// Row is one line of the error table.
type Row struct {
	Model, GPU, Workload string
	// Knob and KnobValue are the setting of a row of the error by
	// setting ("" and 0 in the error by workload).
	Knob      string  `json:",omitempty"`
	KnobValue float64 `json:",omitempty"`
	Points    int
	// MAPE and Bias are percent of the measured power (Bias signed:
	// above zero the model predicts too much); P95AbsW is the 95th
	// percentile (nearest rank) of |predicted - measured| in watts.
	MAPE, Bias, P95AbsW float64
	MeanMeasuredW       float64
	MeanPredictedW      float64
}

// Result is what the study measured.
type Result struct {
	Rows []Row
	// BySetting is the error per model, GPU model and setting (power
	// limit, frequency) over all workloads.
	BySetting []Row
	Uncovered []string
	Untested  []string
	Sources   []string
	// Busy is the measured busy power fitted on all the points: the
	// figures behind the catalog's busy_w.
	Busy   *BusyFit
	points []scored
}

type scored struct {
	Point
	model     string
	predicted float64
}

// Run implements experiment.Study.
func (st *Study) Run(ctx context.Context, env *experiment.Env) ([]*experiment.Results, error) {
	cat := env.Catalog
	if cat == nil {
		cat = hw.Default()
	}
	res, err := Measure(st.traces, cat)
	if err != nil {
		return nil, err
	}
	return experiment.One(res.results(env.Version))
}

// Measure reads every source under dir and scores every model on it.
func Measure(dir string, cat *hw.Catalog) (*Result, error) {
	var pts []Point
	res := &Result{Untested: Untested}
	for _, s := range sources() {
		p, err := s.read(dir)
		if err != nil {
			return nil, err
		}
		pts = append(pts, p...)
		res.Sources = append(res.Sources, s.file)
	}
	uncovered := map[string]bool{}
	for _, m := range Models() {
		sc, unc, err := m.score(cat, pts)
		if err != nil {
			return nil, fmt.Errorf("validate power: %s: %w", m.Name, err)
		}
		res.points = append(res.points, sc...)
		for _, u := range unc {
			uncovered[m.Name+" on "+u] = true
		}
	}
	for u := range uncovered {
		res.Uncovered = append(res.Uncovered, u)
	}
	slices.Sort(res.Uncovered)
	var err error
	if res.Busy, err = FitBusy(cat, pts); err != nil {
		return nil, fmt.Errorf("validate power: %w", err)
	}
	res.Rows = rows(res.points)
	res.BySetting = bySetting(res.points)
	return res, nil
}

// rows groups the scored points by model, GPU and workload (and model and
// GPU over all workloads, workload "all") and computes each group's error.
// Each group's points are sorted by value first, so that no figure depends
// on the order of the rows read.
func rows(pts []scored) []Row {
	type key struct{ model, gpu, workload string }
	groups := map[key][]scored{}
	for _, p := range pts {
		groups[key{p.model, p.GPU, p.Workload}] = append(groups[key{p.model, p.GPU, p.Workload}], p)
		groups[key{p.model, p.GPU, "all"}] = append(groups[key{p.model, p.GPU, "all"}], p)
	}
	var out []Row
	for k, g := range groups {
		out = append(out, errorRow(k.model, k.gpu, k.workload, g))
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.GPU, b.GPU),
			cmp.Compare(boolInt(a.Workload == "all"), boolInt(b.Workload == "all")), cmp.Compare(a.Workload, b.Workload))
	})
	return out
}

// bySetting groups the scored points that have a setting by model, GPU,
// setting name and value, over all workloads.
func bySetting(pts []scored) []Row {
	type key struct {
		model, gpu, knob string
		v                float64
	}
	groups := map[key][]scored{}
	for _, p := range pts {
		if p.Knob != "" {
			k := key{p.model, p.GPU, p.Knob, p.KnobValue}
			groups[k] = append(groups[k], p)
		}
	}
	var out []Row
	for k, g := range groups {
		r := errorRow(k.model, k.gpu, "all", g)
		r.Knob, r.KnobValue = k.knob, k.v
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.GPU, b.GPU), cmp.Compare(a.Knob, b.Knob), cmp.Compare(a.KnobValue, b.KnobValue))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// errorRow is one group's MAPE, signed bias, p95 absolute error and means.
func errorRow(model, gpu, workload string, g []scored) Row {
	g = slices.Clone(g)
	slices.SortFunc(g, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.Watts, b.Watts), cmp.Compare(a.predicted, b.predicted))
	})
	var ape, rel, m, p float64
	abs := make([]float64, len(g))
	for i, x := range g {
		d := x.predicted - x.Watts
		ape += math.Abs(d) / x.Watts
		rel += d / x.Watts
		m += x.Watts
		p += x.predicted
		abs[i] = math.Abs(d)
	}
	slices.Sort(abs)
	n := float64(len(g))
	return Row{Model: model, GPU: gpu, Workload: workload, Points: len(g),
		MAPE: 100 * ape / n, Bias: 100 * rel / n, P95AbsW: abs[nearestRank(len(abs), 0.95)],
		MeanMeasuredW: m / n, MeanPredictedW: p / n}
}

// nearestRank is the index of the q-quantile of n sorted values by the
// nearest-rank rule: ceil(q*n)-th value, 1-based.
func nearestRank(n int, q float64) int {
	r := int(math.Ceil(q * float64(n)))
	return max(r, 1) - 1
}

// summary is summary.json.
type summary struct {
	Study     string
	Models    []string
	Rows      []Row
	BySetting []Row
	Uncovered []string
	Untested  []string
	Sources   []string
	Busy      *BusyFit
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func (r *Result) results(version string) (*experiment.Results, error) {
	var eqs []string
	for _, m := range Models() {
		eqs = append(eqs, m.Name+": "+m.Equation+". Check: "+m.Sample)
	}
	res, err := experiment.NewResults("power models against measured power", version,
		summary{Study: "validate power", Models: eqs, Rows: r.Rows, BySetting: r.BySetting, Uncovered: r.Uncovered, Untested: r.Untested, Sources: r.Sources, Busy: r.Busy})
	if err != nil {
		return nil, err
	}
	head := []string{"model", "GPU", "workload", "points", "MAPE %", "bias %", "p95 |err| W", "mean measured W", "mean predicted W"}
	t := report.Table{Title: "Power model error against measured average GPU power", Head: head}
	csvRows := [][]string{{"model", "gpu", "workload", "points", "mape_pct", "bias_pct", "p95_abs_err_w", "mean_measured_w", "mean_predicted_w"}}
	for _, x := range r.Rows {
		t.Rows = append(t.Rows, []string{x.Model, x.GPU, x.Workload, strconv.Itoa(x.Points), f1(x.MAPE), f1(x.Bias), f1(x.P95AbsW), f1(x.MeanMeasuredW), f1(x.MeanPredictedW)})
		csvRows = append(csvRows, []string{x.Model, x.GPU, x.Workload, strconv.Itoa(x.Points), report.Exact(x.MAPE), report.Exact(x.Bias), report.Exact(x.P95AbsW), report.Exact(x.MeanMeasuredW), report.Exact(x.MeanPredictedW)})
	}
	res.Tables = []report.Table{t}
	res.Files["errors.csv"] = report.CSV(csvRows)
	ts := report.Table{Title: "Error by setting, over all workloads (Zeus power limits, Perseus frequencies)", Head: append([]string{"model", "GPU", "setting"}, head[3:]...)}
	setRows := [][]string{{"model", "gpu", "setting", "value", "points", "mape_pct", "bias_pct", "p95_abs_err_w", "mean_measured_w", "mean_predicted_w"}}
	for _, x := range r.BySetting {
		ts.Rows = append(ts.Rows, []string{x.Model, x.GPU, x.Knob + " " + report.F(x.KnobValue), strconv.Itoa(x.Points), f1(x.MAPE), f1(x.Bias), f1(x.P95AbsW), f1(x.MeanMeasuredW), f1(x.MeanPredictedW)})
		setRows = append(setRows, []string{x.Model, x.GPU, x.Knob, report.Exact(x.KnobValue), strconv.Itoa(x.Points), report.Exact(x.MAPE), report.Exact(x.Bias), report.Exact(x.P95AbsW), report.Exact(x.MeanMeasuredW), report.Exact(x.MeanPredictedW)})
	}
	res.PageTables = []report.Table{ts}
	res.Files["errors-by-setting.csv"] = report.CSV(setRows)
	pts := [][]string{{"model", "source", "file", "line", "gpu", "workload", "setting", "measured_w", "predicted_w"}}
	for _, p := range r.points {
		pts = append(pts, []string{p.model, p.Source, p.File, strconv.Itoa(p.Line), p.GPU, p.Workload, p.Setting, report.Exact(p.Watts), report.Exact(p.predicted)})
	}
	res.Files["points.csv"] = report.CSV(pts)
	busy := [][]string{{"group", "catalog", "workloads", "points", "measured_w", "busy_w", "capped", "idle_w", "tdp_w", "share"}}
	for _, b := range r.Busy.Groups {
		busy = append(busy, []string{b.Group, strings.Join(b.Catalog, " "), strconv.Itoa(b.Workloads), strconv.Itoa(b.Points),
			report.Exact(b.MeasuredW), report.Exact(b.BusyW), strconv.FormatBool(b.Capped), report.Exact(b.IdleW), report.Exact(b.TDPW), report.Exact(b.Share)})
	}
	busy = append(busy, []string{"pooled", "", "", "", "", "", "", "", "", report.Exact(r.Busy.Share)})
	res.Files["busy.csv"] = report.CSV(busy)
	for _, u := range r.Uncovered {
		res.Tail = append(res.Tail, "not covered: "+u)
	}
	for _, u := range r.Untested {
		res.Tail = append(res.Tail, "untested: "+u)
	}
	res.Tail = append(res.Tail, "")
	res.AddNotes(append(eqs, "Not covered and untested: listed after the table; sources: "+fmt.Sprint(r.Sources))...)
	res.Summary = "Each model's predicted power for each public measurement it covers (Zeus NSDI'23, Perseus SOSP'24, Sinha et al. SC'22 / PAL SC'24 per-device V100 data), and its error: MAPE and signed bias in percent of the measured power, the 95th-percentile absolute error in watts, per model, GPU model and workload. pwr is not fitted; powerflow-dvfs is scored on frequencies its fit did not see; vahrm-variation on devices its fit did not see (see the notes)."
	plots, err := r.plots()
	if err != nil {
		return nil, err
	}
	if res.Figures, err = experiment.Draw(plots...); err != nil {
		return nil, err
	}
	res.Listing = "summary.json, errors.csv, errors-by-setting.csv, points.csv, busy.csv"
	for _, f := range res.Figures {
		res.Listing += ", " + f.File
	}
	res.Listing += ", report.html"
	return res, nil
}

// plots are one predicted-vs-measured plot per model: per GPU, the points
// sorted by measured power, and the line predicted = measured.
func (r *Result) plots() ([]experiment.Plot, error) {
	var out []experiment.Plot
	for _, m := range Models() {
		byGPU := map[string][]scored{}
		var gpus []string
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range r.points {
			if p.model != m.Name {
				continue
			}
			if _, ok := byGPU[p.GPU]; !ok {
				gpus = append(gpus, p.GPU)
			}
			byGPU[p.GPU] = append(byGPU[p.GPU], p)
			lo, hi = min(lo, p.Watts, p.predicted), max(hi, p.Watts, p.predicted)
		}
		if len(gpus) == 0 {
			continue
		}
		slices.Sort(gpus)
		lp := report.LinePlot{Title: m.Name + ": predicted vs measured GPU power", XLabel: "measured W", YLabel: "predicted W",
			Series: []report.Series{{Name: "predicted = measured", X: []float64{lo, hi}, Y: []float64{lo, hi}}}}
		for _, g := range gpus {
			ps := slices.Clone(byGPU[g])
			slices.SortFunc(ps, func(a, b scored) int {
				return cmp.Or(cmp.Compare(a.Watts, b.Watts), cmp.Compare(a.predicted, b.predicted))
			})
			s := report.Series{Name: g}
			for _, p := range ps {
				s.X, s.Y = append(s.X, p.Watts), append(s.Y, p.predicted)
			}
			lp.Series = append(lp.Series, s)
		}
		out = append(out, experiment.Plot{File: "predicted-vs-measured-" + m.Name + ".svg", Caption: m.Name + ": " + m.Equation + ". Each line is one GPU model's points sorted by measured power.", Plot: lp})
	}
	return out, nil
}
