package tasks

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/scenario"
)

// modelErrorFigure, pooledGroup and modelErrors are the study's figures
// (experiment.ModelErrors), of which this package reads pwr's and
// measured-busy's.
type modelErrorFigure = experiment.ModelErrorFigure

const pooledGroup = experiment.PooledGroup

var modelErrors = experiment.ModelErrors

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
