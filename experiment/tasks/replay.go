package tasks

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// ReplayRun is one policy replaying the trace: tasks arrive at their
// creation time, run for their recorded duration and leave.
type ReplayRun struct {
	Policy string
	Result *sim.Result
	// CostUSD and CO2Kg price the run's hourly energy (scenario.Account).
	CostUSD, CO2Kg float64
	// PowerDown: the run powered idle nodes off (scenario power_down).
	PowerDown bool
	// Measured is what recorded readings did (scenario measured).
	Measured *MeasuredSummary
	// explain is the run's explain.csv rows (--explain; nil otherwise).
	explain *explainLog
	// notes are the Placer's notes (policy.Noter: where a scorer fell back).
	notes []string
	// errs are the power model's error figures per GPU model (nil: none).
	errs errorOf
	// domainsAbove is the threshold of the domains' time above.
	domainsAbove float64
}

// ReplaySummary condenses one replay.
type ReplaySummary struct {
	Policy     string         `json:"policy"`
	Tasks      int            `json:"tasks"`
	Started    int            `json:"started"`
	EnergyKWh  experiment.Num `json:"energy_kwh"`
	CPUKWh     experiment.Num `json:"cpu_kwh"`
	GPUKWh     experiment.Num `json:"gpu_kwh"`
	IdleKWh    experiment.Num `json:"idle_kwh"`
	DynamicKWh experiment.Num `json:"dynamic_kwh"`
	MeanWaitS  experiment.Num `json:"mean_wait_s"`
	MeanJCTS   experiment.Num `json:"mean_jct_s"`
	MakespanS  experiment.Num `json:"makespan_s"`
	PeakPowerW experiment.Num `json:"peak_power_w"`
	MeanPowerW experiment.Num `json:"mean_power_w"`
	CostUSD    experiment.Num `json:"cost_usd"`
	CO2Kg      experiment.Num `json:"co2_kg"`
	// PowerDown is set when the scenario powers idle nodes off.
	PowerDown *PowerDownSummary `json:"power_down,omitempty"`
	// Measured is set when the scenario replays measured power.
	Measured *MeasuredSummary `json:"measured,omitempty"`
	// ByGPUModel is what each GPU model's nodes carried (gpu_models.csv).
	ByGPUModel []ModelUsage `json:"by_gpu_model"`
	// EnergyModelBandKWh is the power model's error band of EnergyKWh
	// (a half-width, kWh): the sum over GPU models of the busy-GPU energy
	// times the model's measured p95 relative error (ByGPUModel). It is
	// not a seed interval: a replay runs once.
	EnergyModelBandKWh experiment.Num `json:"energy_kwh_model_band"`
	// GPUBusyKWh is the energy of busy GPUs, the part the band is over.
	GPUBusyKWh experiment.Num `json:"gpu_busy_kwh"`
	// Domains is each power domain's estimated power (scenario topology;
	// domains.csv).
	Domains []DomainReport `json:"domains,omitempty"`
	// Gangs sums up the gang jobs (nil without gangs).
	Gangs *GangSummary `json:"gangs,omitempty"`
}

// PowerDownSummary is what node power management did in one run.
type PowerDownSummary struct {
	OffNodeH  experiment.Num `json:"off_node_hours"`
	PowerOffs int            `json:"power_offs"`
	Wakes     int            `json:"wakes"`
}

// powerDown is the scenario's node power management for the engine.
func powerDown(s *scenario.Scenario) *sim.PowerDown {
	if s.PowerDown == nil {
		return nil
	}
	ms := func(sec float64) job.Time { return job.Time(math.Round(sec * 1000)) }
	return &sim.PowerDown{IdleAfter: ms(s.PowerDown.IdleAfterS), Wake: ms(s.PowerDown.WakeS), OffW: hw.Watts(s.PowerDown.OffW)}
}

// replayed is one replay's outcome.
type replayed struct {
	res      *sim.Result
	usd, kg  float64
	measured *MeasuredSummary
	explain  *explainLog
	notes    []string
}

