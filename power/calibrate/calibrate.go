// Package calibrate fits GPU power models from measured series (the
// NVIDIA DCGM exporter's power and utilisation, as a Prometheus range
// query returns them) and writes them as a bring-your-own-hardware
// catalog file.
package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/fit"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power/prom"
)

// Options say which series to fit and how.
type Options struct {
	// PowerMetric and UtilMetric are the __name__ of the power (W) and
	// utilisation (percent) series; ModelLabel holds the GPU model.
	PowerMetric, UtilMetric, ModelLabel string
	// Knots are the inner breakpoints of a piecewise curve over
	// utilisation (fractions in (0, 1)); none: a straight line from idle
	// to full power.
	Knots []float64
	// Suffix is appended to the model's name (spaces become dashes) to
	// name the catalog entry: a calibrated model never shadows a
	// catalog name.
	Suffix string
	// From names the data's origin in errors and in each model's source.
	From string
	// NodeLabel and GPULabel hold a power series' node name and GPU index
	// (FitAllocated only).
	NodeLabel, GPULabel string
	// AllocFrom names the allocations' origin in each model's source
	// (FitAllocated only).
	AllocFrom string
}

// Default is calibration over the DCGM exporter's series.
func Default() Options {
	return Options{PowerMetric: "DCGM_FI_DEV_POWER_USAGE", UtilMetric: "DCGM_FI_DEV_GPU_UTIL", ModelLabel: "modelName", Suffix: "-measured",
		NodeLabel: "Hostname", GPULabel: "gpu"}
}

// Allocation is what FitAllocated pairs power with: the share of a GPU
// allocated to the pods running on it (for example the pods of a
// Kubernetes dump, trace/k8sdump.Runs).
type Allocation interface {
	// HasNode says whether the allocation knows node at all.
	HasNode(node string) bool
	// Share is the allocated share, in [0, 1], of GPU gpu of node at
	// time at; ok is false when it is unknown then.
	Share(node string, gpu int, at time.Time) (share float64, ok bool)
	// Nodes are the known nodes, for messages.
	Nodes() []string
}

// Unpaired counts the power samples FitAllocated could not pair.
type Unpaired struct {
	// OtherNode are samples of nodes the allocation does not know.
	OtherNode int
	// Unknown are samples of a known node at a time its GPUs' shares
	// were unknown.
	Unknown int
	// OtherNodes are the nodes of OtherNode, sorted.
	OtherNodes []string
}

// Query is the PromQL whose range result Calibrate reads: both
// series of every GPU.
func (o Options) Query() string {
	return fmt.Sprintf(`{__name__=~"%s|%s"}`, o.PowerMetric, o.UtilMetric)
}

// ModelFit is one GPU model's calibration.
type ModelFit struct {
	Model   string // the ModelLabel's value
	Name    string // the catalog entry's name
	GPUs    int    // distinct GPUs (series pairs) fitted
	Samples int
	Curve   *fit.Piecewise
	// RMSEW and MAPE are the fit's error over its samples (W, percent).
	RMSEW, MAPE float64
	// UtilMin and UtilMax are the utilisation range covered (fractions);
	// the allocated share's range for FitAllocated.
	UtilMin, UtilMax float64
	GPU              hw.GPUModel
}

// Fit fits each GPU model's power over utilisation from a range
// query's series (both metrics, as Query returns them): samples
// pair a GPU's power and utilisation at the same time. Bad values are
// errors naming the series and point (data.result[i].values[j]). Results
// are sorted by model.
func Fit(series []prom.Series, o Options, cat *hw.Catalog) ([]ModelFit, error) {
	type pair struct {
		power, util map[int64]float64
		model       string
	}
	pairs := map[string]*pair{}
	for i, s := range series {
		name := s.Labels["__name__"]
		if name != o.PowerMetric && name != o.UtilMetric {
			continue
		}
		model := s.Labels[o.ModelLabel]
		if model == "" {
			return nil, fmt.Errorf("%s: data.result[%d].metric: no %q label (the GPU model)", o.From, i, o.ModelLabel)
		}
		k := gpuKey(s.Labels)
		p := pairs[k]
		if p == nil {
			p = &pair{power: map[int64]float64{}, util: map[int64]float64{}, model: model}
			pairs[k] = p
		}
		for j, pt := range s.Points {
			v, ts := pt.Value, pt.Time.UnixMilli()
			path := fmt.Sprintf("%s: data.result[%d].values[%d]", o.From, i, j)
			if name == o.PowerMetric {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 5000 {
					return nil, fmt.Errorf("%s: %s %v W: want finite watts in [0, 5000]", path, name, v)
				}
				p.power[ts] = v
			} else {
				if math.IsNaN(v) || v < 0 || v > 100 {
					return nil, fmt.Errorf("%s: %s %v: want a percentage in [0, 100]", path, name, v)
				}
				p.util[ts] = v
			}
		}
	}
	byModel := map[string][][2]float64{}
	gpus := map[string]int{}
	for _, p := range pairs {
		n := 0
		for ts, w := range p.power {
			if u, ok := p.util[ts]; ok {
				byModel[p.model] = append(byModel[p.model], [2]float64{u / 100, w})
				n++
			}
		}
		if n > 0 {
			gpus[p.model]++
		}
	}
	if len(byModel) == 0 {
		return nil, fmt.Errorf("%s: no GPU has both %s and %s at the same times (query %s)", o.From, o.PowerMetric, o.UtilMetric, o.Query())
	}
	return fitAll(byModel, gpus, utilisation, o, cat)
}

