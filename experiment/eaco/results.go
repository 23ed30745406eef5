package eaco

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
)

func pm(x [2]float64, f string) string { return fmt.Sprintf(f+" ± "+f, x[0], x[1]) }

func pct(x [2]float64) string { return fmt.Sprintf("%+.1f%% ± %.1f", 100*(x[0]-1), 100*x[1]) }

// Tables renders the study's tables: the primary setting's in full, then
// each other setting's results, claims and Fig. 1 table.
func Tables(rep *Reproduction, others ...*Reproduction) []report.Table {
	main, sets := settingTables(rep)
	out := []report.Table{main, predTable(rep), experiment.ClaimsTable(rep.Claims), sets, modelTable(rep)}
	for _, o := range others {
		m, st := settingTables(o)
		cl := experiment.ClaimsTable(o.Claims)
		cl.Title = "Paper claims vs measured, second setting: " + o.Label
		out = append(out, m, predTable(o), cl, st)
	}
	ph := report.Table{Title: fmt.Sprintf("Gavel V100 pairs left out of the Gavel setting: co-located rates equal the isolated ones (%d placeholders)", len(rep.Placeholders)),
		Head: []string{"job A", "job B"}}
	for _, p := range rep.Placeholders {
		ph.Rows = append(ph.Rows, []string{p.A, p.B})
	}
	return append(out, ph)
}

// settingTables are one setting's results and its Fig. 1 table.
func settingTables(rep *Reproduction) (report.Table, report.Table) {
	main := report.Table{Title: fmt.Sprintf("Interference: %s. Gavel-style trace, %d jobs, %.0f jobs/h, %d seeds (mean ± std; ratios per seed against FIFO)", rep.Label, rep.Options.Jobs, rep.Options.PerHour, rep.Options.Seeds),
		Head: []string{"nodes", "scheduler", "energy (MWh)", "energy vs FIFO", "cost (USD)", "CO2 (t)", "avg runtime (h)", "runtime vs FIFO", "avg JTT (h)", "JTT vs FIFO", "active nodes", "active vs FIFO", "deadline misses (sum, max/seed)", "undos", "co-locations"}}
	for _, a := range rep.Aggs {
		sum := 0
		for _, m := range a.Misses {
			sum += m
		}
		und := 0
		for _, u := range a.Undos {
			und += u
		}
		main.Rows = append(main.Rows, []string{strconv.Itoa(a.Nodes), a.Variant, pm(a.EnergyMWh, "%.2f"), pct(a.EnergyRatio), pm(a.CostUSD, "%.2f"),
			pm([2]float64{a.CO2Kg[0] / 1000, a.CO2Kg[1] / 1000}, "%.2f"), pm(a.RunH, "%.2f"), pct(a.RunRatio),
			pm(a.JTTH, "%.2f"), pct(a.JTTRatio), pm(a.ActiveNodes, "%.1f"), pct(a.ActiveRatio), fmt.Sprintf("%d, %d", sum, slices.Max(a.Misses)), strconv.Itoa(und), pm(a.Joins, "%.0f")})
	}
	title := "Co-locating the paper's jobs on one 8-V100 node (Fig. 1): predicted from " + rep.Label + " and eq. 5 fitted to Tables 1-2"
	if left := 11 - len(rep.Sets); left > 0 { // 11 sets of 2-4 of the four models
		title += fmt.Sprintf("; %d sets need a Gavel placeholder pair and have no value", left)
	}
	sets := report.Table{Title: title,
		Head: []string{"jobs", "avg JCT increase", "paper (upper end for the size)", "error (points)", "energy saving", "paper (upper end)", "error (points)", "node GPU util"}}
	for _, s := range rep.Sets {
		sets.Rows = append(sets.Rows, []string{s.Name(), fmt.Sprintf("%+.1f%%", s.JCTIncreasePct), fmt.Sprintf("%.1f%%", s.PaperJCTPct), fmt.Sprintf("%+.1f", s.JCTIncreasePct-s.PaperJCTPct),
			fmt.Sprintf("%.1f%%", s.EnergySavingPct), fmt.Sprintf("%.0f%%", s.PaperEnergyPct), fmt.Sprintf("%+.1f", s.EnergySavingPct-s.PaperEnergyPct), fmt.Sprintf("%.1f%%", s.GPUUtilPct)})
	}
	return main, sets
}