// replayOnce replays the pod list under one policy with the given seed
// (ties between nodes broken by that seed's order of the nodes by name,
// cluster.TieRank), with the recorded readings if any, and prices its
// energy. variant names the setting in explain.csv's variant column
// (compare; "" for none).
func replayOnce(env *experiment.Env, s *scenario.Scenario, ps *scenario.PolicySpec, in *Inputs, acct *elgrid.Account, rec *recorded, seed uint64, variant string) (*replayed, error) {
	c, pm, placer, err := setup(env, ps, in)
	if err != nil {
		return nil, err
	}
	placer.SetRank(cluster.TieRank(c.Nodes, seed))
	o := sim.Options{Mode: sim.Replay, Power: pm, PowerLimit: limit(s, c), Seed: seed, PowerDown: powerDown(s), Speed: in.Speed}
	if in.Domains != nil {
		o.Domains, o.DomainsAbove = in.Domains, s.Topology.Above()
	}
	if h, ser := seriesHorizon(acct); ser != nil {
		o.Horizon, o.HorizonWhat = h, "the end of "+ser.Name
	}
	m := rec.newRun()
	if m != nil {
		o.MeterAt = m.at
	}
	online := &policy.Online{Placer: placer, Gangs: gangOptions(s, o.Domains)}
	xl := newExplainLog(env, s, ps, seed, c)
	if xl != nil {
		xl.variant = variant
		online.Explain = xl.record
	}
	e, err := sim.New(c, online, o)
	if err != nil {
		return nil, err
	}
	res, err := e.Run(in.Pods)
	if err != nil {
		return nil, err
	}
	usd, kg, err := acct.Cost(res.Hourly)
	if err != nil {
		return nil, err
	}
	out := &replayed{res: res, usd: usd, kg: kg, explain: xl, notes: placer.Notes()}
	if m != nil {
		out.measured = &m.sum
	}
	return out, nil
}

// RunReplay replays the scenario's pod list under each policy. Replay is
// deterministic: it runs once per policy whatever the seed count.
func RunReplay(env *experiment.Env, s *scenario.Scenario, in *Inputs) ([]*ReplayRun, error) {
	if s.Mode != scenario.Replay {
		return nil, fmt.Errorf("scenario %s: mode %q is not replay", s.Name, s.Mode)
	}
	acct, err := s.Account()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	rec, err := loadRecorded(s, in)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := checkTasks(env, s, in); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	// The estimate after the checks: the series' coverage bounds the hours
	// it counts.
	if err := EstimateReplay(s, in).Check(env.MaxMemory); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	out, errs := experiment.ShardedRun(env.Shards, len(s.Policies), env.Workers, func(i int) (*ReplayRun, error) {
		ps := &s.Policies[i]
		r, err := replayOnce(env, s, ps, in, acct, rec, s.FirstSeed, "")
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", ps.Name, err)
		}
		return &ReplayRun{Policy: ps.Name, Result: r.res, CostUSD: r.usd, CO2Kg: r.kg, PowerDown: s.PowerDown != nil, Measured: r.measured, explain: r.explain, notes: r.notes}, nil
	}, env.Progress, func(i int) string { return s.Policies[i].Name })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// Set here, not in the run, so that runs merged from shards (which
	// carry exported fields only) get them too.
	for _, r := range out {
		if r != nil {
			r.errs = runErrors(env.Catalog, s.PowerModel)
			r.domainsAbove = s.Topology.Above()
		}
	}
	return out, nil
}

func kwh(j interface{ KWh() float64 }) experiment.Num { return experiment.Num(j.KWh()) }

