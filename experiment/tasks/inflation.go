package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/trace/alibaba2023"
	"github.com/wattsched/wattsched/userfile"
)

// Inputs are the cluster and the task population of a scenario.
type Inputs struct {
	Nodes []cluster.NodeSpec
	Pods  []job.Task
	// Source says where the inputs come from, for the results.
	Source string
	// NeverStart is what the checks before a run found about pods that
	// can never start (nil: none; set by RunReplay, RunCompare and
	// RunInflation before their runs).
	NeverStart *NeverStart
	// JobSpeed says in one line how the pods' durations depend on the GPU
	// they land on (set by the checks before a replay or comparison;
	// speedCheck).
	JobSpeed string
	// Speed scales the pods' work by the GPU they start on (nil: no GPU
	// pod names a reference GPU; set with JobSpeed).
	Speed *perf.Speed
	// Domains is the scenario's power topology bound to the nodes, in
	// the order of Nodes (nil: none; set by the checks before a run).
	Domains *power.Domains
}

// LoadInputs reads the trace a scenario names: embedded node and pod
// lists, or CSV files (relative paths from the scenario file's directory).
func LoadInputs(s *scenario.Scenario) (*Inputs, error) {
	t := s.Trace
	in := &Inputs{}
	var err error
	switch t.Nodes {
	case scenario.NodesOpenBGPU:
		in.Nodes, err = alibaba2023.GPUNodes()
	case scenario.NodesOpenBAll:
		in.Nodes, err = alibaba2023.AllNodes()
	default:
		var f *userfile.File
		path := s.Path(t.Nodes)
		if f, err = userfile.Open(path, userfile.Table); err == nil {
			defer f.Close()
			in.Nodes, err = alibaba2023.ReadNodes(f, path)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("trace.nodes: %w", err)
	}
	if len(in.Nodes) == 0 {
		return nil, fmt.Errorf("trace.nodes: %s lists no nodes", t.Nodes)
	}
	if s.Compat != scenario.CompatFGDSim {
		// Results follow the nodes' names, never their rows' order; the
		// FGD simulator's compatibility mode keeps the file's order.
		cluster.SortSpecs(in.Nodes)
	}
	if err := s.ApplyMIG(in.Nodes); err != nil {
		return nil, err
	}
	gpus := 0
	for _, n := range in.Nodes {
		gpus += n.GPUs
	}
	if gpus == 0 && s.Mode == scenario.Inflation {
		return nil, fmt.Errorf("trace.nodes: %s has no GPUs: inflation fills a cluster's GPUs and needs some", t.Nodes)
	}
	if scenario.EmbeddedPods(t.Pods) {
		if in.Pods, err = alibaba2023.Pods(t.Pods); err != nil {
			return nil, fmt.Errorf("trace.pods: %w (a file path needs a directory or an extension, e.g. ./%s)", err, t.Pods)
		}
		in.Source = fmt.Sprintf("embedded openb_pod_list_%s and %s nodes: %s", t.Pods, t.Nodes, alibaba2023.Source)
	} else {
		path := s.Path(t.Pods)
		f, err := userfile.Open(path, userfile.Table)
		if err != nil {
			return nil, fmt.Errorf("trace.pods: %w", err)
		}
		defer f.Close()
		if in.Pods, err = alibaba2023.ReadPods(f, path); err != nil {
			return nil, fmt.Errorf("trace.pods: %w", err)
		}
		in.Source = fmt.Sprintf("pods from %s, nodes %s", t.Pods, t.Nodes)
	}
	if s.Mode == scenario.Replay {
		timed := false
		for _, p := range in.Pods {
			timed = timed || p.Submit != 0 || p.Work != 0
		}
		if !timed {
			return nil, fmt.Errorf("trace.pods: %s has no creation and deletion times (a 5-column pod list?): replay needs the 11-column form (docs/formats.md)", t.Pods)
		}
	}
	if ref := t.ReferenceGPU; ref != "" {
		for i := range in.Pods {
			if in.Pods[i].RefGPU == "" {
				in.Pods[i].RefGPU = ref
			}
		}
	}
	if s.Compat == scenario.CompatFGDSim {
		in.Source += "; nodes in the file's order (compat fgd-sim; otherwise in name order)"
	}
	if m := t.SharesAsMIG; m != "" {
		what, err := sharesAsMIG(in.Pods, m)
		if err != nil {
			return nil, fmt.Errorf("trace.shares_as_mig: %w", err)
		}
		in.Source += "; " + what
	}
	job.Classify(in.Pods)
	return in, nil
}

// GridPoint is the cluster state at one requested-GPU ratio (0.01 grid).
type GridPoint struct {
	Ratio        float64
	EOPCW        hw.Watts
	CPUW, GPUW   hw.Watts
	GRAR         float64 // allocated / arrived GPU milli (1 when nothing arrived)
	AllocShare   float64 // allocated / cluster GPU milli
	FragRatio    float64 // FGD fragmentation / idle GPU milli
	FragGPUMilli float64
	Failed       int
	// BusyGPUW is the power of the busy GPUs of each GPU model
	// (modelNames of the node list).
	BusyGPUW []hw.Watts
}

// Run is one policy and seed.
type Run struct {
	Policy    string
	Seed      uint64
	Tasks     int
	Failed    int
	Decisions int
	Grid      []GridPoint
	// FGDSimAlloc is the allocated-GPU percentage at each integer percent of
	// requested capacity 0..130, computed the way the FGD simulator's
	// analysis scripts compute it (NaN where they report nothing).
	FGDSimAlloc []float64
	CacheHits   int64
	CacheMisses int64
	// explain is the run's explain.csv rows (--explain; nil otherwise).
	explain *explainLog
}

// InflationResult holds all runs of an inflation scenario.
type InflationResult struct {
	Scenario      *scenario.Scenario
	Source        string
	TotalGPUMilli int64
	Nodes         int
	Runs          []*Run // policy-major, then seed
	// Account prices a year at each load level's power (nil: not priced).
	Account *elgrid.Account
	// NeverStart: pods of the list that can never start (Inputs.NeverStart),
	// and Pods, the size of the list.
	NeverStart *NeverStart
	Pods       int
	// ModelErrors is the power model's error figure of each GPU model
	// (modelNames of the node list; Grid's BusyGPUW).
	ModelErrors []ModelError
}

// RunsOf returns the runs of one policy.
func (r *InflationResult) RunsOf(policyName string) []*Run {
	var out []*Run
	for _, x := range r.Runs {
		if x.Policy == policyName {
			out = append(out, x)
		}
	}
	return out
}

// RunInflation runs every policy of s over every seed.
func RunInflation(env *experiment.Env, s *scenario.Scenario, in *Inputs) (*InflationResult, error) {
	if s.Mode != scenario.Inflation {
		return nil, fmt.Errorf("scenario %s: mode %q is not inflation", s.Name, s.Mode)
	}
	acct, err := s.Account()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	acct.Wrap = true // a year from any start: the series repeated past its end
	if err := checkTasks(env, s, in); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	probe, err := cluster.New(env.Catalog, in.Nodes)
	if err != nil {
		return nil, err
	}
	if err := EstimateInflation(s, in, env.Workers).Check(env.MaxMemory); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	res := &InflationResult{Scenario: s, Source: in.Source, NeverStart: in.NeverStart, Pods: len(in.Pods), TotalGPUMilli: probe.TotalGPUMilli, Nodes: len(probe.Nodes), Account: acct}
	errOf := runErrors(env.Catalog, s.PowerModel)
	for _, m := range modelNames(in.Nodes) {
		if m == NoGPUModel {
			res.ModelErrors = append(res.ModelErrors, ModelError{})
			continue
		}
		res.ModelErrors = append(res.ModelErrors, errOf(m))
	}
	type jobSpec struct{ p, k int }
	var jobs []jobSpec
	for p := range s.Policies {
		for k := 0; k < s.Seeds; k++ {
			jobs = append(jobs, jobSpec{p, k})
		}
	}
	var errs []error
	res.Runs, errs = experiment.ShardedRun(env.Shards, len(jobs), env.Workers, func(i int) (*Run, error) {
		j := jobs[i]
		return runOne(env, s, &s.Policies[j.p], s.FirstSeed+uint64(j.k), in)
	}, env.Progress, func(i int) string {
		j := jobs[i]
		return fmt.Sprintf("%s seed %d", s.Policies[j.p].Name, s.FirstSeed+uint64(j.k))
	})
	for i, err := range errs {
		if err != nil {
			j := jobs[i]
			return nil, fmt.Errorf("policy %s seed %d: %w", s.Policies[j.p].Name, s.FirstSeed+uint64(j.k), err)
		}
	}
	return res, nil
}

// BuildPlacer makes the Placer of one policy spec.
func BuildPlacer(r *policy.Registries, ps *scenario.PolicySpec, deps policy.Deps) (*policy.Placer, error) {
	var ws []policy.Weighted
	for i, sc := range ps.Scorers {
		args, err := sc.Ref().RawArgs()
		if err != nil {
			return nil, fmt.Errorf("policies %s scorers[%d].args: %w", ps.Name, i, err)
		}
		s, err := r.Scorers.New(sc.Policy, args, deps)
		if err != nil {
			return nil, fmt.Errorf("policy %s scorers[%d]: %w", ps.Name, i, err)
		}
		ws = append(ws, policy.Weighted{Name: sc.Policy, Scorer: s, Weight: sc.Weight})
	}
	p, err := policy.NewPlacer(nil, ws)
	if err != nil {
		return nil, err
	}
	p.SetDomainWeight(ps.DomainWeight)
	return p, nil
}

// setup builds a fresh cluster, the PWR power model and the policy's
// Placer, with the trace's pods as the policies' workload.
func setup(env *experiment.Env, ps *scenario.PolicySpec, in *Inputs) (*cluster.Cluster, power.Model, *policy.Placer, error) {
	c, err := cluster.New(env.Catalog, in.Nodes)
	if err != nil {
		return nil, nil, nil, err
	}
	pm := power.PWR{}
	placer, err := BuildPlacer(env.Registries, ps, policy.Deps{Catalog: env.Catalog, Power: pm, Workload: in.Pods})
	if err != nil {
		return nil, nil, nil, err
	}
	return c, pm, placer, nil
}

func runOne(env *experiment.Env, s *scenario.Scenario, ps *scenario.PolicySpec, seed uint64, in *Inputs) (*Run, error) {
	c, pm, placer, err := setup(env, ps, in)
	if err != nil {
		return nil, err
	}
	var seq []job.Task
	if s.Compat == scenario.CompatFGDSim {
		var rank []int
		seq, rank = FGDSimSequence(in.Pods, nodeNames(c), c.TotalGPUMilli, s.Target, int64(seed))
		placer.SetRank(rank)
	} else {
		seq, err = SampleSequence(in.Pods, c.TotalGPUMilli, s.Target, seed)
		if err != nil {
			return nil, err
		}
		// Ties between equally scored nodes go to the earlier node in a
		// random order of the nodes by name drawn from the run's seed (as
		// the FGD simulator's renamed node order does), not to the lowest
		// node ID, whose fixed order biased the comparison
		// (docs/reproduce-pwr.md).
		placer.SetRank(cluster.TieRank(c.Nodes, seed))
	}
	// Fragmentation is always measured with FGD's definition and default target workload.
	fw, err := fgd.NewWorkload(in.Pods, fgd.Args{}.Default())
	if err != nil {
		return nil, err
	}
	var idle power.Breakdown
	for _, n := range c.Nodes {
		p := pm.NodePower(n)
		idle.CPU += p.CPU
		idle.GPU += p.GPU
	}
	initFrag := 0.0
	for _, n := range c.Nodes {
		initFrag += fw.NodeFrag(n)
	}
	online := &policy.Online{Placer: placer}
	xl := newExplainLog(env, s, ps, seed, c)
	if xl != nil {
		online.Explain = xl.record
	}
	names := modelNames(in.Nodes)
	group := func(n *cluster.Node) int { return slices.Index(names, modelOf(in.Nodes[n.ID])) }
	// Domains are enforced; their time-weighted report is left out
	// (inflation's time is one arrival per millisecond, not time).
	e, err := sim.New(c, online, sim.Options{Mode: sim.Inflation, Power: pm, NodeMetric: fw.NodeFrag,
		PowerLimit: limit(s, c), Domains: in.Domains, Seed: seed, BusyGroup: group, BusyGroups: len(names)})
	if err != nil {
		return nil, err
	}
	out, err := e.Run(seq)
	if err != nil {
		return nil, err
	}
	initial := sim.Sample{CPUW: idle.CPU, GPUW: idle.GPU, Metric: initFrag, IdleGPUMilli: c.TotalGPUMilli}
	r := &Run{Policy: ps.Name, Seed: seed, Tasks: len(seq), Decisions: out.Decisions,
		Grid:        grid(out.Samples, initial, c.TotalGPUMilli, s.Target),
		FGDSimAlloc: FGDSimAllocCurve(out.Samples, c.TotalGPUMilli/job.MilliPerGPU)}
	if len(out.Samples) > 0 {
		r.Failed = out.Samples[len(out.Samples)-1].Failed
	}
	r.CacheHits, r.CacheMisses = placer.CacheStats()
	r.explain = xl
	return r, nil
}

// limit is the scenario's power limit on cluster c (a fraction of the
// summed TDP of its nodes, or watts).
func limit(s *scenario.Scenario, c *cluster.Cluster) power.Limit {
	var tdp hw.Watts
	for _, n := range c.Nodes {
		tdp += power.TDP(n)
	}
	return s.PowerLimit.Resolve(tdp)
}

func nodeNames(c *cluster.Cluster) []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Name
	}
	return out
}