// predTable is EaCO's prediction error and undo count per cluster and
// variant, summed or averaged over the seeds.
func predTable(rep *Reproduction) report.Table {
	t := report.Table{Title: "EaCO's predictions (" + rep.Label + "): co-location factors predicted at each join vs the engine's truth for the set and vs the observed window; lengths predicted at arrival vs the completed jobs' (mean over seeds)",
		Head: []string{"nodes", "scheduler", "joins", "factor error vs truth (MAPE)", "joins predicted optimistic", "vs observed (MAPE, noise incl.)", "observed joins", "undos", "length error (MAPE, jobs)"}}
	for _, a := range rep.Aggs {
		if len(a.Pred) == 0 {
			continue
		}
		var joins, opt, obs, und, lens int
		var fm, om, lm []float64
		for i, p := range a.Pred {
			joins, opt, obs, lens = joins+p.Joins, opt+p.Optimistic, obs+p.Observed, lens+p.Lengths
			und += a.Undos[i]
			fm, om, lm = append(fm, p.FactorMAPE), append(om, p.ObsMAPE), append(lm, p.LengthMAPE)
		}
		mean := func(x []float64) float64 { m, _ := experiment.MeanStd(x); return m }
		length := "lengths given"
		if lens > 0 {
			length = fmt.Sprintf("%.1f%% (%d)", mean(lm), lens)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(a.Nodes), a.Variant, strconv.Itoa(joins), fmt.Sprintf("%.2f%%", mean(fm)), strconv.Itoa(opt),
			fmt.Sprintf("%.2f%%", mean(om)), strconv.Itoa(obs), strconv.Itoa(und), length})
	}
	return t
}

// modelTable reports the power fit and the pair estimator's checks.
func modelTable(rep *Reproduction) report.Table {
	model := report.Table{Title: fmt.Sprintf("Models: eq. 5 (server %.0f W idle + %.0f W x CPU, GPU %.0f W + %.2f W per util point, %.2f%% CPU per 8-GPU job, sleep %.0f W); pair estimator on %d held-out Gavel pairs",
		float64(rep.Power.ServerIdle), float64(rep.Power.CPUDyn), float64(rep.Power.GPUIdle), float64(rep.Power.GPUPerPct), rep.Power.CPUPerJobPct, float64(rep.Power.Sleep), rep.HeldOut.Pairs),
		Head: []string{"what", "measured", "model", "error"}}
	for _, r := range rep.PowerFit {
		model.Rows = append(model.Rows, []string{"node power, " + r.Model + " alone (Table 1)", fmt.Sprintf("%.0f W", r.MeasuredW), fmt.Sprintf("%.0f W", r.ModelW), fmt.Sprintf("%+.1f%%", 100*(r.ModelW/r.MeasuredW-1))})
	}
	model.Rows = append(model.Rows, []string{"held-out pair slowdown factors (MAPE)", "Gavel V100", "fitted sensitivity x pressure", fmt.Sprintf("%.1f%% (median-factor guess: %.1f%%; MAE %.3f)", rep.HeldOut.MAPEPct, rep.HeldOut.MedianMAPEPct, rep.HeldOut.MAEFactor)})
	for i, f := range rep.CrossVal {
		model.Rows = append(model.Rows, []string{fmt.Sprintf("5-fold check, fold %d: %d pairs (MAPE)", i, f.Pairs), "Gavel V100", "fitted on the other folds",
			fmt.Sprintf("%.1f%% (median-factor guess: %.1f%%)", f.MAPEPct, f.MedianMAPEPct)})
	}
	bp := rep.BloxPal
	model.Rows = append(model.Rows, []string{fmt.Sprintf("blox-pal held out: %d/%d pairs (MAPE)", bp.HeldOut.Pairs, bp.Pairs), "blox-pal", "same form fitted to blox-pal",
		fmt.Sprintf("%.1f%% (median-factor guess: %.1f%%; MAE %.3f)", bp.HeldOut.MAPEPct, bp.HeldOut.MedianMAPEPct, bp.HeldOut.MAEFactor)})
	var same, stand int
	for _, g := range bp.Gavel {
		if g.StandIn {
			stand++
		} else {
			same++
		}
	}
	model.Rows = append(model.Rows, []string{fmt.Sprintf("resnet50 pairs x1-8, %d factors (MAPE)", same), "blox-pal", "Gavel-built H, ResNet-50 b32",
		fmt.Sprintf("%.1f%%", bp.GavelMAPEPct)})
	model.Rows = append(model.Rows, []string{fmt.Sprintf("vgg19 pairs x1-8, %d factors (MAPE)", stand), "blox-pal", "Gavel H, VGG as ResNet-50 b64",
		fmt.Sprintf("%.1f%%", bp.StandInMAPEPct)})
	if m := rep.PaperModel; m != nil {
		model.Rows = append(model.Rows, []string{"paper interference: JCT overhead for 2 / 3 / 4 jobs", "Sec. 6.1: 3-7.8% (2-3 jobs), 19% (4)",
			fmt.Sprintf("%.2f / %.2f / %.2f%%", m.OverheadPct[2], m.OverheadPct[3], m.OverheadPct[4]), "4 jobs: 19% with the share of 100.53% summed utilisation"})
	}
	return model
}