// Summarize condenses a replay of in.
func (r *ReplayRun) Summarize(in *Inputs) ReplaySummary {
	res := r.Result
	s := ReplaySummary{ByGPUModel: modelUsage(in.Nodes, in.Pods, res, r.errs), Policy: r.Policy, Tasks: len(res.Tasks),
		EnergyKWh: kwh(res.CPUEnergy + res.GPUEnergy), CPUKWh: kwh(res.CPUEnergy), GPUKWh: kwh(res.GPUEnergy),
		IdleKWh:    kwh(res.IdleEnergy),
		DynamicKWh: kwh(res.CPUEnergy + res.GPUEnergy - res.IdleEnergy),
		MakespanS:  experiment.Num(float64(res.End) / 1000), CostUSD: experiment.Num(r.CostUSD), CO2Kg: experiment.Num(r.CO2Kg)}
	if r.PowerDown {
		s.PowerDown = &PowerDownSummary{OffNodeH: experiment.Num(res.OffNodeSeconds / 3600), PowerOffs: res.PowerOffs, Wakes: res.Wakes}
	}
	s.Measured = r.Measured
	s.Domains = domainReports(res.Domains, r.domainsAbove)
	s.EnergyModelBandKWh = usageBand(s.ByGPUModel)
	for _, u := range s.ByGPUModel {
		s.GPUBusyKWh += u.GPUBusyKWh
	}
	var wait, jct float64
	ended, started := 0, 0
	for _, t := range res.Tasks {
		if t.Start >= 0 {
			s.Started++
		}
		if t.Gang != "" {
			continue // a gang is one job: counted below
		}
		if t.Start >= 0 {
			started++
			wait += float64(t.Start - t.Submit)
		}
		if t.End >= 0 {
			ended++
			jct += float64(t.End - t.Submit)
		}
	}
	for _, g := range res.Gangs {
		if g.Start >= 0 {
			started++
			wait += float64(g.Start - g.Submit)
		}
		if g.End >= 0 {
			ended++
			jct += float64(g.End - g.Submit)
		}
	}
	s.Gangs = summarizeGangs(res.Gangs)
	// Over the jobs that started (ended): none gives no mean (null in
	// summary.json, "-" in the table), never a 0 that reads as no wait.
	s.MeanWaitS, s.MeanJCTS = experiment.Num(math.NaN()), experiment.Num(math.NaN())
	if started > 0 {
		s.MeanWaitS = experiment.Num(wait / float64(started) / 1000)
	}
	if ended > 0 {
		s.MeanJCTS = experiment.Num(jct / float64(ended) / 1000)
	}
	var peak float64
	for _, p := range res.Samples {
		peak = max(peak, float64(p.CPUW+p.GPUW))
	}
	s.PeakPowerW = experiment.Num(peak)
	if res.End > 0 {
		s.MeanPowerW = experiment.Num(float64(res.CPUEnergy+res.GPUEnergy) / (float64(res.End) / 1000))
	}
	return s
}