// FitAllocated fits each GPU model's power over the GPU's allocated share
// (what the simulator's power model reads) instead of its utilisation:
// each power sample of GPU g (label GPULabel) of node n (label NodeLabel)
// at time t is paired with a.Share(n, g, t). The utilisation series are
// not read. Samples of nodes a does not know, or at times their share is
// unknown, are left out and counted; none left is an error naming the
// labels looked for. The same refusals as Fit apply, over the share.
func FitAllocated(series []prom.Series, a Allocation, o Options, cat *hw.Catalog) ([]ModelFit, Unpaired, error) {
	var un Unpaired
	byModel := map[string][][2]float64{}
	gpus := map[string]int{}
	other := map[string]bool{}
	var seen []string // node label values, for the error
	for i, s := range series {
		if s.Labels["__name__"] != o.PowerMetric {
			continue
		}
		meta := fmt.Sprintf("%s: data.result[%d].metric", o.From, i)
		model := s.Labels[o.ModelLabel]
		if model == "" {
			return nil, un, fmt.Errorf("%s: no %q label (the GPU model)", meta, o.ModelLabel)
		}
		node, ok := s.Labels[o.NodeLabel]
		if !ok || node == "" {
			return nil, un, fmt.Errorf("%s: no %q label (the node)", meta, o.NodeLabel)
		}
		g, err := strconv.Atoi(s.Labels[o.GPULabel])
		if err != nil || g < 0 {
			return nil, un, fmt.Errorf("%s: label %q %q: want a GPU index (0, 1, ...)", meta, o.GPULabel, s.Labels[o.GPULabel])
		}
		if !slices.Contains(seen, node) {
			seen = append(seen, node)
		}
		known := a.HasNode(node)
		n := 0
		for j, pt := range s.Points {
			v := pt.Value
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 5000 {
				return nil, un, fmt.Errorf("%s: data.result[%d].values[%d]: %s %v W: want finite watts in [0, 5000]", o.From, i, j, o.PowerMetric, v)
			}
			if !known {
				un.OtherNode++
				other[node] = true
				continue
			}
			share, ok := a.Share(node, g, pt.Time)
			if !ok {
				un.Unknown++
				continue
			}
			byModel[model] = append(byModel[model], [2]float64{share, v})
			n++
		}
		if n > 0 {
			gpus[model]++
		}
	}
	for n := range other {
		un.OtherNodes = append(un.OtherNodes, n)
	}
	sort.Strings(un.OtherNodes)
	if len(byModel) == 0 {
		sort.Strings(seen)
		return nil, un, fmt.Errorf("%s: no %s sample matched a node and GPU of %s (%d of a node it lacks, %d while a pod with unknown GPUs ran): looked for the node in label %q and the GPU index in label %q; the series' nodes: %s; the pods' nodes: %s",
			o.From, o.PowerMetric, o.AllocFrom, un.OtherNode, un.Unknown, o.NodeLabel, o.GPULabel, list(seen), list(a.Nodes()))
	}
	x := regressor{name: "allocated share", series: "allocated GPU share (pods of " + o.AllocFrom + ")", unit: "allocated share"}
	fits, err := fitAll(byModel, gpus, x, o, cat)
	return fits, un, err
}

// list is at most 10 names, then how many more.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 10 {
		return fmt.Sprintf("%s (and %d more)", strings.Join(names[:10], ", "), len(names)-10)
	}
	return strings.Join(names, ", ")
}

