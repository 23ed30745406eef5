package vahrm

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/lublin"
)

// ArrivalLoads are the offered loads (node-seconds asked for / node-seconds
// available over the submission span) at which the Lublin–Feitelson
// workload runs. They were fixed before any result was seen: a lightly, a
// moderately and a heavily loaded machine.
var ArrivalLoads = []float64{0.5, 0.7, 0.9}

// ArrivalSeeds is the number of independently drawn workloads per load.
const ArrivalSeeds = 5

// LublinSource describes the generated workload.
const LublinSource = "Lublin-Feitelson workload model (J. Parallel Distrib. Comput. 63(11), 2003; whole-sample parameters, sizes up to 540 nodes)"

// ArrivalStat is one system at one offered load of the Lublin–Feitelson
// workload: the mean over seeds of its nine-workload averages relative to
// VU-FCFS, and the standard deviation over seeds (the spread between
// independently drawn job streams).
type ArrivalStat struct {
	Load         float64 `json:"offered_load"`
	System       string  `json:"system"`
	Seeds        int     `json:"seeds"`
	EnergySave   Num     `json:"energy_saving"`
	EnergySaveSD Num     `json:"energy_saving_sd"`
	CommonSave   Num     `json:"energy_saving_common_window"`
	CommonSaveSD Num     `json:"energy_saving_common_window_sd"`
	TATRatio     Num     `json:"turnaround_ratio"`
	TATRatioSD   Num     `json:"turnaround_ratio_sd"`
	ThroughRat   Num     `json:"throughput_ratio"`
	ThroughRatSD Num     `json:"throughput_ratio_sd"`
	WaitRatio    Num     `json:"waiting_ratio"`
	WaitRatioSD  Num     `json:"waiting_ratio_sd"`
	MaxWaitS     float64 `json:"max_wait_s"`
}

// arrivalLabel names the setting of one load and seed; loadLabel the load
// alone (the seeds pooled).
func arrivalLabel(load float64, seed int) string {
	return fmt.Sprintf("%s seed=%d", loadLabel(load), seed)
}

func loadLabel(load float64) string { return fmt.Sprintf("Lublin load=%.0f%%", 100*load) }

// Arrivals runs the systems against base on workloads drawn from the
// Lublin–Feitelson model (the same number of jobs as env's log, sizes
// up to the system's 540 nodes), each seed at every load: the model's
// arrival times are scaled by the one factor that gives the load, the
// shrink ratio SR = load / (the drawn stream's own load).
//
// A drawn stream whose jobs all arrive at one instant (one job, say) has
// no submission span: no shrink ratio changes its load, so no offered
// load can be set. Such a seed is skipped, and skipped says which and why.
func (e *Env) Arrivals(base Setting, loads []float64, seeds int, systems []scenario.System, vu scenario.System, workers int,
	progress func(done, total int, what string)) (all []Relative, stats []ArrivalStat, skipped []string, err error) {
	ran := 0
	for s := 1; s <= seeds; s++ {
		gen, err := lublin.Generate(lublin.Default(Nodes), len(e.Log.Jobs), base.Seed+uint64(s))
		if err != nil {
			return nil, nil, nil, err
		}
		log, err := LogFrom(gen, LublinSource, 0, 1)
		if err != nil {
			return nil, nil, nil, err
		}
		own := log.Utilization(1)
		if !(own > 0) || math.IsInf(own, 0) {
			skipped = append(skipped, fmt.Sprintf("seed %d: its %d job(s) all arrive at one instant, so no shrink ratio sets an offered load", s, len(log.Jobs)))
			continue
		}
		ran++
		var labels []string
		var settings []Setting
		for _, l := range loads {
			st := base
			st.SR = l / own
			labels, settings = append(labels, arrivalLabel(l, s)), append(settings, st)
		}
		se := *e
		se.Log = log
		rel, err := se.Sweep(labels, settings, systems, vu, workers, progress)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("lublin workload seed %d: %w", s, err)
		}
		all = append(all, rel...)
	}
	if ran == 0 {
		return nil, nil, skipped, nil
	}
	return all, arrivalStats(all, loads, seeds), skipped, nil
}

// arrivalStats pools the per-seed averages of each load and system.
func arrivalStats(rel []Relative, loads []float64, seeds int) []ArrivalStat {
	avg := Averages(rel)
	var out []ArrivalStat
	for _, l := range loads {
		var systems []string
		for _, a := range avg {
			if a.Setting == arrivalLabel(l, 1) && !slices.Contains(systems, a.System) {
				systems = append(systems, a.System)
			}
		}
		for _, sys := range systems {
			var save, common, tat, thr, wait []float64
			st := ArrivalStat{Load: l, System: sys}
			for s := 1; s <= seeds; s++ {
				a, ok := find(avg, arrivalLabel(l, s), sys)
				if !ok {
					continue
				}
				st.Seeds++
				save, common = append(save, a.EnergySave), append(common, a.CommonSave)
				tat, thr, wait = append(tat, float64(a.TATRatio)), append(thr, float64(a.ThroughRat)), append(wait, float64(a.WaitRatio))
				st.MaxWaitS = math.Max(st.MaxWaitS, a.MaxWaitS)
			}
			ms := func(xs []float64) (Num, Num) {
				m, sd := experiment.MeanStd(xs)
				return Num(m), Num(sd)
			}
			st.EnergySave, st.EnergySaveSD = ms(save)
			st.CommonSave, st.CommonSaveSD = ms(common)
			st.TATRatio, st.TATRatioSD = ms(tat)
			st.ThroughRat, st.ThroughRatSD = ms(thr)
			st.WaitRatio, st.WaitRatioSD = ms(wait)
			out = append(out, st)
		}
	}
	return out
}

// pooled relabels the runs of one load with the load alone, so that
// Averages pools its seeds (and workloads).
func pooled(rel []Relative, load float64, seeds int) []Relative {
	var out []Relative
	for s := 1; s <= seeds; s++ {
		for _, r := range rel {
			if r.Setting == arrivalLabel(load, s) {
				r.Setting = loadLabel(load)
				out = append(out, r)
			}
		}
	}
	return out
}
