package eaco

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/report"
)

// The sweep of the parameters the paper does not give (docs/reproduce-eaco.md,
// "Sweep"): EaCO's alpha and max_share and the arrival rate, under the
// paper's own interference (InterfPaper), on both clusters.
var (
	SweepAlphas    = []float64{0, 0.25, 0.5, 0.75, 1}
	SweepMaxShares = []int{2, 3, 4}
	SweepPerHour   = []float64{6, 12, 24, 48, 96}
)

// SweepSeeds is the most seeds a sweep runs (seeds 1..SweepSeeds).
const SweepSeeds = 2

// RuntimeBoundPct is the paper's runtime bound (Sec. 6.2, Fig. 3(b):
// EaCO "increases the average job runtime by less than 3.23%").
const RuntimeBoundPct = 3.23

// sweepBaselines are the paper's three baselines, as Variants runs them.
var sweepBaselines = []string{"FIFO", "FIFO_packed", "Gandiva"}

// SweepOptions configure a sweep.
type SweepOptions struct {
	Registries *policy.Registries
	Env        *Env
	Jobs       int
	Seeds      int
	Workers    int
	Progress   func(done, total int, what string)
}

// SweepBase is FIFO at one arrival rate and cluster (mean over seeds): its
// wait is the most any scheduler could take off its job total time
// without making jobs run faster.
type SweepBase struct {
	PerHour  float64 `json:"jobs_per_hour"`
	Nodes    int     `json:"nodes"`
	FIFOWait float64 `json:"fifo_avg_wait_h"`
	FIFORun  float64 `json:"fifo_avg_runtime_h"`
	FIFOJTT  float64 `json:"fifo_avg_jtt_h"`
	// JTTCapPct is FIFO's wait over its JTT: the JTT reduction an EaCO
	// that removed every wait and kept FIFO's runtimes would reach.
	JTTCapPct float64 `json:"jtt_reduction_cap_pct"`
}

// SweepPoint is EaCO with one (alpha, max_share) at one arrival rate, on
// each cluster (index as Clusters); means over seeds of per-seed ratios.
type SweepPoint struct {
	PerHour  float64 `json:"jobs_per_hour"`
	Alpha    float64 `json:"alpha"`
	MaxShare int     `json:"max_share"`
	// RunIncPct is EaCO's average runtime over each baseline's, minus 1, in
	// percent: [cluster][FIFO, FIFO_packed, Gandiva].
	RunIncPct [][3]float64 `json:"runtime_increase_pct"`
	// EnergyRedPct and JTTRedPct are reductions against FIFO, in percent.
	EnergyRedPct []float64 `json:"energy_reduction_vs_fifo_pct"`
	JTTRedPct    []float64 `json:"jtt_reduction_vs_fifo_pct"`
	Misses       int       `json:"deadline_misses"`
	// Meets is the rule stated before the sweep was run: on both clusters
	// EaCO's runtime is less than RuntimeBoundPct above each baseline's,
	// and EaCO misses no deadline.
	Meets bool `json:"meets_runtime_bound"`
}

// Sweep is the sweep's outcome.
type Sweep struct {
	Jobs   int          `json:"jobs"`
	Seeds  int          `json:"seeds"`
	Bases  []SweepBase  `json:"fifo"`
	Points []SweepPoint `json:"points"`
}