// totalsPlot is each scheduler's energy, cost and CO2 on the n-node
// cluster: bars the mean over the seeds, whiskers its 95% interval.
func totalsPlot(rep *Reproduction, n int) experiment.Plot {
	seeds := rep.Options.Seeds
	bp := report.BarPlot{Title: fmt.Sprintf("%d nodes: energy, cost and CO2 (mean and 95%% interval over %d seeds)", n, seeds),
		Panels: []report.BarPanel{{Label: "energy (MWh)", Format: "%.2f"}, {Label: "cost (USD)", Format: "%.2f"}, {Label: "CO2 (t)", Format: "%.2f"}}}
	for _, v := range Variants {
		a := rep.Agg(n, v.Label)
		bp.Names = append(bp.Names, v.Label)
		for k, x := range [][2]float64{a.EnergyMWh, a.CostUSD, {a.CO2Kg[0] / 1000, a.CO2Kg[1] / 1000}} {
			lo, hi := experiment.Positive95(x[0], x[1], seeds)
			bp.Panels[k].Bars = append(bp.Panels[k].Bars, report.Bar{Value: x[0], Lo: lo, Hi: hi})
		}
	}
	return experiment.Plot{File: fmt.Sprintf("totals_%d.svg", n), Caption: bp.Title + ": " + rep.Label, Plot: bp}
}

func figures(rep *Reproduction) ([]experiment.Figure, error) {
	var plots []experiment.Plot
	bar := func(file, caption, ylabel string, y func(Agg) float64) {
		lp := report.LinePlot{Title: caption, XLabel: "nodes (8 V100 each)", YLabel: ylabel, XMin: 20, XMax: 72}
		for _, v := range Variants {
			if v.Ablation {
				continue
			}
			s := report.Series{Name: v.Label}
			for _, n := range Clusters {
				s.X = append(s.X, float64(n))
				s.Y = append(s.Y, y(rep.Agg(n, v.Label)))
			}
			lp.Series = append(lp.Series, s)
		}
		plots = append(plots, experiment.Plot{File: file, Caption: caption, Plot: lp})
	}
	bar("energy_vs_fifo.svg", "Total energy normalised to FIFO (paper Fig. 3a)", "energy / FIFO", func(a Agg) float64 { return a.EnergyRatio[0] })
	bar("runtime_vs_fifo.svg", "Average job runtime normalised to FIFO (paper Fig. 3b)", "runtime / FIFO", func(a Agg) float64 { return a.RunRatio[0] })
	for ci, n := range Clusters {
		lp := report.LinePlot{Title: fmt.Sprintf("Active nodes, %d-node cluster, seed 1 (paper Fig. 4)", n), XLabel: "time (h)", YLabel: "active nodes", Steps: true}
		for vi, v := range Variants {
			if v.Ablation {
				continue
			}
			r := rep.Runs[(ci*len(Variants)+vi)*rep.Options.Seeds]
			s := report.Series{Name: v.Label}
			for _, p := range r.Res.Timeline {
				s.X = append(s.X, p.At.Seconds()/3600)
				s.Y = append(s.Y, float64(p.ActiveNodes))
			}
			lp.Series = append(lp.Series, s)
		}
		plots = append(plots, experiment.Plot{File: fmt.Sprintf("active_nodes_%d.svg", n), Caption: lp.Title, Plot: lp})
	}
	for _, n := range Clusters {
		plots = append(plots, totalsPlot(rep, n))
	}
	return experiment.Draw(plots...)
}

