package tasks

import (
	"math"
	"slices"

	"github.com/wattsched/wattsched/experiment"
	elgrid "github.com/wattsched/wattsched/grid"
)

// CurvePoint is one policy's state at one requested-GPU ratio, averaged
// over seeds (Std fields are the standard deviation over seeds).
type CurvePoint struct {
	Policy       string
	Ratio        float64
	EOPCW        float64
	EOPCStdW     float64
	CPUW, GPUW   float64
	SavingVsFGD  float64 // 1 - EOPC/EOPC(FGD); NaN without an FGD policy
	GRAR         float64
	GRARStd      float64
	AllocShare   float64
	FragRatio    float64
	FragGPUMilli float64
	Failed       float64
	// BusyGPUW is the mean busy-GPU power of each GPU model over the seeds
	// (InflationResult.ModelErrors' order); EOPCBandW the power model's
	// error band of EOPCW (sum over models of BusyGPUW x p95 relative
	// error; not a seed interval); SavingModelBound bounds the power
	// model's error of SavingVsFGD (sum over models of |BusyGPUW -
	// FGD's| x p95, over FGD's EOPC; NaN without FGD).
	BusyGPUW         []float64
	EOPCBandW        float64
	SavingModelBound float64
}

// Curves averages the runs over seeds for each policy, in scenario order.
func (r *InflationResult) Curves() []CurvePoint {
	var out []CurvePoint
	ref := map[int]float64{}
	refBusy := map[int][]float64{}
	refName := r.Scenario.ReferencePolicy()
	for _, name := range r.Scenario.PolicyNames() {
		runs := r.RunsOf(name)
		if len(runs) == 0 {
			continue
		}
		for k := range runs[0].Grid {
			col := func(f func(g GridPoint) float64) []float64 {
				xs := make([]float64, len(runs))
				for i, run := range runs {
					xs[i] = f(run.Grid[k])
				}
				return xs
			}
			p := CurvePoint{Policy: name, Ratio: runs[0].Grid[k].Ratio}
			p.EOPCW, p.EOPCStdW = experiment.MeanStd(col(func(g GridPoint) float64 { return float64(g.EOPCW) }))
			p.CPUW, _ = experiment.MeanStd(col(func(g GridPoint) float64 { return float64(g.CPUW) }))
			p.GPUW, _ = experiment.MeanStd(col(func(g GridPoint) float64 { return float64(g.GPUW) }))
			p.GRAR, p.GRARStd = experiment.MeanStd(col(func(g GridPoint) float64 { return g.GRAR }))
			p.AllocShare, _ = experiment.MeanStd(col(func(g GridPoint) float64 { return g.AllocShare }))
			p.FragRatio, _ = experiment.MeanStd(col(func(g GridPoint) float64 { return g.FragRatio }))
			p.FragGPUMilli, _ = experiment.MeanStd(col(func(g GridPoint) float64 { return g.FragGPUMilli }))
			p.Failed, _ = experiment.MeanStd(col(func(g GridPoint) float64 { return float64(g.Failed) }))
			// Before the first arrival (the initial state) no GPU is busy:
			// a grid point there has no busy powers.
			for m := range r.ModelErrors {
				w, _ := experiment.MeanStd(col(func(g GridPoint) float64 {
					if m < len(g.BusyGPUW) {
						return float64(g.BusyGPUW[m])
					}
					return 0
				}))
				p.BusyGPUW = append(p.BusyGPUW, w)
			}
			if len(r.ModelErrors) == len(p.BusyGPUW) {
				p.EOPCBandW = modelBand(p.BusyGPUW, r.ModelErrors)
			}
			if name == refName {
				ref[k] = p.EOPCW
				refBusy[k] = p.BusyGPUW
			}
			out = append(out, p)
		}
	}
	for i := range out {
		k := int(math.Round(out[i].Ratio * 100))
		if e, ok := ref[k]; ok && e > 0 {
			out[i].SavingVsFGD = 1 - out[i].EOPCW/e
			out[i].SavingModelBound = math.NaN()
			if len(r.ModelErrors) == len(out[i].BusyGPUW) && len(refBusy[k]) == len(out[i].BusyGPUW) {
				out[i].SavingModelBound = diffBound(out[i].BusyGPUW, refBusy[k], r.ModelErrors, r.ModelErrors, true) / e
			}
		} else {
			out[i].SavingVsFGD = math.NaN()
			out[i].SavingModelBound = math.NaN()
		}
	}
	return out
}