// SampleSequence draws tasks with replacement from pods (math/rand/v2, PCG
// seeded with seed) until the requested GPU milli reaches target times the
// capacity. The last task drawn is the one that reaches it.
func SampleSequence(pods []job.Task, capacityMilli int64, target float64, seed uint64) ([]job.Task, error) {
	anyGPU := false
	for i := range pods {
		anyGPU = anyGPU || pods[i].GPUCount > 0
	}
	if !anyGPU {
		return nil, fmt.Errorf("inflation: the pod list requests no GPU, so requested capacity never grows")
	}
	r := rand.New(rand.NewPCG(seed, 0x7761747473636864))
	limit := target * float64(capacityMilli)
	var total int64
	var seq []job.Task
	for float64(total) < limit {
		t := pods[r.IntN(len(pods))]
		t.ID = job.ID(len(seq))
		total += t.TotalGPUMilli()
		seq = append(seq, t)
	}
	return seq, nil
}

// grid samples the state after the last arrival whose cumulative requested
// GPU is at most k% of capacity, for k = 0..100*target.
func grid(samples []sim.Sample, initial sim.Sample, capMilli int64, target float64) []GridPoint {
	kmax := int(math.Round(target * 100))
	out := make([]GridPoint, 0, kmax+1)
	i := -1
	for k := 0; k <= kmax; k++ {
		for i+1 < len(samples) && samples[i+1].ArrivedGPUMilli*100 <= int64(k)*capMilli {
			i++
		}
		s := initial
		if i >= 0 {
			s = samples[i]
		}
		g := GridPoint{Ratio: float64(k) / 100, CPUW: s.CPUW, GPUW: s.GPUW, EOPCW: s.CPUW + s.GPUW,
			GRAR: 1, AllocShare: float64(s.AllocGPUMilli) / float64(capMilli),
			FragGPUMilli: s.Metric, Failed: s.Failed, BusyGPUW: s.BusyGPUW}
		if s.ArrivedGPUMilli > 0 {
			g.GRAR = float64(s.AllocGPUMilli) / float64(s.ArrivedGPUMilli)
		}
		if s.IdleGPUMilli > 0 {
			g.FragRatio = s.Metric / float64(s.IdleGPUMilli)
		}
		out = append(out, g)
	}
	return out
}
