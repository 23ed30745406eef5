package powerflow

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/trace/philly"
)

// GridNodes are the cluster sizes of the grid (8-GPU nodes): half, the
// same as and twice the default 24.
var GridNodes = []int{12, 24, 48}

// GridRow is PowerFlow's headline factor over one baseline (Factor), on
// one embedded Philly day and cluster size.
type GridRow struct {
	Day      string  `json:"day"`
	Nodes    int     `json:"nodes"`
	Jobs     int     `json:"jobs"`
	Baseline string  `json:"baseline"`
	Factor   Factor  `json:"factor"`
	Paper    float64 `json:"paper_at_most"`
}

// baselineKey is one baseline as one variant.
type baselineKey struct{ system, variant string }

// baselineKeys are the baselines of runs, each variant apart, in the
// order of their first run.
func baselineKeys(runs []RunResult) []baselineKey {
	var out []baselineKey
	for _, r := range runs {
		k := baselineKey{r.System, r.Baselines}
		if r.System != NamePowerFlow && r.System != NameOracle && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// baselineFrontier is k's Pareto frontier (frontier), the paper's rule:
// a setting with more energy and a longer JCT than another is dropped.
func baselineFrontier(runs []RunResult, k baselineKey) []RunResult {
	var rs []RunResult
	for _, r := range runs {
		if r.Baselines == k.variant {
			rs = append(rs, r)
		}
	}
	return frontier(rs, k.system)
}

// onFrontier is a frontier's JCT at energy e, linear between its measured
// points; NaN outside its energy range (a one-point frontier: anywhere but
// at its energy).
func onFrontier(pts []RunResult, e float64) float64 {
	if len(pts) == 0 || e < pts[0].EnergyMWh || e > pts[len(pts)-1].EnergyMWh {
		return math.NaN()
	}
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		if e <= b.EnergyMWh {
			w := (e - a.EnergyMWh) / (b.EnergyMWh - a.EnergyMWh)
			return a.AvgJCTh + w*(b.AvgJCTh-a.AvgJCTh)
		}
	}
	return pts[0].AvgJCTh // one point, e at its energy
}

// improvements reads every baseline's frontier at the energy of every
// point of PowerFlow's frontier: JCT at equal energy, both curves reduced
// to their Pareto frontiers first.
func improvements(curves []RunResult) []Improve {
	pf := frontier(curves, NamePowerFlow)
	var out []Improve
	for _, k := range baselineKeys(curves) {
		bf := baselineFrontier(curves, k)
		for _, p := range pf {
			j := onFrontier(bf, p.EnergyMWh)
			out = append(out, Improve{Baseline: k.system, Baselines: k.variant, Eta: p.Param, EnergyMWh: p.EnergyMWh, PFJCTh: p.AvgJCTh,
				JCTh: Num(j), Factor: Num(j / p.AvgJCTh)})
		}
	}
	return out
}

// factors are PowerFlow's headline factors over every baseline variant of
// curves: the largest at equal energy; where the energies do not overlap,
// the nearest points' factor with their energy ratio, flagged.
func factors(curves []RunResult) []Factor {
	imp := improvements(curves)
	pf := frontier(curves, NamePowerFlow)
	var out []Factor
	for _, k := range baselineKeys(curves) {
		f := Factor{Baseline: k.system, Baselines: k.variant, Equal: Num(math.NaN()), EnergyMWh: Num(math.NaN()), Nearest: Num(math.NaN()), EnergyRatio: Num(math.NaN())}
		for _, m := range imp {
			if m.Baseline == k.system && m.Baselines == k.variant && !math.IsNaN(float64(m.Factor)) && !(float64(m.Factor) <= float64(f.Equal)) {
				f.Equal, f.EnergyMWh = m.Factor, Num(m.EnergyMWh)
				f.At = fmt.Sprintf("at equal energy: PowerFlow eta %g, %.3f MWh", m.Eta, m.EnergyMWh)
			}
		}
		bf := baselineFrontier(curves, k)
		if math.IsNaN(float64(f.Equal)) && len(pf) > 0 && len(bf) > 0 {
			var bp, pp RunResult
			best := math.Inf(1)
			for _, p := range pf {
				for _, b := range bf {
					if d := math.Abs(math.Log(b.EnergyMWh / p.EnergyMWh)); d < best {
						best, bp, pp = d, b, p
					}
				}
			}
			f.Nearest, f.EnergyRatio = Num(bp.AvgJCTh/pp.AvgJCTh), Num(bp.EnergyMWh/pp.EnergyMWh)
			f.At = fmt.Sprintf("NOT at equal energy: PowerFlow's frontier spans %.3f-%.3f MWh, %s's %.3f-%.3f MWh; nearest: %s %g (%.3f MWh) vs PowerFlow eta %g (%.3f MWh), %.2fx at energy ratio %.2f",
				pf[0].EnergyMWh, pf[len(pf)-1].EnergyMWh, k.system, bf[0].EnergyMWh, bf[len(bf)-1].EnergyMWh, k.system, bp.Param, bp.EnergyMWh, pp.Param, pp.EnergyMWh, float64(f.Nearest), float64(f.EnergyRatio))
		}
		out = append(out, f)
	}
	return out
}

// factorOf is baseline's factor as variant in fs (zero Factor with NaNs
// if it did not run).
func factorOf(fs []Factor, baseline, variant string) Factor {
	for _, f := range fs {
		if f.Baseline == baseline && f.Baselines == variant {
			return f
		}
	}
	nan := Num(math.NaN())
	return Factor{Baseline: baseline, Baselines: variant, Equal: nan, EnergyMWh: nan, Nearest: nan, EnergyRatio: nan, At: "not run"}
}

// String is the factor as a table cell: the equal-energy factor, or the
// nearest one flagged with its energy ratio.
func (f Factor) String() string {
	if !math.IsNaN(float64(f.Equal)) {
		return fmt.Sprintf("%.2fx", float64(f.Equal))
	}
	if !math.IsNaN(float64(f.Nearest)) {
		return fmt.Sprintf("(%.2fx, not equal energy: E ratio %.2f)", float64(f.Nearest), float64(f.EnergyRatio))
	}
	return "-"
}

// grid sweeps every system on each of philly.GridDays at each of
// GridNodes (the same sweep points as the main curves) and keeps the
// headline factor over each baseline. The main run's cell (the embedded
// day at the setup's size) is taken from main when given.
func (env *Env) grid(o Options, etas, freqs []float64, main []Factor) ([]GridRow, error) {
	var out []GridRow
	for _, day := range philly.GridDays {
		gj, err := philly.DayOf(day)
		if err != nil {
			return nil, err
		}
		jobs := env.Jobs(gj, o.Setup.Seed)
		for _, n := range GridNodes {
			fs := main
			if main == nil || day != philly.GridDays[0] || n != o.Setup.Nodes {
				curves, err := env.runCases(pfCases(etas, freqs, BaselineVariants[:1]), jobs, n, o.Workers, o.Progress)
				if err != nil {
					return nil, fmt.Errorf("grid %s, %d nodes: %w", day, n, err)
				}
				fs = factors(curves)
			}
			for _, b := range Systems[1:] {
				out = append(out, GridRow{Day: day, Nodes: n, Jobs: len(jobs), Baseline: b, Factor: factorOf(fs, b, BaselinesPaper), Paper: paperFactors[b]})
			}
		}
	}
	return out, nil
}

// gridTable shows the grid with one column per baseline.
func gridTable(rows []GridRow) report.Table {
	t := report.Table{Title: "PowerFlow's JCT improvement at equal energy on the Pareto frontiers (in parentheses: nearest points, not at equal energy), per embedded Philly day and cluster size (--grid)",
		Head: []string{"day", "jobs", "nodes"}}
	var bs []string
	for _, r := range rows {
		if !slices.Contains(bs, r.Baseline) {
			bs = append(bs, r.Baseline)
			t.Head = append(t.Head, fmt.Sprintf("%s (paper %.2fx)", r.Baseline, r.Paper))
		}
	}
	for i := 0; i < len(rows); i += len(bs) {
		row := []string{rows[i].Day, strconv.Itoa(rows[i].Jobs), strconv.Itoa(rows[i].Nodes)}
		for _, r := range rows[i : i+len(bs)] {
			row = append(row, r.Factor.String())
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func gridCSV(rows []GridRow) []byte {
	out := [][]string{{"day", "jobs", "nodes", "baseline", "factor_at_equal_energy", "nearest_factor_not_equal_energy", "nearest_energy_ratio", "at", "paper_at_most"}}
	for _, r := range rows {
		f := r.Factor
		out = append(out, []string{r.Day, strconv.Itoa(r.Jobs), strconv.Itoa(r.Nodes), r.Baseline, report.F(float64(f.Equal)), report.F(float64(f.Nearest)), report.F(float64(f.EnergyRatio)), f.At, report.F(r.Paper)})
	}
	return report.CSV(out)
}
