package cedla

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/policy"
	pcedla "github.com/wattsched/wattsched/policy/cedla"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/solver"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

// jobColumns and loadColumn are the header of a slotted scenario's job
// list and the first column of its inference load (docs/formats.md); the
// load has one more column per DNN model, in requests/min.
var jobColumns = []string{"id", "model", "arrival_slot", "deadline_slot", "epochs", "priority"}

const loadColumn = "slot"

// ScenarioJobs are training jobs read from a file: Jobs in arrival order
// (stable), with IDs 0..n-1 for the engine, and IDs[k] the file's id of
// Jobs[k].
type ScenarioJobs struct {
	Jobs []policy.SlotJob
	IDs  []string
}

// ReadJobs reads a job list (CSV with the columns id, model, arrival_slot,
// deadline_slot, epochs and priority, in any order): a model is one of
// models, arrival and deadline slots are in 0..slots-1 with the deadline
// not before the arrival, epochs a number in (0, 1e6] (an epoch as in the
// models table: its images_per_epoch at batch 32), priority an integer
// 0..1000 (lower is rejected first). Errors name the file, line and column.
func ReadJobs(r io.Reader, file string, models []string, slots int) (*ScenarioJobs, error) {
	cr, head, err := trace.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	idx, err := cr.Columns(head, jobColumns)
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for k, c := range jobColumns {
		col[c] = idx[k]
	}
	out := &ScenarioJobs{}
	seen := map[string]int{}
	if _, err := cr.Rows(len(head), func(line int, rec []string) error {
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		integer := func(c string, lo, hi int) (int, error) {
			v, err := strconv.Atoi(get(c))
			if err != nil || v < lo || v > hi {
				return 0, cr.Bad(line, c, fmt.Errorf("%q, want an integer %d..%d", get(c), lo, hi))
			}
			return v, nil
		}
		id := get("id")
		if err := trace.CheckName(id); err != nil {
			return cr.Bad(line, "id", err)
		}
		if l, dup := seen[id]; dup {
			return cr.Bad(line, "id", fmt.Errorf("%q also on line %d", id, l))
		}
		seen[id] = line
		model := slices.Index(models, get("model"))
		if model < 0 {
			return cr.Bad(line, "model", fmt.Errorf("%q, want one of %s", get("model"), strings.Join(models, ", ")))
		}
		arr, err := integer("arrival_slot", 0, slots-1)
		if err != nil {
			return err
		}
		dl, err := integer("deadline_slot", arr, slots-1)
		if err != nil {
			return err
		}
		ep, err := strconv.ParseFloat(get("epochs"), 64)
		if err != nil || !(ep > 0) || ep > 1e6 {
			return cr.Bad(line, "epochs", fmt.Errorf("%q, want a number in (0, 1e6]", get("epochs")))
		}
		pri, err := integer("priority", 0, 1000)
		if err != nil {
			return err
		}
		out.Jobs = append(out.Jobs, policy.SlotJob{ID: len(out.Jobs), Model: model, Arrival: arr, Deadline: dl, Epochs: ep, Priority: pri})
		out.IDs = append(out.IDs, id)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(out.Jobs) == 0 {
		return nil, cr.Bad(2, "", errors.New("no jobs"))
	}
	order := make([]int, len(out.Jobs))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return out.Jobs[a].Arrival - out.Jobs[b].Arrival })
	sorted := &ScenarioJobs{}
	for k, o := range order {
		j := out.Jobs[o]
		j.ID = k
		sorted.Jobs = append(sorted.Jobs, j)
		sorted.IDs = append(sorted.IDs, out.IDs[o])
	}
	return sorted, nil
}