func activeCSV(rep *Reproduction) []byte {
	rows := [][]string{{"nodes", "variant", "t_s", "active_nodes", "running", "waiting", "shared_sets", "power_w"}}
	for ci, n := range Clusters {
		for vi, v := range Variants {
			r := rep.Runs[(ci*len(Variants)+vi)*rep.Options.Seeds]
			for _, p := range r.Res.Timeline {
				rows = append(rows, []string{strconv.Itoa(n), v.Label, report.F(p.At.Seconds()), strconv.Itoa(p.ActiveNodes), strconv.Itoa(p.Running),
					strconv.Itoa(p.Waiting), strconv.Itoa(p.SharedSets), report.Exact(float64(p.Power))})
			}
		}
	}
	return report.CSV(rows)
}

// jobsCSV lists every job of EaCO's seed-1 runs: times, deadline, undos,
// the most jobs its GPU set held, and the utilisation of its GPUs.
func jobsCSV(rep *Reproduction) ([]byte, []byte) {
	jobs := [][]string{{"nodes", "job", "submit_s", "start_s", "end_s", "deadline_s", "missed", "run_s", "undos", "max_share",
		"mean_core_util_pct", "peak_core_util_pct", "mean_mem_util_pct", "peak_mem_util_pct"}}
	sets := [][]string{{"nodes", "set", "node", "gpus", "start_s", "end_s", "jobs", "max_jobs", "mean_core_util_pct", "peak_core_util_pct", "mean_mem_util_pct", "peak_mem_util_pct"}}
	for ci, n := range Clusters {
		for vi, v := range Variants {
			if v.Label != "EaCO" {
				continue
			}
			r := rep.Runs[(ci*len(Variants)+vi)*rep.Options.Seeds].Res
			for _, j := range r.Jobs {
				dl := "inf"
				if j.Deadline != policy.NoDeadline {
					dl = report.F(j.Deadline.Seconds())
				}
				jobs = append(jobs, []string{strconv.Itoa(n), strconv.Itoa(j.ID), report.F(j.Submit.Seconds()), report.F(j.Start.Seconds()), report.F(j.End.Seconds()), dl,
					strconv.FormatBool(j.Missed), report.F(j.Run.Seconds()), strconv.Itoa(j.Undos), strconv.Itoa(j.MaxShare),
					report.F(j.MeanCore), report.F(j.PeakCore), report.F(j.MeanMem), report.F(j.PeakMem)})
			}
			for _, x := range r.Sets {
				sets = append(sets, []string{strconv.Itoa(n), strconv.Itoa(x.ID), strconv.Itoa(x.Node), strconv.Itoa(x.GPUs), report.F(x.Start.Seconds()), report.F(x.End.Seconds()),
					strconv.Itoa(x.Jobs), strconv.Itoa(x.MaxJobs), report.F(x.MeanCore), report.F(x.PeakCore), report.F(x.MeanMem), report.F(x.PeakMem)})
			}
		}
	}
	return report.CSV(jobs), report.CSV(sets)
}