// Series picks one policy's points.
func Series(curves []CurvePoint, policyName string) []CurvePoint {
	var out []CurvePoint
	for _, c := range curves {
		if c.Policy == policyName {
			out = append(out, c)
		}
	}
	return out
}

// Over returns the values of f on the points with lo <= ratio <= hi.
func Over(s []CurvePoint, lo, hi float64, f func(CurvePoint) float64) []float64 {
	var out []float64
	for _, c := range s {
		if c.Ratio >= lo-1e-9 && c.Ratio <= hi+1e-9 {
			out = append(out, f(c))
		}
	}
	return out
}

// MinOf and MaxOf return the extremes (NaN for none).
func MinOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Min(xs)
}

// MaxOf returns the largest value (NaN for none).
func MaxOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Max(xs)
}

// At returns the point at a ratio.
func At(s []CurvePoint, ratio float64) (CurvePoint, bool) {
	for _, c := range s {
		if math.Abs(c.Ratio-ratio) < 1e-9 {
			return c, true
		}
	}
	return CurvePoint{}, false
}

// PolicySummary condenses one policy's curve.
type PolicySummary struct {
	Policy string `json:"policy"`
	// Savings vs FGD (fractions) over ranges of requested capacity.
	SavingMin15to80  experiment.Num `json:"saving_min_0.15_0.80"`
	SavingMean15to80 experiment.Num `json:"saving_mean_0.15_0.80"`
	SavingMin80to90  experiment.Num `json:"saving_min_0.80_0.90"`
	SavingMax0to100  experiment.Num `json:"saving_max_0_1.00"`
	EOPCAt50W        experiment.Num `json:"eopc_w_at_0.50"`
	EOPCAt100W       experiment.Num `json:"eopc_w_at_1.00"`
	// Money (USD) and carbon (kg CO2eq) of a year at the EOPC of 0.5 and
	// 1.0 requested capacity: that power for the 8,760 hours from the
	// grid's start, each hour at its price and carbon intensity, times the
	// PUE.
	CostPerYearAt50USD  experiment.Num `json:"cost_usd_per_year_at_0.50"`
	CO2PerYearAt50Kg    experiment.Num `json:"co2_kg_per_year_at_0.50"`
	CostPerYearAt100USD experiment.Num `json:"cost_usd_per_year_at_1.00"`
	CO2PerYearAt100Kg   experiment.Num `json:"co2_kg_per_year_at_1.00"`
	GRARAt100           experiment.Num `json:"grar_at_1.00"`
	GRARGapToFGD100     experiment.Num `json:"grar_gap_to_fgd_at_1.00"`
	GRARGapToFGDMax     experiment.Num `json:"grar_gap_to_fgd_max_0.85_1.00"`
	FirstGRARBelow1     experiment.Num `json:"first_ratio_grar_below_0.999"`
	AllocShareFinal     experiment.Num `json:"alloc_share_final"`
	AllocShareAt100     experiment.Num `json:"alloc_share_at_1.00"`
	FragRatioAt90       experiment.Num `json:"frag_ratio_at_0.90"`
	FailedFinal         experiment.Num `json:"failed_tasks_final"`
	Tasks               experiment.Num `json:"tasks_mean"`
	DecisionsPerTask    experiment.Num `json:"decisions_per_task"`
}

// YearPerWatt is the money (USD) and carbon (kg) of drawing 1 W for a
// year (8,760 hours from the account's start, each at its price and carbon
// intensity, times the PUE): a load level's year is its EOPC times these.
// NaN without an account.
func (r *InflationResult) YearPerWatt() (usd, kg float64) {
	if r.Account == nil {
		return math.NaN(), math.NaN()
	}
	u, k, err := r.Account.Cost(elgrid.YearAt(1))
	if err != nil { // the account wraps: every hour is in the series
		return math.NaN(), math.NaN()
	}
	return u, k
}

