// Package pwr is the study of Lettich et al.'s PWR paper (power- and
// fragmentation-aware placement of GPU-sharing tasks, pwr-fgd): workload
// inflation on the openb traces with FGD, PWR, their combinations and the
// baselines, and the paper's claims checked on the curves.
package pwr

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// CurvePoint is one policy's state at one requested-GPU ratio.
type CurvePoint = experiment.CurvePoint

// Claim is one statement of the PWR paper about a trace, checked on the curves.
type Claim = experiment.Claim[[]CurvePoint]

// Scenario is the PWR paper's comparison (FGD, PWR, alpha*PWR+(1-alpha)*FGD
// for alpha in {0.05, 0.1, 0.2}, BestFit, DotProd, GpuPacking,
// GpuClustering) on the named openb pod list.
func Scenario(trace string, seeds int, compat string) (*scenario.Scenario, error) {
	known := false
	for _, t := range alibaba2023.Traces() {
		known = known || t == trace
	}
	if !known {
		return nil, fmt.Errorf("unknown trace %q (known: %s)", trace, strings.Join(alibaba2023.Traces(), ", "))
	}
	s, err := scenario.Builtin("pwr-default")
	if err != nil {
		return nil, err
	}
	s.Name = "pwr-" + trace
	s.Trace.Pods = trace
	s.Seeds = seeds
	s.Compat = compat
	return s, s.Validate()
}

var pct = experiment.Pct

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
				worst = min(worst, experiment.MinOf(experiment.Over(experiment.Series(cs, p), 0.15, until, savingFn)))
			}
			return worst, worst > floor
		},
		Format: func(v float64) string { return "min " + pct(v) },
	}
}

// Claims lists the paper's quantitative statements about a trace.
func Claims(trace string) []Claim {
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
						best = max(best, experiment.MaxOf(experiment.Over(experiment.Series(cs, p), 0.01, 1.0, savingFn)))
					}
					return best, best < 0.05
				},
				Format: func(v float64) string { return "max " + pct(v) }},
			Claim{What: "GRAR gap of the PWR+FGD combinations to FGD at 0.9..1.0 requested is about 2%",
				Where: "Sec. VI-D1, Fig. 7", Paper: "~2% (0.02)",
				Measure: func(cs []CurvePoint) (float64, bool) {
					gap := math.Inf(-1)
					ref := experiment.Series(cs, "FGD")
					for _, p := range combos {
						for _, c := range experiment.Over(experiment.Series(cs, p), 0.90, 1.0, func(c CurvePoint) float64 { return c.Ratio }) {
							a, _ := experiment.At(experiment.Series(cs, p), c)
							r, _ := experiment.At(ref, c)
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
					s := experiment.Series(cs, "FGD")
					if len(s) == 0 {
						return math.NaN(), false
					}
					lo, hi := s[0].EOPCW, experiment.MaxOf(experiment.Over(s, 0, 10, func(c CurvePoint) float64 { return c.EOPCW }))
					return hi, lo > 150e3 && lo < 300e3 && hi > 1.1e6 && hi < 1.7e6
				},
				Format: func(v float64) string { return fmt.Sprintf("peak %.2f MW", v/1e6) }},
			Claim{What: "GPUs draw 72-76% of FGD's EOPC",
				Where: "Sec. VI-A, Fig. 1", Paper: "72-76%",
				Measure: func(cs []CurvePoint) (float64, bool) {
					s := experiment.Series(cs, "FGD")
					share := experiment.Over(s, 0.05, 1.0, func(c CurvePoint) float64 { return c.GPUW / c.EOPCW })
					lo, hi := experiment.MinOf(share), experiment.MaxOf(share)
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

// Study is `wattsched reproduce pwr`.
type Study struct {
	seeds  int
	traces string
	compat string
}

// Name implements experiment.Study.
func (*Study) Name() string { return "pwr" }

// Synopsis implements experiment.Study.
func (*Study) Synopsis() string {
	return `-o DIR [--seeds N] [--trace NAME[,NAME...]] [--compat fgd-sim] [--force]
        reproduce the PWR paper's comparison on openb traces and check its claims`
}

// Flags implements experiment.Study.
func (st *Study) Flags(fs *flag.FlagSet) {
	fs.IntVar(&st.seeds, "seeds", 10, "seeds per policy (the paper used 10)")
	fs.StringVar(&st.traces, "trace", "default", "openb pod list(s), comma-separated (see 'wattsched traces')")
	fs.StringVar(&st.compat, "compat", "", "fgd-sim: draw tasks and break ties exactly as the public FGD simulator")
}

func (st *Study) scenarios() ([]*scenario.Scenario, error) {
	var out []*scenario.Scenario
	for _, t := range strings.Split(st.traces, ",") {
		s, err := Scenario(strings.TrimSpace(t), st.seeds, st.compat)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Check implements experiment.Study.
func (st *Study) Check() error {
	_, err := st.scenarios()
	return err
}

// Run implements experiment.Study: one results directory per trace (in
// subdirectories named after the traces when there are several).
func (st *Study) Run(_ context.Context, env *experiment.Env) ([]*experiment.Results, error) {
	scs, err := st.scenarios()
	if err != nil {
		return nil, err
	}
	var out []*experiment.Results
	for _, s := range scs {
		in, err := experiment.LoadInputs(s)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
		}
		env.Notef("%s: %d policies x %d seeds on %s", s.Name, len(s.Policies), s.Seeds, in.Source)
		r, err := experiment.RunInflation(env, s, in)
		if err != nil {
			return nil, err
		}
		res, err := experiment.InflationResults(env.Version, r, Claims(s.Trace.Pods))
		if err != nil {
			return nil, err
		}
		res.Head = []string{fmt.Sprintf("== PWR reproduction on openb_pod_list_%s (%d seeds) ==", s.Trace.Pods, s.Seeds)}
		if len(scs) > 1 {
			res.Dir = s.Trace.Pods
		}
		out = append(out, res)
	}
	return out, nil
}

var _ experiment.Study = (*Study)(nil)