// Results renders the reproduction's results directory: rep is the
// primary setting (figures, per-job files, claims count), others are
// printed beside it; sw, when not nil, is the parameter sweep.
func Results(version string, rep *Reproduction, sw *Sweep, others ...*Reproduction) (*experiment.Results, error) {
	figs, err := figures(rep)
	if err != nil {
		return nil, err
	}
	type other struct {
		Interference string                   `json:"interference"`
		Label        string                   `json:"interference_model"`
		Aggs         []Agg                    `json:"results"`
		Sets         []coloc.SetRow           `json:"fig1_sets"`
		Claims       []experiment.ClaimResult `json:"paper_claims"`
	}
	var os []other
	for _, o := range others {
		os = append(os, other{o.Interference, o.Label, o.Aggs, o.Sets, o.Claims})
	}
	res, err := experiment.NewResults("EaCO reproduction", version, struct {
		Version string  `json:"version"`
		Jobs    int     `json:"jobs"`
		PerHour float64 `json:"jobs_per_hour"`
		Seeds   int     `json:"seeds"`
		*Reproduction
		Others []other `json:"other_settings"`
		Sweep  *Sweep  `json:"sweep,omitempty"`
	}{version, rep.Options.Jobs, rep.Options.PerHour, rep.Options.Seeds, rep, os, sw})
	if err != nil {
		return nil, err
	}
	jobsCSV, setsCSV := jobsCSV(rep)
	res.AddStandIns(rep.StandIns)
	res.AddGrid(rep.Grid)
	res.AddModelBand(ModelBandNote)
	res.Tail = append(res.Tail, fmt.Sprintf("paper claims holding (%s): %d of %d", rep.Label, experiment.Held(rep.Claims), len(rep.Claims)))
	for _, o := range others {
		res.Tail = append(res.Tail, fmt.Sprintf("paper claims holding, second setting (%s): %d of %d", o.Label, experiment.Held(o.Claims), len(o.Claims)))
	}
	res.Tail = append(res.Tail, "")
	res.Tables, res.Figures = Tables(rep, others...), figs
	res.Files["runs.csv"], res.Files["active_nodes.csv"] = runsCSV(append([]*Reproduction{rep}, others...)...), activeCSV(rep)
	res.Files["eaco_jobs_seed1.csv"], res.Files["eaco_sets_seed1.csv"] = jobsCSV, setsCSV
	res.Listing = "summary.json, runs.csv, active_nodes.csv, eaco_jobs_seed1.csv, eaco_sets_seed1.csv, *.svg, report.html"
	if sw != nil {
		res.Tables = append(res.Tables, sw.Tables()...)
		res.Files["sweep.csv"] = sw.CSV()
		res.Listing = "summary.json, runs.csv, sweep.csv, active_nodes.csv, eaco_jobs_seed1.csv, eaco_sets_seed1.csv, *.svg, report.html"
	}
	ph := make([]string, len(rep.Placeholders))
	for i, p := range rep.Placeholders {
		ph[i] = p.A + " + " + p.B
	}
	res.AddNotes(fmt.Sprintf("Gavel pairs left out of the Gavel setting (co-located rates equal the isolated ones): %d: %s", len(ph), strings.Join(ph, "; ")))
	res.Footnote = fmt.Sprintf("wattsched %s; %d jobs at %.0f/h; seeds 1-%d; clusters %v x 8 V100.", version, rep.Options.Jobs, rep.Options.PerHour, rep.Options.Seeds, Clusters)
	return res, nil
}

// Study is `wattsched reproduce eaco`.
type Study struct {
	quick   bool
	jobs    int
	perHour float64
	seeds   int
	sweep   bool
}

// Name implements experiment.Study.
// ModelBandNote says why the co-location engine's energy has no power
// model band.
var ModelBandNote = experiment.UntestedBand("the co-location engine's power (GPUs shared by time-slicing, each job's share of the GPU's power and the server's)",
	"no public measurement of power under time-sliced sharing was found")

func (*Study) Name() string { return "eaco" }

// Synopsis implements experiment.Study.
func (*Study) Synopsis() string {
	return `-o DIR [--quick] [--jobs N] [--per-hour R] [--seeds S] [--sweep] [--force]
        reproduce the EaCO paper's evaluation (Gavel data stands in; see the output)`
}

