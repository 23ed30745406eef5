package experiment

import "fmt"

// ModelErrorFigure is the measured error of a power model's power on a
// group of GPUs (or pooled over every measured group), relative to the
// prediction, from `wattsched validate power` on the shared traces
// (validate.Result.Bands; TestModelErrorsAreTheStudys ties the two).
// P95Rel is the 95th percentile of |predicted - measured| / predicted, Bias
// the mean of (predicted - measured) / predicted, each workload weighted
// equally (docs/power-models.md).
type ModelErrorFigure struct {
	PowerModel, Group string
	Catalog           []string
	Workloads, Points int
	P95Rel, Bias      float64
}

// PooledGroup names the figure over every measured GPU group.
const PooledGroup = "pooled"

// ModelErrors are the study's figures (validate power, 2026-11-28), sorted
// by power model and group as the study writes them. pwr and
// measured-busy price the placement engine's busy GPUs (at the default
// power limit); powerflow-dvfs, held out by frequency on Perseus' stage
// profiles, prices the elastic engine's job energy; vahrm-variation, held
// out by device on Longhorn's V100s, the HPC engine's GPU power.
var ModelErrors = []ModelErrorFigure{
	{"measured-busy", "A100", []string{"A100"}, 2, 32, 0.1990972388061934, -0.17948824148296236},
	{"measured-busy", "P100", []string{"P100"}, 6, 45, 0.7625912531269992, -0.0335645111701603},
	{"measured-busy", "V100", []string{"V100M16", "V100M32"}, 10, 14535, 0.8783521261630867, -0.021641230377809278},
	{"measured-busy", PooledGroup, nil, 18, 14612, 1.158173612758661, 0.12481217805183097},
	{"powerflow-dvfs", "A100-SXM", nil, 2, 960, 0.058850426917303224, -0.006439281680888421},
	{"powerflow-dvfs", "A40", nil, 2, 1664, 0.030407048081302755, -0.0029227619604329227},
	{"pwr", "A100", []string{"A100"}, 2, 32, 0.1990972388061934, -0.17948824148296236},
	{"pwr", "P100", []string{"P100"}, 6, 45, 0.8642054514631019, 0.5003989269623671},
	{"pwr", "V100", []string{"V100M16", "V100M32"}, 10, 14535, 0.8736999793833805, 0.42635622869598083},
	{"pwr", PooledGroup, nil, 18, 14612, 0.8698737114889576, 0.38372107587600474},
	{"vahrm-variation", "V100-Longhorn", nil, 4, 523, 0.014696136988307958, 0.0032664893436076896},
}

// ModelErrorOf is the figure of power model pm on group; it panics on a
// pair the table lacks (a programming error: callers name rows of it).
func ModelErrorOf(pm, group string) ModelErrorFigure {
	for _, f := range ModelErrors {
		if f.PowerModel == pm && f.Group == group {
			return f
		}
	}
	panic(fmt.Sprintf("experiment: no model error figure for %s on %s", pm, group))
}

// BandOf is the half-width of the power model's error band on energy
// priced by power model pm on group: energy x the figure's p95 relative
// error, in energy's unit.
func BandOf(energy float64, pm, group string) float64 {
	return energy * ModelErrorOf(pm, group).P95Rel
}

// UntestedBand is the line for energy priced by a model no public
// measurement checks: what the model prices and why there is no band.
func UntestedBand(what, why string) string {
	return fmt.Sprintf("no error band: %s is untested (%s); its energy figures carry an error no measurement bounds (docs/power-models.md, Untested)", what, why)
}

// Note is the band's sentence for a reproduction's notes: what it covers
// and where its figure comes from.
func (f ModelErrorFigure) Note(what, covers string) string {
	return fmt.Sprintf("power model's error band (%s): +/- %.1f%% of %s, the p95 relative error of %s on %s in `wattsched validate power` (%d workloads, %d points; bias %+.1f%%); separate from the seed interval",
		what, 100*f.P95Rel, covers, f.PowerModel, f.Group, f.Workloads, f.Points, 100*f.Bias)
}
