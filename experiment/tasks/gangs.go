package tasks

import (
	"math"
	"strconv"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// gangOptions are the scenario's gang settings for policy.Online; d are
// the run's power domains (nil: none).
func gangOptions(s *scenario.Scenario, d *power.Domains) policy.GangOptions {
	o := policy.GangOptions{HeadOfLine: s.Gangs.HeadOfLine()}
	if s.Gangs != nil && s.Gangs.GroupBy == scenario.GroupByGPUModel {
		o.Group = func(n *cluster.Node) string { return n.GPUModel }
	}
	if level, ok := s.Gangs.DomainLevel(); ok && d.Len() > 0 {
		o.Group = func(n *cluster.Node) string { return DomainOf(d, int(n.ID), level) }
	}
	return o
}

// DomainOf is the name of node i's innermost domain of level (any level
// when level is empty), "" when it has none: the node groups of
// gangs.group_by domain. Nodes with no domain of that level (a variant
// whose topology lacks it) form one group, "".
func DomainOf(d *power.Domains, i int, level string) string {
	for _, k := range d.Path(i) {
		if level == "" || d.List[k].Level == level {
			return d.List[k].Name
		}
	}
	return ""
}

// GangSummary is what the gang jobs of one run waited. A gang's wait runs
// from its last pod's arrival to its start; its fragmentation wait is the
// part of it during which the powered nodes had at least the gang's GPUs
// free in all, but not placeable as a gang (sim.GangResult.FragWait).
type GangSummary struct {
	Gangs   int `json:"gangs"`
	Started int `json:"started"`
	// Waits over the gangs that started, seconds.
	MeanWaitS experiment.Num `json:"mean_wait_s"`
	P50WaitS  experiment.Num `json:"p50_wait_s"`
	P95WaitS  experiment.Num `json:"p95_wait_s"`
	// FragWaited counts the gangs with a fragmentation wait; FragWaitS
	// is the mean fragmentation wait over all gangs (a gang that never
	// started counts its fragmentation wait to the end of the run),
	// seconds; FragShare is the share of fragmentation in the waits of
	// the gangs that started (null when none waited).
	FragWaited int            `json:"frag_waited"`
	FragWaitS  experiment.Num `json:"mean_frag_wait_s"`
	FragShare  experiment.Num `json:"frag_share"`
}

// summarizeGangs sums up gangs (nil for none).
func summarizeGangs(gangs []sim.GangResult) *GangSummary {
	if gangs == nil {
		return nil
	}
	s := &GangSummary{Gangs: len(gangs)}
	var waits []float64
	var frag, startedFrag, startedWait float64
	for _, g := range gangs {
		if g.Start >= 0 {
			s.Started++
			waits = append(waits, (g.Start - g.Submit).Seconds())
			startedWait += (g.Start - g.Submit).Seconds()
			startedFrag += g.FragWait.Seconds()
		}
		if g.FragWait > 0 {
			s.FragWaited++
		}
		frag += g.FragWait.Seconds()
	}
	s.MeanWaitS, s.P50WaitS, s.P95WaitS = experiment.Num(mean(waits)), experiment.Num(quantile(waits, 0.5)), experiment.Num(quantile(waits, 0.95))
	s.FragWaitS = experiment.Num(frag / float64(len(gangs)))
	s.FragShare = experiment.Num(math.NaN())
	if startedWait > 0 {
		s.FragShare = experiment.Num(startedFrag / startedWait)
	}
	return s
}

// gangWaits are the waits of the gangs of r that started, seconds.
func gangWaits(r *sim.Result) []float64 {
	var w []float64
	for _, g := range r.Gangs {
		if g.Start >= 0 {
			w = append(w, (g.Start - g.Submit).Seconds())
		}
	}
	return w
}

// gangMetrics join compareMetrics when the pods include gangs.
var gangMetrics = []compareMetric{
	{"gang_mean_wait_s", "gang mean wait s", "s", "%.1f", "gang jobs: time from the arrival of a gang's last pod to the start of all its pods, averaged over the gangs that started",
		func(r *CompareRun) float64 { return mean(gangWaits(r.Result)) }},
	{"gang_p50_wait_s", "gang p50 wait s", "s", "%.1f", "the median wait of the gangs that started",
		func(r *CompareRun) float64 { return quantile(gangWaits(r.Result), 0.5) }},
	{"gang_p95_wait_s", "gang p95 wait s", "s", "%.1f", "the wait that 95% of started gangs do not exceed",
		func(r *CompareRun) float64 { return quantile(gangWaits(r.Result), 0.95) }},
	{"gangs_started", "gangs started", "gangs", "%.0f", "gang jobs that started (all their pods at once)",
		func(r *CompareRun) float64 { return float64(len(gangWaits(r.Result))) }},
	{"gang_frag_wait_s", "gang frag wait s", "s", "%.1f", "fragmentation-caused wait: time a gang waited while the powered nodes had at least its GPUs free in all but not placeable as a gang, averaged over all gangs",
		func(r *CompareRun) float64 {
			var f float64
			for _, g := range r.Result.Gangs {
				f += g.FragWait.Seconds()
			}
			return f / float64(len(r.Result.Gangs))
		}},
}

// GangTable renders the runs' gang summaries for the terminal (ok is
// false without gangs).
func GangTable(in *Inputs, runs []*ReplayRun) (report.Table, bool) {
	t := report.Table{Title: "Gang jobs (wait: last pod's arrival to start; frag: waiting while enough GPUs were free but not placeable as a gang)",
		Head: []string{"policy", "gangs", "started", "mean wait s", "p50 wait s", "p95 wait s", "frag-waited", "mean frag wait s", "frag share"}}
	for _, r := range runs {
		g := r.Summarize(in).Gangs
		if g == nil {
			return t, false
		}
		t.Rows = append(t.Rows, []string{r.Policy, strconv.Itoa(g.Gangs), strconv.Itoa(g.Started), orDash("%.1f", g.MeanWaitS),
			orDash("%.1f", g.P50WaitS), orDash("%.1f", g.P95WaitS), strconv.Itoa(g.FragWaited), orDash("%.1f", g.FragWaitS), orDash("%.2f", g.FragShare)})
	}
	return t, len(t.Rows) > 0
}