// ReadLoad reads an inference load (CSV: slot, then one column per
// model in requests/min, rows for slots 0, 1, 2, ... in order) and returns
// requests/s per slot and model for slots+extra slots: at least slots rows
// are needed; slots after the file's last (the planners' look-ahead) keep
// its last row. Errors name the file, line and column.
func ReadLoad(r io.Reader, file string, models []string, slots, extra int) ([][]float64, error) {
	cr, head, err := trace.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	cols, err := cr.Columns(head, append([]string{loadColumn}, models...))
	if err != nil {
		return nil, err
	}
	var out [][]float64
	line, err := cr.Rows(len(head), func(line int, rec []string) error {
		if v := strings.TrimSpace(rec[cols[0]]); v != strconv.Itoa(len(out)) {
			return cr.Bad(line, loadColumn, fmt.Errorf("%q, want %d (one row per slot, in order from 0)", v, len(out)))
		}
		row := make([]float64, len(models))
		for i := range models {
			s := strings.TrimSpace(rec[cols[i+1]])
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v >= 0) || v > 1e8 {
				return cr.Bad(line, models[i], fmt.Errorf("%q, want requests/min in 0..1e8", s))
			}
			row[i] = v / 60
		}
		out = append(out, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) < slots {
		return nil, cr.Bad(line, "", fmt.Errorf("%d slots, want at least the scenario's %d", len(out), slots))
	}
	for len(out) < slots+extra {
		out = append(out, slices.Clone(out[len(out)-1]))
	}
	return out, nil
}

// fromHour is s from hour start on (start lies in s).
func fromHour(s *grid.Series, start time.Time) *grid.Series {
	c := *s
	k := int(start.Sub(s.Start) / time.Hour)
	c.Values, c.Start = s.Values[k:], start
	return &c
}

// progressNodeSlots is the nodes x slots from which a run of a slotted
// scenario reports how far it has got (env.RunProgress, each twentieth of
// its slots): 4,096 nodes of each type over one day (1,572,864) ran for
// 60-97 s without a line; the example (24 nodes, 96 slots) stays quiet.
const progressNodeSlots = 100_000

// slotSystem is a system of the scenario with its arguments as built.
type slotSystem struct {
	scenario.System
	raw         []byte
	every, look int
}

// RunScenario runs each system of a slotted scenario on each seed (mode
// slotted): the scenario's node counts, jobs, inference load and price
// series, with the CE-DLA study's models table, power fits and engine.
func RunScenario(_ context.Context, env *experiment.Env, s *scenario.Scenario) ([]*experiment.Results, error) {
	c := s.Slotted
	fail := func(err error) ([]*experiment.Results, error) { return nil, fmt.Errorf("scenario %s: %w", s.Name, err) }
	tb, err := EmbeddedTable()
	tableSrc := "the CE-DLA study's models table (embedded " + ModelsFile + ")"
	if c.Models != "" {
		tb, err = ReadTableFile(s.Path(c.Models))
		tableSrc = "models table " + c.Models
	}
	if err != nil {
		return fail(fmt.Errorf("slotted.models: %w", err))
	}
	counts := make([]int, len(GPUs))
	for t := range counts {
		counts[t] = scenario.SlottedDefaultNodes
	}
	if c.Nodes != nil {
		for t, gpu := range GPUs {
			counts[t] = c.Nodes[gpu]
		}
		var unknown []string
		for k := range c.Nodes {
			if !slices.Contains(GPUs, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return fail(fmt.Errorf("slotted.nodes: unknown node type %s (the models table has %s)", strings.Join(unknown, ", "), strings.Join(GPUs, ", ")))
		}
	}
	// Prices and carbon: the study's weeks, or the grid section's series
	// from its start on; slot 0 is that hour.
	ps, cs, err := Grid()
	if err != nil {
		return nil, err
	}
	priceSrc := standInPrices + "; " + standInCarbon
	if s.Grid != nil {
		a, err := s.Account()
		if err != nil {
			return fail(err)
		}
		ps, cs, priceSrc = fromHour(a.Price, a.Start), fromHour(a.Carbon, a.Start), a.Where
	}
	setup, err := NewSetupGrid(tb, 0, c.Slots, c.Lookahead, c.ReplanEvery, 1, ps, cs)
	if err != nil {
		return fail(fmt.Errorf("grid: %w", err))
	}
	var fileJobs *ScenarioJobs
	jobSrc := fmt.Sprintf("%d jobs per seed, drawn as the CE-DLA study draws them: shortest completion times and times of day of single-GPU Philly jobs of an hour or more (five embedded days), "+
		"arriving on a uniformly drawn day of the first week, deadlines with the paper's Gaussian slack (mean 50%%, sd 7.5%%); a draw due after the last slot is drawn again", c.Jobs.Count)
	if c.Jobs.File != "" {
		f, err := userfile.Open(s.Path(c.Jobs.File), userfile.Table)
		if err != nil {
			return fail(fmt.Errorf("slotted.jobs.file: %w", err))
		}
		fileJobs, err = ReadJobs(f, s.Path(c.Jobs.File), DNNs, c.Slots)
		f.Close()
		if err != nil {
			return fail(err)
		}
		jobSrc = fmt.Sprintf("%d jobs from %s", len(fileJobs.Jobs), c.Jobs.File)
	}
	var fileLoad [][]float64
	loadSrc := fmt.Sprintf("%.6g requests/min in all, %s", c.Inference.ReqPerMin, strings.TrimPrefix(standInInference, "inference: "))
	if c.Inference.File != "" {
		f, err := userfile.Open(s.Path(c.Inference.File), userfile.Table)
		if err != nil {
			return fail(fmt.Errorf("slotted.inference.file: %w", err))
		}
		fileLoad, err = ReadLoad(f, s.Path(c.Inference.File), DNNs, c.Slots, c.Lookahead)
		f.Close()
		if err != nil {
			return fail(err)
		}
		loadSrc = "requests/min per slot and model from " + c.Inference.File
	}
	// A node serves one model at a time (CE-DLA eq. 25) and all of the
	// inference load is served, so a slot needs a node per model with
	// load; every planner degrades at any load the section allows (the
	// latency bound gives way) but cannot serve a model on no node.
	need, where := 0, ""
	if c.Inference.ReqPerMin > 0 {
		need, where = len(DNNs), fmt.Sprintf("req_per_min %v spreads load over all %d models", c.Inference.ReqPerMin, len(DNNs))
	}
	for h, row := range fileLoad {
		n := 0
		for _, l := range row {
			if l > 0 {
				n++
			}
		}
		if n > need {
			need, where = n, fmt.Sprintf("%s has load for %d models in slot %d", c.Inference.File, n, h)
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total < need {
		return fail(fmt.Errorf("slotted.nodes: %d nodes in all, fewer than the models with inference load in one slot (%s); a node serves one model at a time: give at least %d nodes", total, where, need))
	}
	// The planners, built once here so that a bad one (CE-DLA without
	// HiGHS) stops the run before any work.
	deps := policy.SlotDeps{RestartSeconds: setup.RestartSeconds, SolverLog: env.SolverLog}
	if solver.Available() {
		deps.Solver = setup.Solver
	}
	systems := make([]slotSystem, len(c.Systems))
	for k, sys := range c.Systems {
		every, look := 1, 1
		if sys.Policy == pcedla.Name {
			every, look = c.ReplanEvery, c.Lookahead
			sys = c.PlannerSystem(sys)
		}
		raw, err := sys.Ref().RawArgs()
		if err != nil {
			return fail(err)
		}
		if _, err := env.Registries.Slotted.New(sys.Policy, raw, deps); err != nil {
			if errors.Is(err, policy.ErrNoSolver) {
				err = policy.ErrNoSolver // not a fault of the arguments
			}
			return fail(fmt.Errorf("slotted.systems[%d] (%s): %w", k, sys.Name, err))
		}
		systems[k] = slotSystem{System: sys, raw: raw, every: every, look: look}
	}
	// The memory estimate, before any workload is drawn.
	seeds := s.SeedList()
	jobs, key := c.Jobs.Count, fmt.Sprintf("slotted.jobs.count %d", c.Jobs.Count)
	if fileJobs != nil {
		jobs, key = len(fileJobs.Jobs), fmt.Sprintf("slotted.jobs.file %s (%d jobs)", c.Jobs.File, len(fileJobs.Jobs))
	}
	planners := 0
	for _, sys := range systems {
		if sys.Policy == pcedla.Name {
			planners += len(seeds)
		}
	}
	if err := EstimateSlotted(SlottedLoad{Jobs: jobs, Nodes: total, Slots: c.Slots, Periods: c.Lookahead, Planners: planners,
		Runs: len(systems) * len(seeds), Seeds: len(seeds)}, key+", slotted.lookahead "+strconv.Itoa(c.Lookahead), env.Workers).Check(env.MaxMemory); err != nil {
		return fail(err)
	}
	// One workload per seed, the same for every system.
	base := setup.Derived.Models(setup.Fitted, 0, nil, setup.Restart, setup.TurnOn)
	works := make([]*Workload, len(seeds))
	for k, seed := range seeds {
		n := c.Jobs.Count
		if fileJobs != nil {
			n = 0
		}
		w, err := Generate(setup.Derived, base, n, c.Inference.ReqPerMin, c.Slots, c.Lookahead, seed)
		if err != nil {
			return fail(err)
		}
		if fileJobs != nil {
			w.Jobs = fileJobs.Jobs
		}
		if fileLoad != nil {
			w.Load = fileLoad
		}
		works[k] = w
	}
	// The load's label in runs.csv: as given, or a file's mean over the
	// run's slots (requests/min, all models).
	reqPerMin := c.Inference.ReqPerMin
	if fileLoad != nil {
		var sum float64
		for _, row := range fileLoad[:c.Slots] {
			for _, v := range row {
				sum += v * 60
			}
		}
		reqPerMin = sum / float64(c.Slots)
	}
	env.Notef("%s: %s nodes (%s), %d slots of 15 min, %d systems x %d seeds", s.Name, nodeList(counts), strings.Join(GPUs, ", "), c.Slots, len(systems), len(seeds))
	for _, sys := range systems {
		if n, ok := scenario.IntArg(sys.Args["threads"]); ok && n > solver.MaxThreads() {
			env.Notef("%s: threads %d clamped to %d, this machine's CPUs (solves with several threads take turns on them)", sys.Name, n, solver.MaxThreads())
		}
	}
	runs := make([]*Metrics, len(seeds)*len(systems))
	errs := experiment.Parallel(len(runs), env.Workers, func(i int) error {
		k, sys := i/len(systems), systems[i%len(systems)]
		w := works[k]
		m := setup.Derived.Models(setup.Fitted, 0, w.Bound, setup.Restart, setup.TurnOn)
		for t := range m.Types {
			m.Types[t].Count = counts[t]
		}
		p, err := env.Registries.Slotted.New(sys.Policy, sys.raw, deps)
		if err != nil {
			return err
		}
		var progress func(done, total int)
		if env.RunProgress != nil && total*c.Slots >= progressNodeSlots {
			what := fmt.Sprintf("%s seed %d", sys.Name, seeds[k])
			progress = func(done, slots int) { env.RunProgress(what, done, slots, "slots") }
		}
		r, err := setup.RunPlanner(Case{System: sys.Name, Jobs: len(w.Jobs), ReqPerMin: reqPerMin, Seed: seeds[k], Reading: c.PlanReading}, m, w, p, sys.every, sys.look, time.Now(), progress)
		runs[i] = r
		return err
	}, env.Progress, func(i int) string {
		return fmt.Sprintf("%s seed %d", systems[i%len(systems)].Name, seeds[i/len(systems)])
	})
	for _, err := range errs {
		if err != nil {
			return fail(err)
		}
	}
	names := make([]string, len(systems))
	for k, sys := range systems {
		names[k] = sys.Name
	}
	noteSolveTimes(env, names, runs)
	return scenarioResults(env.Version, s, setup, counts, systems, seeds, works, fileJobs, runs,
		[]string{"Cluster: " + nodeList(counts) + " single-GPU nodes of " + strings.Join(GPUs, ", ") + "; " + tableSrc, "Prices and carbon: " + priceSrc, "Training jobs: " + jobSrc, "Inference: " + loadSrc})
}

// nodeList writes node counts as "4/4/4/4".
func nodeList(counts []int) string {
	var s []string
	for _, n := range counts {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, "/")
}

// scenarioSystem is a system as summary.json records it.
type scenarioSystem struct {
	Name   string         `json:"name"`
	Policy string         `json:"policy"`
	Args   map[string]any `json:"args,omitempty"`
	Every  int            `json:"replan_every_slots"`
}

// nodeCount is one node type of the cluster.
type nodeCount struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
}

// scenarioResults renders a slotted scenario's runs.
func scenarioResults(version string, s *scenario.Scenario, setup *Setup, counts []int, systems []slotSystem, seeds []uint64, works []*Workload, fileJobs *ScenarioJobs, runs []*Metrics, sources []string) ([]*experiment.Results, error) {
	c := s.Slotted
	var nodes []nodeCount
	for t, gpu := range GPUs {
		nodes = append(nodes, nodeCount{gpu, counts[t]})
	}
	var sys []scenarioSystem
	var names []string
	for _, x := range systems {
		sys = append(sys, scenarioSystem{x.Name, x.Policy, x.Args, x.every})
		names = append(names, x.Name)
	}
	bounds := map[string][]float64{}
	for k, seed := range seeds {
		bounds[strconv.FormatUint(seed, 10)] = works[k].Bound
	}
	standIns := modelStandIns(setup.Derived)
	res, err := experiment.NewResults(s.Name, version, struct {
		Version  string             `json:"version"`
		Scenario *scenario.Scenario `json:"scenario"`
		Sources  []string           `json:"inputs"`
		StandIns []string           `json:"stand_ins"`
		Settings map[string]any     `json:"settings"`
		Fit      *Fitted            `json:"power_fits"`
		Systems  []scenarioSystem   `json:"systems"`
		Runs     []*Metrics         `json:"runs"`
	}{version, s, sources, standIns, map[string]any{"nodes": nodes, "slot_seconds": policy.SlotSeconds, "slots": c.Slots, "lookahead_slots": c.Lookahead,
		"replan_every_slots": c.ReplanEvery, "plan_reading": c.PlanReading, "restart_seconds": setup.RestartSeconds, "restart_usd": setup.Restart, "turn_on_usd": setup.TurnOn,
		"latency_bounds_s_by_seed": bounds, "models": DNNs}, setup.Fitted, sys, runs})
	if err != nil {
		return nil, err
	}
	jobs := [][]string{{"seed", "system", "id", "model", "arrival_slot", "deadline_slot", "epochs", "priority", "done", "rejected", "finish_slot", "lateness_slots", "starts", "slots_run", "epochs_left"}}
	head := []string{"seed", "system", "slot", "price_usd_mwh", "power_w", "nodes_on"}
	for _, gpu := range GPUs {
		head = append(head, "on_"+gpu)
	}
	timeline := [][]string{append(head, "training_nodes", "serving_nodes", "progress")}
	for i, r := range runs {
		k := i / len(systems)
		seed := strconv.FormatUint(seeds[k], 10)
		w := works[k]
		for n, jr := range r.result.Jobs {
			j := w.Jobs[n]
			id := strconv.Itoa(jr.ID)
			if fileJobs != nil {
				id = fileJobs.IDs[n]
			}
			jobs = append(jobs, []string{seed, r.System, id, DNNs[j.Model], strconv.Itoa(j.Arrival), strconv.Itoa(j.Deadline), report.F(j.Epochs), strconv.Itoa(j.Priority),
				strconv.FormatBool(jr.Done), strconv.FormatBool(jr.Rejected), strconv.Itoa(jr.Finish), strconv.Itoa(jr.Lateness), strconv.Itoa(jr.Starts), strconv.Itoa(jr.Slots), report.F(jr.Left)})
		}
		for _, smp := range r.result.Samples {
			on := 0
			for _, n := range smp.On {
				on += n
			}
			row := []string{seed, r.System, strconv.Itoa(smp.Slot), report.F(smp.Price), report.F(float64(smp.Power)), strconv.Itoa(on)}
			for _, n := range smp.On {
				row = append(row, strconv.Itoa(n))
			}
			timeline = append(timeline, append(row, strconv.Itoa(smp.Training), strconv.Itoa(smp.Serving), report.F(smp.Progress)))
		}
	}
	first := map[string]*Metrics{}
	for _, r := range runs[:len(systems)] {
		first[r.System] = r
	}
	figs, err := Plots(setup.Price[:c.Slots], names, first, fmt.Sprintf("Each system's planned cluster power, seed %d", seeds[0]))
	if err != nil {
		return nil, err
	}
	over := fmt.Sprintf("seed %d", seeds[0])
	if len(seeds) > 1 {
		over = fmt.Sprintf("mean over %d seeds", len(seeds))
	}
	tab := report.Table{Title: fmt.Sprintf("%s: %s nodes, %d slots of 15 min, %s", s.Name, nodeList(counts), c.Slots, over),
		Head: []string{"system", "jobs", "deadline viol.", "latency viol.", "rejected", "energy kWh", "cost USD", "CO2 kg", "train jobs/USD", "USD 0-20 / 20-30 / 30+", "plans", "MIP plans"}}
	for _, x := range systems {
		var ms []*Metrics
		for _, r := range runs {
			if r.System == x.Name {
				ms = append(ms, r)
			}
		}
		f := func(g func(*Metrics) float64) float64 {
			var v float64
			for _, m := range ms {
				v += g(m) / float64(len(ms))
			}
			return v
		}
		tab.Rows = append(tab.Rows, []string{x.Name, fmt.Sprintf("%.1f", f(func(m *Metrics) float64 { return float64(m.Jobs) })),
			experiment.Pct(f(func(m *Metrics) float64 { return m.DeadlineViolation })), experiment.Pct(f(func(m *Metrics) float64 { return m.LatencyViolation })),
			fmt.Sprintf("%.1f", f(func(m *Metrics) float64 { return float64(m.Rejected) })),
			fmt.Sprintf("%.2f", f(func(m *Metrics) float64 { return m.EnergyKWh })), fmt.Sprintf("%.3f", f(func(m *Metrics) float64 { return m.CostUSD })),
			fmt.Sprintf("%.2f", f(func(m *Metrics) float64 { return m.CO2Kg })), fmt.Sprintf("%.2f", f(func(m *Metrics) float64 { return m.CostPerfTrain })),
			fmt.Sprintf("%.2f / %.2f / %.2f", f(func(m *Metrics) float64 { return m.PriceBands[0] }), f(func(m *Metrics) float64 { return m.PriceBands[1] }), f(func(m *Metrics) float64 { return m.PriceBands[2] })),
			fmt.Sprintf("%.1f", f(func(m *Metrics) float64 { return float64(m.Plans) })), fmt.Sprintf("%.1f", f(func(m *Metrics) float64 { return float64(m.MIPPlans) }))})
	}
	res.AddNotes(s.Description)
	res.AddNotes(sources...)
	res.AddStandIns(standIns)
	res.AddModelBand(ModelBandNote)
	res.Tables, res.Figures = []report.Table{tab}, figs
	if st := SolverTable(runs); len(st.Rows) > 0 {
		res.Tables = append(res.Tables, st)
	}
	res.Files["runs.csv"], res.Files["jobs.csv"], res.Files["timeline.csv"], res.Files["plans.csv"] = RunsCSV(runs), report.CSV(jobs), report.CSV(timeline), PlansCSV(runs)
	res.Listing = "summary.json, runs.csv, jobs.csv, timeline.csv, plans.csv, *.svg, report.html"
	return []*experiment.Results{res}, nil
}
