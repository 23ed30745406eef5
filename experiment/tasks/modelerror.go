package tasks

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/scenario"
)

// modelErrorFigure is the measured error of a power model's busy-GPU
// power on a group of catalog GPUs (or pooled over every measured group),
// relative to the prediction, from `wattsched validate power` on the
// shared traces (validate.Result.Bands; TestModelErrorsAreTheStudys ties
// the two). P95Rel is the 95th percentile of |predicted - measured| /
// predicted, Bias the mean of (predicted - measured) / predicted, each
// workload weighted equally, at the default power limit or frequency.
type modelErrorFigure struct {
	PowerModel, Group string
	Catalog           []string
	Workloads, Points int
	P95Rel, Bias      float64
}

// pooledGroup names the figure over every measured GPU group.
const pooledGroup = "pooled"

// modelErrors are the study's figures (validate power, 2026-11-28).
var modelErrors = []modelErrorFigure{
	{"measured-busy", "A100", []string{"A100"}, 2, 32, 0.1990972388061934, -0.17948824148296236},
	{"measured-busy", "P100", []string{"P100"}, 6, 45, 0.7625912531269992, -0.0335645111701603},
	{"measured-busy", "V100", []string{"V100M16", "V100M32"}, 10, 14535, 0.8783521261630867, -0.021641230377809278},
	{"measured-busy", pooledGroup, nil, 18, 14612, 1.158173612758661, 0.12481217805183097},
	{"pwr", "A100", []string{"A100"}, 2, 32, 0.1990972388061934, -0.17948824148296236},
	{"pwr", "P100", []string{"P100"}, 6, 45, 0.8642054514631019, 0.5003989269623671},
	{"pwr", "V100", []string{"V100M16", "V100M32"}, 10, 14535, 0.8736999793833805, 0.42635622869598083},
	{"pwr", pooledGroup, nil, 18, 14612, 0.8698737114889576, 0.38372107587600474},
}

// ModelError is the error figure a run applies to one GPU model's
// busy-GPU energy.
type ModelError struct {
	// P95Rel and Bias are relative to the model's prediction (see
	// modelErrorFigure).
	P95Rel, Bias float64
	// Source says which figure: the GPU group measured, or "pooled" with
	// why.
	Source string
}

// modelErrorFor is the error figure for the GPU model a node list names
// (an alias resolved by cat) under power model pm (scenario power_model,
// "" the default pwr): its measured group's figure, or the figure pooled
// over every measured group for a model without measurements or with its
// own measured curve (no public measurement checks a curve).
func modelErrorFor(cat *hw.Catalog, pm, gpuModel string) ModelError {
	if pm == "" {
		pm = scenario.PowerModelPWR
	}
	var pooled modelErrorFigure
	for _, f := range modelErrors {
		if f.PowerModel == pm && f.Group == pooledGroup {
			pooled = f
		}
	}
	name := gpuModel
	g, err := cat.GPU(gpuModel)
	if err == nil {
		name = g.Name
	}
	why := "no public measurement of " + name
	if err == nil && len(g.Curve) > 0 && !(pm == scenario.PowerModelMeasuredBusy && g.BusyW > 0 && len(g.Curve) == 2 && g.Curve[1].Watts == g.BusyW) {
		why = name + "'s measured curve is not checked by the study"
	} else {
		for _, f := range modelErrors {
			if f.PowerModel == pm && slices.Contains(f.Catalog, name) {
				return ModelError{P95Rel: f.P95Rel, Bias: f.Bias, Source: fmt.Sprintf("%s group (%d workloads, %d points)", f.Group, f.Workloads, f.Points)}
			}
		}
	}
	return ModelError{P95Rel: pooled.P95Rel, Bias: pooled.Bias, Source: fmt.Sprintf("pooled over the measured groups (%d workloads): %s", pooled.Workloads, why)}
}

// modelBand is the power model's error band of an energy figure whose
// busy-GPU part is busy[m] kWh on each GPU model m: sum_m busy[m] x
// p95rel_m (kWh, a half-width).
func modelBand(busy []float64, errs []ModelError) float64 {
	var b float64
	for m, e := range busy {
		b += e * errs[m].P95Rel
	}
	return b
}

// diffBound bounds the power model's error of the difference between two
// systems priced by the same model: a common relative error scales both
// busy energies and cancels in the difference, so what is left is
// sum_m |a[m] - b[m]| x p95rel_m (kWh). Systems priced by different
// models (a variant with another power_model) get the sum of their bands:
// nothing cancels.
func diffBound(a, b []float64, ea, eb []ModelError, samePricing bool) float64 {
	if !samePricing {
		return modelBand(a, ea) + modelBand(b, eb)
	}
	var d float64
	for m := range a {
		d += math.Abs(a[m]-b[m]) * ea[m].P95Rel
	}
	return d
}
