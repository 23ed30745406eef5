package tasks

import (
	"fmt"
	"math"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/report"
)

// bandRatios are the requested capacities at which an inflation run's
// EOPC is set against the power model's error (those of MoneyTable).
var bandRatios = []float64{0.5, 1.0}

// EOPCModelError is one policy's EOPC at one requested capacity with the
// power model's error band, and its saving against the reference with the
// bound on the power model's error of that saving (CurvePoint).
type EOPCModelError struct {
	Policy string         `json:"policy"`
	Ratio  experiment.Num `json:"requested_ratio"`
	EOPCW  experiment.Num `json:"eopc_w"`
	// BandW is EOPC's power model band (a half-width, W; not a seed
	// interval).
	BandW experiment.Num `json:"eopc_model_band_w"`
	// Saving and Bound are the saving against the reference and the bound
	// on the power model's error of it (fractions; NaN, null, for the
	// reference or without one); Verdict is WithinModelError when
	// |Saving| <= Bound, else BeyondModelError ("" for the reference).
	Saving  experiment.Num `json:"saving"`
	Bound   experiment.Num `json:"saving_model_bound"`
	Verdict string         `json:"verdict,omitempty"`
}

// eopcModelErrors are every policy's EOPCModelError at bandRatios.
func eopcModelErrors(r *InflationResult, curves []CurvePoint) []EOPCModelError {
	var out []EOPCModelError
	ref := r.Scenario.ReferencePolicy()
	for _, name := range r.Scenario.PolicyNames() {
		s := Series(curves, name)
		for _, q := range bandRatios {
			c, ok := At(s, q)
			if !ok {
				continue
			}
			x := EOPCModelError{Policy: name, Ratio: experiment.Num(q), EOPCW: experiment.Num(c.EOPCW), BandW: experiment.Num(c.EOPCBandW),
				Saving: experiment.Num(c.SavingVsFGD), Bound: experiment.Num(c.SavingModelBound)}
			if name == ref {
				x.Saving, x.Bound = experiment.Num(math.NaN()), experiment.Num(math.NaN())
			} else if !math.IsNaN(c.SavingVsFGD) && !math.IsNaN(c.SavingModelBound) {
				x.Verdict = modelVerdict(c.SavingVsFGD, c.SavingModelBound)
			}
			out = append(out, x)
		}
	}
	return out
}

// eopcModelErrorTable renders eopcModelErrors.
func eopcModelErrorTable(xs []EOPCModelError, ref string) report.Table {
	t := report.Table{Title: "EOPC and the saving vs " + ref + " against the power model's error (docs/power-models.md#error-bands-in-results)",
		Head: []string{"policy", "requested", "EOPC kW", "power model ± kW", "saving", "bound", "vs power model's error"}}
	for _, x := range xs {
		sv, bd, v := "-", "-", "-"
		if !math.IsNaN(float64(x.Saving)) {
			sv, bd = fmt.Sprintf("%+.1f%%", 100*float64(x.Saving)), fmt.Sprintf("%.1f%%", 100*float64(x.Bound))
		}
		if x.Verdict != "" {
			v = x.Verdict
		}
		t.Rows = append(t.Rows, []string{x.Policy, fmt.Sprintf("%.2f", float64(x.Ratio)), fmt.Sprintf("%.1f", float64(x.EOPCW)/1000),
			fmt.Sprintf("%.1f", float64(x.BandW)/1000), sv, bd, v})
	}
	return t
}
