package experiment

import (
	"fmt"
	"math"
	"strings"

	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// PWRScenario is the PWR paper's comparison (FGD, PWR, alpha*PWR+(1-alpha)*FGD
// for alpha in {0.05, 0.1, 0.2}, BestFit, DotProd, GpuPacking,
// GpuClustering) on the named openb pod list.
func PWRScenario(trace string, seeds int, compat string) (*Scenario, error) {
	known := false
	for _, t := range alibaba2023.Traces() {
		known = known || t == trace
	}
	if !known {
		return nil, fmt.Errorf("unknown trace %q (known: %s)", trace, strings.Join(alibaba2023.Traces(), ", "))
	}
	s, err := Builtin("pwr-default")
	if err != nil {
		return nil, err
	}
	s.Name = "pwr-" + trace
	s.Trace.Pods = trace
	s.Seeds = seeds
	s.Compat = compat
	return s, s.Validate()
}

// Claim is one statement of the PWR paper about a trace, checked on the curves.
type Claim struct {
	What    string // the paper's statement
	Where   string // section and figure
	Paper   string // the paper's figure
	Measure func(curves []CurvePoint) (value float64, holds bool)
	Format  func(v float64) string
}

// ClaimResult is a claim with the measured value.
type ClaimResult struct {
	What     string `json:"claim"`
	Where    string `json:"where"`
	Paper    string `json:"paper"`
	Measured string `json:"measured"`
	Holds    bool   `json:"holds"`
	Value    Num    `json:"value"`
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

var combos = []string{"0.05*PWR+0.95*FGD", "0.1*PWR+0.9*FGD", "0.2*PWR+0.8*FGD"}
var competitors = []string{"BestFit", "DotProd", "GpuPacking", "GpuClustering"}

func savingFn(c CurvePoint) float64 { return c.SavingVsFGD }

// minSavingClaim: each policy's saving vs FGD stays >= floor on [0.15, until].
func minSavingClaim(policies []string, floor, until float64, where string) Claim {
	return Claim{
		What:  fmt.Sprintf("%s save > %.0f%% vs FGD from 0.15 to %.2f requested", strings.Join(policies, ", "), 100*floor, until),
		Where: where, Paper: fmt.Sprintf("> %.0f%%", 100*floor),
		Measure: func(cs []CurvePoint) (float64, bool) {
			worst := math.Inf(1)
			for _, p := range policies {
				worst = min(worst, MinOf(Over(Series(cs, p), 0.15, until, savingFn)))
			}
			return worst, worst > floor
		},
		Format: func(v float64) string { return "min " + pct(v) },
	}
}

// PWRClaims lists the paper's quantitative statements about a trace.
func PWRClaims(trace string) []Claim {
	var cl []Claim
	switch trace {
	case "default":
		cl = append(cl,
			minSavingClaim(combos, 0.13, 0.80, "Sec. VI-C1, Fig. 3"),
			minSavingClaim(combos, 0.05, 0.90, "Sec. VI-C1, Fig. 3"),
			Claim{What: "competitors (BestFit, DotProd, GpuPacking, GpuClustering) never exceed 5% saving vs FGD (0..1.0)",
				Where: "Sec. VI-C1, Fig. 3", Paper: "< 5%",
				Measure: func(cs []CurvePoint) (float64, bool) {
					best := math.Inf(-1)
					for _, p := range competitors {
						best = max(best, MaxOf(Over(Series(cs, p), 0.01, 1.0, savingFn)))
					}
					return best, best < 0.05
				},
				Format: func(v float64) string { return "max " + pct(v) }},
			Claim{What: "GRAR gap of the PWR+FGD combinations to FGD at 0.9..1.0 requested is about 2%",
				Where: "Sec. VI-D1, Fig. 7", Paper: "~2% (0.02)",
				Measure: func(cs []CurvePoint) (float64, bool) {
					gap := math.Inf(-1)
					ref := Series(cs, "FGD")
					for _, p := range combos {
						for _, c := range Over(Series(cs, p), 0.90, 1.0, func(c CurvePoint) float64 { return c.Ratio }) {
							a, _ := At(Series(cs, p), c)
							r, _ := At(ref, c)
							gap = max(gap, r.GRAR-a.GRAR)
						}
					}
					return gap, gap <= 0.03
				},
				Format: func(v float64) string { return fmt.Sprintf("max %.3f", v) }},
			Claim{What: "every policy schedules every task (GRAR = 1) until about 0.88 requested",
				Where: "Sec. VI-B, Fig. 2", Paper: "~0.85-0.88",
				Measure: func(cs []CurvePoint) (float64, bool) {
					first := math.Inf(1)
					for _, c := range cs {
						if c.GRAR < 0.999 {
							first = min(first, c.Ratio)
						}
					}
					return first, first >= 0.80
				},
				Format: func(v float64) string { return fmt.Sprintf("first drop at %.2f", v) }},
			Claim{What: "FGD's EOPC starts just above 200 kW and peaks at about 1.4 MW",
				Where: "Sec. VI-A, Fig. 1", Paper: "~0.2 MW -> ~1.4 MW",
				Measure: func(cs []CurvePoint) (float64, bool) {
					s := Series(cs, "FGD")
					if len(s) == 0 {
						return math.NaN(), false
					}
					lo, hi := s[0].EOPCW, MaxOf(Over(s, 0, 10, func(c CurvePoint) float64 { return c.EOPCW }))
					return hi, lo > 150e3 && lo < 300e3 && hi > 1.1e6 && hi < 1.7e6
				},
				Format: func(v float64) string { return fmt.Sprintf("peak %.2f MW", v/1e6) }},
			Claim{What: "GPUs draw 72-76% of FGD's EOPC",
				Where: "Sec. VI-A, Fig. 1", Paper: "72-76%",
				Measure: func(cs []CurvePoint) (float64, bool) {
					s := Series(cs, "FGD")
					share := Over(s, 0.05, 1.0, func(c CurvePoint) float64 { return c.GPUW / c.EOPCW })
					lo, hi := MinOf(share), MaxOf(share)
					return (lo + hi) / 2, lo > 0.65 && hi < 0.85
				},
				Format: func(v float64) string { return "mid " + pct(v) }},
		)
	case "gpushare100":
		cl = append(cl, minSavingClaim(combos, 0.13, 0.70, "Sec. VI-C2, Fig. 4"), minSavingClaim(combos, 0.05, 0.80, "Sec. VI-C2, Fig. 4"))
	case "multigpu20":
		cl = append(cl, minSavingClaim(combos[1:], 0.12, 0.80, "Sec. VI-C3, Fig. 5"), minSavingClaim(combos[:1], 0.07, 0.80, "Sec. VI-C3, Fig. 5"))
	case "multigpu50":
		cl = append(cl, minSavingClaim(combos[2:], 0.07, 0.90, "Sec. VI-C3, Fig. 5"), minSavingClaim(combos[:2], 0.04, 0.90, "Sec. VI-C3, Fig. 5"))
	case "gpuspec10":
		cl = append(cl, minSavingClaim(combos, 0.10, 0.82, "Sec. VI-C4, Fig. 6"))
	}
	return cl
}

// EvaluateClaims measures each claim.
func EvaluateClaims(cl []Claim, curves []CurvePoint) []ClaimResult {
	out := make([]ClaimResult, 0, len(cl))
	for _, c := range cl {
		v, ok := c.Measure(curves)
		out = append(out, ClaimResult{What: c.What, Where: c.Where, Paper: c.Paper, Measured: c.Format(v), Holds: ok, Value: Num(v)})
	}
	return out
}