// ReplayResults renders a replay: summary.json, jobs.csv, timeline.csv,
// power.svg and report.html.
func ReplayResults(version string, s *scenario.Scenario, in *Inputs, runs []*ReplayRun) (*experiment.Results, error) {
	var sums []ReplaySummary
	jobs := [][]string{{"policy", "task", "name", "submit_s", "start_s", "end_s", "wait_s", "node", "energy_j"}}
	timeline := [][]string{{"policy", "time_s", "cpu_w", "gpu_w", "active_nodes", "alloc_gpu_milli", "arrived"}}
	var ser []report.Series
	secs := func(ms job.Time) string {
		if ms < 0 {
			return ""
		}
		return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
	}
	models := [][]string{append([]string{"policy"}, modelHead...)}
	doms := [][]string{append([]string{"policy"}, domainHead...)}
	dt := domainTable(fmt.Sprintf("time above %.0f%% of each limit", 100*s.Topology.Above()), []string{"policy"})
	mt := modelTable("Per GPU model (pods started, GPU-hours, energy busy and idle, completion times of the pods that ended there)", []string{"policy"})
	for _, r := range runs {
		x := r.Summarize(in)
		sums = append(sums, x)
		for _, u := range x.ByGPUModel {
			models = append(models, append([]string{r.Policy}, modelCSVRow(u)...))
			mt.Rows = append(mt.Rows, modelTableRow([]string{r.Policy}, u, "%.0f"))
		}
		for _, d := range x.Domains {
			doms = append(doms, domainRow([]string{r.Policy}, d))
			dt.Rows = append(dt.Rows, domainTableRow([]string{r.Policy}, d))
		}
		for _, t := range r.Result.Tasks {
			wait := job.Time(-1)
			if t.Start >= 0 {
				wait = t.Start - t.Submit
			}
			node := ""
			if t.Node >= 0 {
				node = in.Nodes[t.Node].Name
			}
			jobs = append(jobs, []string{r.Policy, strconv.Itoa(int(t.ID)), t.Name, secs(t.Submit), secs(t.Start), secs(t.End), secs(wait), node, report.F(float64(t.Energy))})
		}
		line := report.Series{Name: r.Policy}
		for i, p := range r.Result.Samples {
			// One row per distinct time: the state after the last event at that time.
			if i+1 < len(r.Result.Samples) && r.Result.Samples[i+1].At == p.At {
				continue
			}
			timeline = append(timeline, []string{r.Policy, secs(p.At), report.F(float64(p.CPUW)), report.F(float64(p.GPUW)),
				strconv.Itoa(p.ActiveNodes), strconv.FormatInt(p.AllocGPUMilli, 10), strconv.Itoa(p.Arrived)})
			line.X = append(line.X, float64(p.At)/3.6e6)
			line.Y = append(line.Y, float64(p.CPUW+p.GPUW)/1000)
		}
		ser = append(ser, line)
	}
	svg, err := report.LinePlot{Title: "Cluster power (" + s.Name + ")", XLabel: "time (h)", YLabel: "power (kW)", Series: ser, Steps: true}.SVG()
	if err != nil {
		return nil, err
	}
	bars, err := replayBars(in, runs)
	if err != nil {
		return nil, err
	}
	res, err := experiment.NewResults(s.Name, version, struct {
		Version    string             `json:"version"`
		Scenario   *scenario.Scenario `json:"scenario"`
		Source     string             `json:"data_source"`
		JobSpeed   string             `json:"job_speed"`
		NeverStart *NeverStart        `json:"never_start,omitempty"`
		Policies   []ReplaySummary    `json:"policies"`
	}{version, s, in.Source, in.JobSpeed, in.NeverStart, sums})
	if err != nil {
		return nil, err
	}
	res.AddNotes(s.Description)
	if err := addReplayNotes(res, s, in); err != nil {
		return nil, err
	}
	for _, r := range runs {
		addPolicyNotes(res, r.Policy, r.notes)
	}
	res.Tables = []report.Table{ReplayTable(in, runs), mt}
	if gt, ok := GangTable(in, runs); ok {
		res.Tables = append(res.Tables, gt)
	}
	res.Figures = []experiment.Figure{{File: "totals.svg", Caption: "Each policy's energy, cost and CO2 over the whole replay (one run per policy: a replay is deterministic, so there is no interval)", SVG: bars},
		{File: "power.svg", Caption: "Estimated cluster power over time", SVG: svg}}
	res.Files["jobs.csv"], res.Files["timeline.csv"], res.Files[GPUModelsFile] = report.CSV(jobs), report.CSV(timeline), report.CSV(models)
	res.Listing = "summary.json, jobs.csv, timeline.csv, " + GPUModelsFile + ", totals.svg, power.svg, report.html"
	if in.Domains != nil {
		res.Tables = append(res.Tables, dt)
		res.Files[DomainsFile] = report.CSV(doms)
		res.Listing = "summary.json, jobs.csv, timeline.csv, " + GPUModelsFile + ", " + DomainsFile + ", totals.svg, power.svg, report.html"
	}
	var xls []*explainLog
	for _, r := range runs {
		xls = append(xls, r.explain)
	}
	addExplain(res, s, xls, false)
	return res, nil
}

// replayBars draws each policy's energy, cost and CO2 as bars.
func replayBars(in *Inputs, runs []*ReplayRun) ([]byte, error) {
	bp := report.BarPlot{Title: "Energy, cost and CO2 of the replay",
		Panels: []report.BarPanel{{Label: "energy (kWh)", Format: "%.1f"}, {Label: "cost (USD)", Format: "%.2f"}, {Label: "CO2 (kg)", Format: "%.1f"}}}
	nan := math.NaN()
	for _, r := range runs {
		x := r.Summarize(in)
		bp.Names = append(bp.Names, r.Policy)
		for k, v := range []experiment.Num{x.EnergyKWh, x.CostUSD, x.CO2Kg} {
			bp.Panels[k].Bars = append(bp.Panels[k].Bars, report.Bar{Value: float64(v), Lo: nan, Hi: nan})
		}
	}
	return bp.SVG()
}

