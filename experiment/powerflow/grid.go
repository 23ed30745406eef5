package powerflow

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/trace/philly"
)

// GridNodes are the cluster sizes of the grid (8-GPU nodes): half, the
// same as and twice the default 24.
var GridNodes = []int{12, 24, 48}

// GridRow is PowerFlow's largest JCT improvement at equal energy over one
// baseline, on one embedded Philly day and cluster size.
type GridRow struct {
	Day      string  `json:"day"`
	Nodes    int     `json:"nodes"`
	Jobs     int     `json:"jobs"`
	Baseline string  `json:"baseline"`
	Factor   Num     `json:"max_factor"`
	At       string  `json:"at"`
	Paper    float64 `json:"paper_at_most"`
}

// improvements is PowerFlow's JCT at each baseline point's energy.
func improvements(curves []RunResult) []Improve {
	var out []Improve
	for _, r := range curves {
		if r.System == NamePowerFlow {
			continue
		}
		pf, beyond := curveAtBudget(curves, NamePowerFlow, r.EnergyMWh)
		out = append(out, Improve{Baseline: r.System, Baselines: r.Baselines, Param: r.Param, EnergyMWh: r.EnergyMWh, PFLessEnergy: beyond,
			JCTh: r.AvgJCTh, PFJCTh: Num(pf), Factor: Num(r.AvgJCTh / pf)})
	}
	return out
}

// grid sweeps every system on each of philly.GridDays at each of
// GridNodes (the same sweep points as the main curves) and keeps the
// largest improvement over each baseline. The main run's cell (the
// embedded day at the setup's size) is taken from main when given.
func (env *Env) grid(o Options, etas, freqs []float64, main []Improve) ([]GridRow, error) {
	var out []GridRow
	for _, day := range philly.GridDays {
		gj, err := philly.DayOf(day)
		if err != nil {
			return nil, err
		}
		jobs := env.Jobs(gj, o.Setup.Seed)
		for _, n := range GridNodes {
			imp := main
			if main == nil || day != philly.GridDays[0] || n != o.Setup.Nodes {
				curves, err := env.runCases(pfCases(etas, freqs, BaselineVariants[:1]), jobs, n, o.Workers, o.Progress)
				if err != nil {
					return nil, fmt.Errorf("grid %s, %d nodes: %w", day, n, err)
				}
				imp = improvements(curves)
			}
			for _, b := range Systems[1:] {
				f, at := bestFactor(imp, b, BaselinesPaper)
				out = append(out, GridRow{Day: day, Nodes: n, Jobs: len(jobs), Baseline: b, Factor: Num(f), At: at, Paper: paperFactors[b]})
			}
		}
	}
	return out, nil
}

// gridTable shows the grid with one column per baseline.
func gridTable(rows []GridRow) report.Table {
	t := report.Table{Title: "PowerFlow's largest JCT improvement at equal energy, per embedded Philly day and cluster size (--grid)",
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
			row = append(row, experiment.NumOrDash(r.Factor, "%.2fx"))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func gridCSV(rows []GridRow) []byte {
	out := [][]string{{"day", "jobs", "nodes", "baseline", "max_factor", "at", "paper_at_most"}}
	for _, r := range rows {
		out = append(out, []string{r.Day, strconv.Itoa(r.Jobs), strconv.Itoa(r.Nodes), r.Baseline, report.F(float64(r.Factor)), r.At, report.F(r.Paper)})
	}
	return report.CSV(out)
}
