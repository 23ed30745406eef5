package cedla

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/wattsched/wattsched/report"
)

// PlansCSV is plans.csv: one row per plan of every MILP planner's run,
// with the solver's deterministic statistics (how the plan was found, its
// gap to the bound, branch-and-bound nodes, simplex iterations, solves);
// solve seconds are wall clock and are printed, never written.
func PlansCSV(runs []*Metrics) []byte {
	rows := [][]string{{"system", "jobs", "req_per_min", "seed", "slot", "heuristic", "status", "gap", "objective_usd", "bound_usd", "solves", "nodes", "lp_iterations", "columns", "rows", "hard_infeasible"}}
	for _, m := range runs {
		if m.result == nil {
			continue
		}
		for _, p := range m.result.Plans {
			rows = append(rows, []string{m.System, strconv.Itoa(m.Jobs), report.F(m.ReqPerMin), strconv.FormatUint(m.Seed, 10), strconv.Itoa(p.Slot), p.Heuristic, p.Status,
				report.F(p.Gap), report.F(p.Objective), report.F(p.Bound), strconv.Itoa(p.Solves), strconv.FormatInt(p.Nodes, 10), strconv.FormatInt(p.LPIterations, 10),
				strconv.Itoa(p.Vars), strconv.Itoa(p.Rows), strconv.FormatBool(p.Infeasible)})
		}
	}
	return report.CSV(rows)
}

// SolverTable summarises plans.csv per MILP system: plans, how they were
// found, the largest gap, and the median and largest simplex iterations
// and nodes per plan (deterministic figures; none reads the clock).
func SolverTable(runs []*Metrics) report.Table {
	t := report.Table{Title: "Solver per plan (plans.csv): how each plan was found, its gap to the bound, simplex iterations and nodes",
		Head: []string{"system", "plans", "found by", "max gap", "LP iterations median / max", "nodes median / max", "hard infeasible"}}
	var systems []string
	for _, m := range runs {
		if m.result != nil && len(m.result.Plans) > 0 && !slices.Contains(systems, m.System) {
			systems = append(systems, m.System)
		}
	}
	for _, sys := range systems {
		by := map[string]int{}
		var its, nodes []int64
		var gap float64
		inf := 0
		for _, m := range runs {
			if m.System != sys || m.result == nil {
				continue
			}
			for _, p := range m.result.Plans {
				by[p.Heuristic]++
				its, nodes = append(its, p.LPIterations), append(nodes, p.Nodes)
				gap = max(gap, p.Gap)
				if p.Infeasible {
					inf++
				}
			}
		}
		var ways []string
		for w := range by {
			ways = append(ways, w)
		}
		slices.Sort(ways)
		found := ""
		for k, w := range ways {
			if k > 0 {
				found += ", "
			}
			found += fmt.Sprintf("%s %d", w, by[w])
		}
		slices.Sort(its)
		slices.Sort(nodes)
		t.Rows = append(t.Rows, []string{sys, strconv.Itoa(len(its)), found, fmt.Sprintf("%.3f%%", 100*gap),
			fmt.Sprintf("%d / %d", its[len(its)/2], its[len(its)-1]), fmt.Sprintf("%d / %d", nodes[len(nodes)/2], nodes[len(nodes)-1]), strconv.Itoa(inf)})
	}
	return t
}