// regressor is what power is fitted over.
type regressor struct {
	name   string // in refusals: "utilisation spans only ..."
	series string // in the source: "samples of POWER vs ..."
	unit   string // in the source: "fitted power at 0% and 100% ..."
}

var utilisation = regressor{name: "utilisation", unit: "utilisation"}

func fitAll(byModel map[string][][2]float64, gpus map[string]int, x regressor, o Options, cat *hw.Catalog) ([]ModelFit, error) {
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	sort.Strings(models)
	var out []ModelFit
	for _, m := range models {
		s := byModel[m]
		// Map order must not reach the fit: sort the samples.
		slices.SortFunc(s, func(a, b [2]float64) int {
			if c := compare(a[0], b[0]); c != 0 {
				return c
			}
			return compare(a[1], b[1])
		})
		f, err := fitModel(m, s, gpus[m], x, o, cat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.From, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// gpuKey identifies a GPU's series: every label but the metric name.
func gpuKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, l[k])
	}
	return b.String()
}

func fitModel(model string, s [][2]float64, gpus int, r regressor, o Options, cat *hw.Catalog) (ModelFit, error) {
	x := make([]float64, len(s))
	y := make([]float64, len(s))
	for i, v := range s {
		x[i], y[i] = v[0], v[1]
	}
	lo, hi := slices.Min(x), slices.Max(x)
	if lo > 0.2 || hi < 0.8 {
		return ModelFit{}, fmt.Errorf("model %q: %s spans only %.0f%%..%.0f%%: idle and full power would be extrapolated (want samples at or below 20%% and at or above 80%%)", model, r.name, lo*100, hi*100)
	}
	p, err := fit.FitPiecewise(x, y, o.Knots)
	if err != nil {
		return ModelFit{}, fmt.Errorf("model %q: %w", model, err)
	}
	pred := make([]float64, len(x))
	for i := range x {
		pred[i] = p.At(x[i])
	}
	f := ModelFit{Model: model, Name: strings.ReplaceAll(strings.TrimSpace(model), " ", "-") + o.Suffix, GPUs: gpus, Samples: len(x),
		Curve: p, RMSEW: fit.RMSE(pred, y), MAPE: fit.MAPE(pred, y), UtilMin: lo, UtilMax: hi}
	g := hw.GPUModel{Name: f.Name, IdleW: hw.Watts(round3(p.Values[0])), TDPW: hw.Watts(round3(p.Values[len(p.Values)-1]))}
	if known, err := cat.GPU(strings.ReplaceAll(strings.TrimSpace(model), " ", "-")); err == nil {
		g.MemoryGiB = known.MemoryGiB
	}
	for i := 1; i < len(p.Knots)-1; i++ {
		g.Curve = append(g.Curve, hw.CurvePoint{Share: p.Knots[i], Watts: hw.Watts(round3(p.Values[i]))})
	}
	vs := o.UtilMetric
	if r.series != "" {
		vs = r.series
	}
	g.Source = fmt.Sprintf("wattsched calibrate: least squares over %d samples of %s vs %s from %d GPU(s) (%s); fit RMSE %.2f W, MAPE %.2f%%; idle_w and tdp_w are the fitted power at 0%% and 100%% %s",
		f.Samples, o.PowerMetric, vs, gpus, o.From, f.RMSEW, f.MAPE, r.unit)
	if len(g.Curve) > 0 {
		g.Source += "; the curve's shares are " + r.unit + " fractions"
	}
	if g.MemoryGiB == 0 {
		g.Source += "; memory_gib unknown (0): set it"
	}
	f.GPU = g
	// The catalog's own validation: positive full power, idle <= full, a
	// non-decreasing curve between them.
	if _, err := hw.Default().With(&hw.Catalog{GPUs: []hw.GPUModel{g}}, "calibrated catalog"); err != nil {
		return ModelFit{}, fmt.Errorf("model %q: the fitted model is not a valid catalog entry (%w): fewer knots, or more samples across %s, may help", model, err, r.name)
	}
	return f, nil
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// CatalogYAML is the bring-your-own-hardware catalog file of fits (the
// format hw.ParseFile reads and `wattsched run --catalog` adds).
func CatalogYAML(fits []ModelFit, header string) ([]byte, error) {
	doc := struct {
		GPUs []hw.GPUModel `yaml:"gpus"`
	}{}
	for _, f := range fits {
		doc.GPUs = append(doc.GPUs, f.GPU)
	}
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		fmt.Fprintf(&b, "# %s\n", l)
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