// addReplayNotes adds the notes of a replay's or a comparison's results
// after its description (the data, the job speed, the grid's sources, the
// pods that can never start, the recorded readings), and the lines
// printed after its tables.
func addReplayNotes(res *experiment.Results, s *scenario.Scenario, in *Inputs) error {
	acct, err := s.Account()
	if err != nil {
		return err
	}
	rec, err := loadRecorded(s, in)
	if err != nil {
		return err
	}
	var warn []string
	if rec != nil {
		res.Tail = append(res.Tail, rec.note)
	}
	if ns := in.NeverStart; ns != nil {
		const counted = "; they count in tasks, never in started, and the waits and completion times are over the pods that started"
		res.Tail = append(res.Tail, "warning: "+ns.Line(len(in.Pods))+counted)
		warn = append(warn, "Warning: "+ns.Line(len(in.Pods))+counted+".")
	}
	if rec != nil {
		warn = append(warn, rec.note)
	}
	res.AddNotes("Data: "+in.Source, in.JobSpeed)
	res.Tail = append(res.Tail, in.JobSpeed)
	res.AddGrid(acct.Where)
	res.AddNotes(warn...)
	return nil
}

// addPolicyNotes adds a policy's scorer notes (policy.Noter) to the
// report's notes and the lines printed after the tables, once each.
func addPolicyNotes(res *experiment.Results, pol string, notes []string) {
	for _, n := range notes {
		line := "note: policy " + pol + ", " + n
		if slices.Contains(res.Tail, line) {
			continue
		}
		res.Tail = append(res.Tail, line)
		res.AddNotes("Policy " + pol + ", " + n + ".")
	}
}

// orDash formats n, or "-" for NaN (no task to average over).
func orDash(format string, n experiment.Num) string {
	if math.IsNaN(float64(n)) {
		return "-"
	}
	return fmt.Sprintf(format, float64(n))
}

// ReplayTable renders the replay summaries for the terminal.
func ReplayTable(in *Inputs, runs []*ReplayRun) report.Table {
	t := report.Table{Title: "Replay", Head: []string{"policy", "tasks", "started", "energy kWh", "power model ± kWh", "idle kWh", "mean wait s", "mean JCT s", "peak kW", "cost USD", "CO2 kg"}}
	pd := len(runs) > 0 && runs[0].PowerDown
	if pd {
		t.Title = "Replay, idle nodes powered off (power_down)"
		t.Head = append(t.Head, "node-hours off", "power-offs", "wakes")
	}
	if len(runs) > 0 && runs[0].Measured != nil {
		t.Title += ", gate with measured power (measured)"
		t.Head = append(t.Head, "measured readings")
	}
	for _, r := range runs {
		x := r.Summarize(in)
		row := []string{x.Policy, strconv.Itoa(x.Tasks), strconv.Itoa(x.Started), fmt.Sprintf("%.1f", float64(x.EnergyKWh)), fmt.Sprintf("%.1f", float64(x.EnergyModelBandKWh)),
			fmt.Sprintf("%.1f", float64(x.IdleKWh)), orDash("%.1f", x.MeanWaitS), orDash("%.0f", x.MeanJCTS), fmt.Sprintf("%.1f", float64(x.PeakPowerW)/1000),
			fmt.Sprintf("%.2f", float64(x.CostUSD)), fmt.Sprintf("%.0f", float64(x.CO2Kg))}
		if x.PowerDown != nil {
			row = append(row, fmt.Sprintf("%.0f", float64(x.PowerDown.OffNodeH)), strconv.Itoa(x.PowerDown.PowerOffs), strconv.Itoa(x.PowerDown.Wakes))
		}
		if x.Measured != nil {
			row = append(row, strconv.Itoa(x.Measured.Measured))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