// RunSweep runs every rate x cluster x seed: the three baselines once and
// EaCO at every (alpha, max_share), under the paper's interference.
func RunSweep(o SweepOptions) (*Sweep, error) {
	e := o.Env
	set, ok := e.Setting(InterfPaper)
	if !ok {
		return nil, fmt.Errorf("eaco: no interference setting %q", InterfPaper)
	}
	type spec struct {
		rate  int
		nodes int
		seed  int
		label string
		pol   string
		args  string
	}
	pols := map[string]string{"FIFO": "fifo", "FIFO_packed": "fifo_packed", "Gandiva": "gandiva_packing"}
	var specs []spec
	for ri := range SweepPerHour {
		for _, n := range Clusters {
			for s := 1; s <= o.Seeds; s++ {
				for _, b := range sweepBaselines {
					specs = append(specs, spec{ri, n, s, b, pols[b], ""})
				}
				for _, a := range SweepAlphas {
					for _, m := range SweepMaxShares {
						specs = append(specs, spec{ri, n, s, pointLabel(a, m), "eaco", fmt.Sprintf("alpha: %g\nmax_share: %d", a, m)})
					}
				}
			}
		}
	}
	loads := make([][][]policy.ColocJob, len(SweepPerHour))
	for ri, r := range SweepPerHour {
		loads[ri] = make([][]policy.ColocJob, o.Seeds)
		for s := range loads[ri] {
			loads[ri][s] = e.WorkloadFor(set, uint64(s+1), o.Jobs, r)
		}
	}
	runs := make([]*Run, len(specs))
	errs := experiment.Parallel(len(specs), o.Workers, func(i int) error {
		sp := specs[i]
		var args []byte
		if sp.args != "" {
			args = []byte(sp.args)
		}
		r, err := e.RunIn(set, o.Registries, sp.pol, args, sp.nodes, uint64(sp.seed), loads[sp.rate][sp.seed-1], false)
		if err != nil {
			return fmt.Errorf("sweep: %s on %d nodes at %g jobs/h, seed %d: %w", sp.label, sp.nodes, SweepPerHour[sp.rate], sp.seed, err)
		}
		runs[i] = r
		return nil
	}, o.Progress, func(i int) string {
		return fmt.Sprintf("sweep: %s, %d nodes, %g jobs/h, seed %d", specs[i].label, specs[i].nodes, SweepPerHour[specs[i].rate], specs[i].seed)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	find := func(ri, nodes, seed int, label string) *Run {
		for i, sp := range specs {
			if sp.rate == ri && sp.nodes == nodes && sp.seed == seed && sp.label == label {
				return runs[i]
			}
		}
		panic("eaco: sweep run missing: " + label)
	}
	mean := func(f func(s int) float64) float64 {
		var xs []float64
		for s := 1; s <= o.Seeds; s++ {
			xs = append(xs, f(s))
		}
		m, _ := experiment.MeanStd(xs)
		return m
	}
	sw := &Sweep{Jobs: o.Jobs, Seeds: o.Seeds}
	for ri, rate := range SweepPerHour {
		for _, n := range Clusters {
			b := SweepBase{PerHour: rate, Nodes: n}
			b.FIFOWait = mean(func(s int) float64 { return find(ri, n, s, "FIFO").Res.AvgWaitSec / 3600 })
			b.FIFORun = mean(func(s int) float64 { return find(ri, n, s, "FIFO").Res.AvgRunSec / 3600 })
			b.FIFOJTT = mean(func(s int) float64 { return find(ri, n, s, "FIFO").Res.AvgJTTSec / 3600 })
			b.JTTCapPct = 100 * mean(func(s int) float64 {
				r := find(ri, n, s, "FIFO").Res
				return r.AvgWaitSec / r.AvgJTTSec
			})
			sw.Bases = append(sw.Bases, b)
		}
		for _, a := range SweepAlphas {
			for _, m := range SweepMaxShares {
				l := pointLabel(a, m)
				p := SweepPoint{PerHour: rate, Alpha: a, MaxShare: m, Meets: true}
				for _, n := range Clusters {
					var inc [3]float64
					for bi, base := range sweepBaselines {
						inc[bi] = 100 * (mean(func(s int) float64 { return find(ri, n, s, l).Res.AvgRunSec / find(ri, n, s, base).Res.AvgRunSec }) - 1)
						if !(inc[bi] < RuntimeBoundPct) {
							p.Meets = false
						}
					}
					p.RunIncPct = append(p.RunIncPct, inc)
					p.EnergyRedPct = append(p.EnergyRedPct, 100*(1-mean(func(s int) float64 {
						return float64(find(ri, n, s, l).Res.Energy) / float64(find(ri, n, s, "FIFO").Res.Energy)
					})))
					p.JTTRedPct = append(p.JTTRedPct, 100*(1-mean(func(s int) float64 { return find(ri, n, s, l).Res.AvgJTTSec / find(ri, n, s, "FIFO").Res.AvgJTTSec })))
					for s := 1; s <= o.Seeds; s++ {
						p.Misses += find(ri, n, s, l).Res.DeadlineMisses
					}
				}
				if p.Misses > 0 {
					p.Meets = false
				}
				sw.Points = append(sw.Points, p)
			}
		}
	}
	return sw, nil
}

func pointLabel(alpha float64, maxShare int) string {
	return fmt.Sprintf("EaCO alpha %g max_share %d", alpha, maxShare)
}

// Tables renders the sweep: FIFO's wait per rate, then every point.
func (sw *Sweep) Tables() []report.Table {
	fifo := report.Table{Title: fmt.Sprintf("Sweep (paper's interference, %d jobs, seeds 1-%d): FIFO's wait caps any JTT reduction (a scheduler that removed every wait and kept FIFO's runtimes reaches the cap)", sw.Jobs, sw.Seeds),
		Head: []string{"jobs/h", "nodes", "FIFO avg wait (h)", "FIFO avg runtime (h)", "FIFO avg JTT (h)", "JTT reduction cap", "paper's JTT reduction (28 nodes)"}}
	for _, b := range sw.Bases {
		paper := ""
		if b.Nodes == 28 {
			paper = "97%"
		}
		fifo.Rows = append(fifo.Rows, []string{strconv.FormatFloat(b.PerHour, 'g', -1, 64), strconv.Itoa(b.Nodes), fmt.Sprintf("%.2f", b.FIFOWait), fmt.Sprintf("%.2f", b.FIFORun),
			fmt.Sprintf("%.2f", b.FIFOJTT), fmt.Sprintf("%.1f%%", b.JTTCapPct), paper})
	}
	head := []string{"jobs/h", "alpha", "max_share"}
	for _, n := range Clusters {
		head = append(head, fmt.Sprintf("runtime vs FIFO / FIFO_packed / Gandiva, %d", n), fmt.Sprintf("energy below FIFO, %d", n), fmt.Sprintf("JTT below FIFO, %d", n))
	}
	head = append(head, "deadline misses", fmt.Sprintf("meets < +%.2f%%", RuntimeBoundPct))
	pts := report.Table{Title: fmt.Sprintf("Sweep: EaCO's alpha and max_share at each arrival rate; a point meets the paper's runtime bound when on both clusters EaCO's average runtime is less than %.2f%% above each baseline's and it misses no deadline (rule stated before the sweep was run)", RuntimeBoundPct),
		Head: head}
	for _, p := range sw.Points {
		row := []string{strconv.FormatFloat(p.PerHour, 'g', -1, 64), strconv.FormatFloat(p.Alpha, 'g', -1, 64), strconv.Itoa(p.MaxShare)}
		for ci := range Clusters {
			row = append(row, fmt.Sprintf("%+.2f / %+.2f / %+.2f%%", p.RunIncPct[ci][0], p.RunIncPct[ci][1], p.RunIncPct[ci][2]),
				fmt.Sprintf("%.1f%%", p.EnergyRedPct[ci]), fmt.Sprintf("%.1f%%", p.JTTRedPct[ci]))
		}
		meets := "no"
		if p.Meets {
			meets = "yes"
		}
		pts.Rows = append(pts.Rows, append(row, strconv.Itoa(p.Misses), meets))
	}
	return []report.Table{fifo, pts}
}

// CSV is one row per point and cluster.
func (sw *Sweep) CSV() []byte {
	rows := [][]string{{"jobs_per_hour", "alpha", "max_share", "nodes", "runtime_vs_fifo_pct", "runtime_vs_fifo_packed_pct", "runtime_vs_gandiva_pct",
		"energy_below_fifo_pct", "jtt_below_fifo_pct", "fifo_wait_h", "fifo_jtt_h", "jtt_reduction_cap_pct", "deadline_misses_all_clusters", "meets_runtime_bound"}}
	for _, p := range sw.Points {
		for ci, n := range Clusters {
			var b SweepBase
			for _, x := range sw.Bases {
				if x.PerHour == p.PerHour && x.Nodes == n {
					b = x
				}
			}
			rows = append(rows, []string{report.F(p.PerHour), report.F(p.Alpha), strconv.Itoa(p.MaxShare), strconv.Itoa(n),
				report.F(p.RunIncPct[ci][0]), report.F(p.RunIncPct[ci][1]), report.F(p.RunIncPct[ci][2]), report.F(p.EnergyRedPct[ci]), report.F(p.JTTRedPct[ci]),
				report.F(b.FIFOWait), report.F(b.FIFOJTT), report.F(b.JTTCapPct), strconv.Itoa(p.Misses), strconv.FormatBool(p.Meets)})
		}
	}
	return report.CSV(rows)
}