// Summaries condenses every policy's curve.
func (r *InflationResult) Summaries(curves []CurvePoint) []PolicySummary {
	usdPerW, kgPerW := r.YearPerWatt()
	nan := experiment.Num(math.NaN())
	refName := r.Scenario.ReferencePolicy()
	ref := Series(curves, refName)
	var out []PolicySummary
	for _, name := range r.Scenario.PolicyNames() {
		s := Series(curves, name)
		saving := func(c CurvePoint) float64 { return c.SavingVsFGD }
		ps := PolicySummary{Policy: name,
			SavingMin15to80: experiment.Num(MinOf(Over(s, 0.15, 0.80, saving))),
			SavingMin80to90: experiment.Num(MinOf(Over(s, 0.80, 0.90, saving))),
			SavingMax0to100: experiment.Num(MaxOf(Over(s, 0.01, 1.00, saving))),
			FirstGRARBelow1: nan,
			// NaN without the point (target below the ratio)
			EOPCAt50W: nan, EOPCAt100W: nan, CostPerYearAt50USD: nan, CO2PerYearAt50Kg: nan, CostPerYearAt100USD: nan, CO2PerYearAt100Kg: nan,
			GRARAt100: nan, GRARGapToFGD100: nan, AllocShareAt100: nan, FragRatioAt90: nan,
		}
		if m := Over(s, 0.15, 0.80, saving); len(m) > 0 {
			mean, _ := experiment.MeanStd(m)
			ps.SavingMean15to80 = experiment.Num(mean)
		}
		if c, ok := At(s, 0.5); ok {
			ps.EOPCAt50W, ps.CostPerYearAt50USD, ps.CO2PerYearAt50Kg = experiment.Num(c.EOPCW), experiment.Num(c.EOPCW*usdPerW), experiment.Num(c.EOPCW*kgPerW)
		}
		if c, ok := At(s, 1.0); ok {
			ps.EOPCAt100W, ps.GRARAt100, ps.AllocShareAt100 = experiment.Num(c.EOPCW), experiment.Num(c.GRAR), experiment.Num(c.AllocShare)
			ps.CostPerYearAt100USD, ps.CO2PerYearAt100Kg = experiment.Num(c.EOPCW*usdPerW), experiment.Num(c.EOPCW*kgPerW)
			if rc, ok := At(ref, 1.0); ok {
				ps.GRARGapToFGD100 = experiment.Num(rc.GRAR - c.GRAR)
			}
		}
		if c, ok := At(s, 0.9); ok {
			ps.FragRatioAt90 = experiment.Num(c.FragRatio)
		}
		gap := math.Inf(-1)
		for _, c := range s {
			if c.Ratio >= 0.85-1e-9 && c.Ratio <= 1.0+1e-9 {
				if rc, ok := At(ref, c.Ratio); ok {
					gap = max(gap, rc.GRAR-c.GRAR)
				}
			}
			if math.IsNaN(float64(ps.FirstGRARBelow1)) && c.GRAR < 0.999 {
				ps.FirstGRARBelow1 = experiment.Num(c.Ratio)
			}
		}
		ps.GRARGapToFGDMax = experiment.Num(gap)
		if len(s) > 0 {
			last := s[len(s)-1]
			ps.AllocShareFinal, ps.FailedFinal = experiment.Num(last.AllocShare), experiment.Num(last.Failed)
		}
		runs := r.RunsOf(name)
		var tasks, dec float64
		for _, run := range runs {
			tasks += float64(run.Tasks)
			dec += float64(run.Decisions)
		}
		if len(runs) > 0 && tasks > 0 {
			ps.Tasks = experiment.Num(tasks / float64(len(runs)))
			ps.DecisionsPerTask = experiment.Num(dec / tasks)
		}
		if refName == "" {
			ps.SavingMin15to80, ps.SavingMin80to90, ps.SavingMax0to100, ps.SavingMean15to80 = nan, nan, nan, nan
		}
		out = append(out, ps)
	}
	return out
}
