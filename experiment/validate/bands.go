package validate

import (
	"cmp"
	"math"
	"slices"
)

// BandFigure is the error of a power model's busy-GPU power on one group
// of catalog GPUs (or, Group Pooled, on every measured group together),
// relative to the prediction: the figures that turn a run's busy-GPU
// energy into an error band (experiment/tasks' model error table).
type BandFigure struct {
	// PowerModel is the scenario's power_model ("pwr", "measured-busy").
	PowerModel string
	// Group is the busy group (V100, P100, A100) or Pooled.
	Group   string
	Catalog []string
	// Scored names the study's model whose points the figure is over
	// (measured-busy-pooled for the pooled measured-busy figure).
	Scored              string
	Workloads, Points   int
	P95RelPred, BiasRel float64
}

// Pooled names the figure over every measured group, which stands in for
// a GPU model without measurements.
const Pooled = "pooled"

// Bands are the error figures per power model and busy group, and pooled.
// Only points at each file's default setting (highest power limit or
// frequency: a run's GPUs are not capped) count. The error of a point is
// relative to the prediction, (predicted - measured) / predicted: an
// energy E priced by the model is off from the measured by E times that.
// Each workload (source GPU and workload) weighs the same, its points
// sharing its weight (as busy_w weighs them). P95RelPred is the weighted
// 95th percentile of the absolute error (the smallest error at which the
// cumulative weight reaches 0.95), BiasRel the weighted mean signed error.
// pwr is scored by the study's pwr points, measured-busy by its held-out
// points (measured-busy per group; measured-busy-pooled, held out by
// group, for the pooled figure). The two models that price other engines'
// energy get a figure per source GPU over every one of their held-out
// points, at every setting (their engines run at every frequency and on
// every device): powerflow-dvfs (held out by frequency) prices the
// elastic engine's job energy, vahrm-variation (held out by device) the
// HPC engine's GPU power.
func (r *Result) Bands() []BandFigure {
	type key struct{ pm, group, scored string }
	groups := map[key][]scored{}
	byModel := map[string][]scored{}
	for _, p := range r.points {
		byModel[p.model] = append(byModel[p.model], p)
	}
	for _, sc := range []struct{ model, pm string }{{PWR, "pwr"}, {Busy, "measured-busy"}, {BusyPooled, "measured-busy"}} {
		top := map[string]float64{}
		for _, p := range byModel[sc.model] {
			if p.Knob != "" {
				top[p.File] = max(top[p.File], p.KnobValue)
			}
		}
		for _, p := range byModel[sc.model] {
			g, ok := busyGroup[p.GPU]
			if !ok || (p.Knob != "" && p.KnobValue != top[p.File]) {
				continue
			}
			if sc.model != BusyPooled {
				groups[key{sc.pm, g, sc.model}] = append(groups[key{sc.pm, g, sc.model}], p)
			}
			if sc.model != Busy {
				groups[key{sc.pm, Pooled, sc.model}] = append(groups[key{sc.pm, Pooled, sc.model}], p)
			}
		}
	}
	for _, m := range []string{DVFS, Variation} {
		for _, p := range byModel[m] {
			groups[key{m, p.GPU, m}] = append(groups[key{m, p.GPU, m}], p)
		}
	}
	var out []BandFigure
	for k, pts := range groups {
		f := BandFigure{PowerModel: k.pm, Group: k.group, Catalog: busyCatalog[k.group], Scored: k.scored, Points: len(pts)}
		f.Workloads, f.P95RelPred, f.BiasRel = relError(pts)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b BandFigure) int {
		return cmp.Or(cmp.Compare(a.PowerModel, b.PowerModel), cmp.Compare(a.Group, b.Group))
	})
	return out
}

// relError is the workload-weighted 95th percentile of |predicted -
// measured| / predicted and the weighted mean of the signed error, over
// pts, and the number of workloads.
func relError(pts []scored) (workloads int, p95, bias float64) {
	per := map[string]int{}
	for _, p := range pts {
		per[p.GPU+" "+p.Workload]++
	}
	type e struct{ abs, d, w float64 }
	es := make([]e, len(pts))
	for i, p := range pts {
		d := (p.predicted - p.Watts) / p.predicted
		es[i] = e{math.Abs(d), d, 1 / float64(len(per)*per[p.GPU+" "+p.Workload])}
	}
	// Sorted first, so that neither figure depends on the rows' order.
	slices.SortFunc(es, func(a, b e) int {
		return cmp.Or(cmp.Compare(a.abs, b.abs), cmp.Compare(a.d, b.d), cmp.Compare(a.w, b.w))
	})
	var cum float64
	p95 = math.NaN()
	for _, x := range es {
		bias += x.w * x.d
		cum += x.w
		if math.IsNaN(p95) && cum >= 0.95-1e-12 {
			p95 = x.abs
		}
	}
	return len(per), p95, bias
}