// Flags implements experiment.Study.
func (st *Study) Flags(fs *flag.FlagSet) {
	fs.BoolVar(&st.quick, "quick", false, fmt.Sprintf("%d jobs and %d seeds instead of %d and %d", QuickJobs, QuickSeeds, DefaultJobs, DefaultSeeds))
	fs.IntVar(&st.jobs, "jobs", 0, fmt.Sprintf("jobs per workload (default %d)", DefaultJobs))
	fs.Float64Var(&st.perHour, "per-hour", DefaultPerHour, "Poisson arrival rate (jobs per hour)")
	fs.IntVar(&st.seeds, "seeds", 0, fmt.Sprintf("seeds 1..S (default %d)", DefaultSeeds))
	fs.BoolVar(&st.sweep, "sweep", false, "also sweep the parameters the paper does not give (alpha, max_share, arrival rate) and say which settings meet its runtime bound (sweep.csv)")
}

// Inputs implements experiment.Study: no flag names a file.
func (st *Study) Inputs() []scenario.Input { return nil }

// Check implements experiment.Study.
func (st *Study) Check() error {
	switch {
	case st.jobs < 0 || st.jobs > 100000:
		return fmt.Errorf("reproduce eaco: --jobs %d, want 1..100000", st.jobs)
	case !(st.perHour >= scenario.MinPerHour && st.perHour <= 10000):
		return fmt.Errorf("reproduce eaco: --per-hour %v, want %g..10000", st.perHour, scenario.MinPerHour)
	case st.seeds < 0 || st.seeds > 100:
		return fmt.Errorf("reproduce eaco: --seeds %d, want 1..100", st.seeds)
	}
	if jobs, _ := st.Options(); float64(jobs)/st.perHour > scenario.MaxArrivalSpanH {
		return fmt.Errorf("reproduce eaco: --jobs %d at --per-hour %g arrive over about %.0f h, above %d h (10 years)", jobs, st.perHour, float64(jobs)/st.perHour, scenario.MaxArrivalSpanH)
	}
	return nil
}

// Options resolves the flags.
func (st *Study) Options() (jobs, seeds int) {
	jobs, seeds = DefaultJobs, DefaultSeeds
	if st.quick {
		jobs, seeds = QuickJobs, QuickSeeds
	}
	if st.jobs > 0 {
		jobs = st.jobs
	}
	if st.seeds > 0 {
		seeds = st.seeds
	}
	return jobs, seeds
}

// Run implements experiment.Study.
func (st *Study) Run(_ context.Context, env *experiment.Env) ([]*experiment.Results, error) {
	e, err := NewEnv(env.Catalog)
	if err != nil {
		return nil, err
	}
	jobs, seeds := st.Options()
	// Runs: settings x clusters x schedulers x seeds (the sweep's are not
	// counted: it runs after, at the same jobs per run).
	if err := experiment.EstimateStudy("reproduce eaco", fmt.Sprintf("--jobs %d", jobs), experiment.ColocFigures, jobs, len(e.Settings)*len(Clusters)*len(Variants)*seeds, env.Workers).Check(env.MaxMemory); err != nil {
		return nil, err
	}
	env.Notef("EaCO reproduction: %d interference settings x %d clusters x %d schedulers x %d seeds, %d jobs each", len(e.Settings), len(Clusters), len(Variants), seeds, jobs)
	var reps []*Reproduction
	for _, set := range e.Settings {
		rep, err := Reproduce(Options{Registries: env.Registries, Env: e, Jobs: jobs, PerHour: st.perHour, Seeds: seeds, Workers: env.Workers, Progress: env.Progress, Interference: set.Name})
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	var sw *Sweep
	if st.sweep {
		if sw, err = RunSweep(SweepOptions{Registries: env.Registries, Env: e, Jobs: jobs, Seeds: min(seeds, SweepSeeds), Workers: env.Workers, Progress: env.Progress}); err != nil {
			return nil, err
		}
	}
	return experiment.One(Results(env.Version, reps[0], sw, reps[1:]...))
}

var _ experiment.Study = (*Study)(nil)
