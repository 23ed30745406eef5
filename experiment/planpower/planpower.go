// Package planpower is the power planner (`wattsched plan power`, issue
// 43): from a replay scenario with a power topology, each domain's hourly
// power with the current nodes, and how many nodes of a given model each
// domain (or the cluster as a whole) can take so that the probability
// that a domain's hourly power exceeds its limit stays within a risk the
// operator sets. The answer is searched by replaying the enlarged cluster,
// never extrapolated; uncertainty from the seeds (tie orders) and from the
// catalog's power figures (draws within the measured error band) is
// reported as intervals. docs/power-domains.md, "The planner".
package planpower

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// Options are the planner's settings (the command's flags).
type Options struct {
	// Policy names the scenario's policy that places the pods ("": its
	// first).
	Policy string
	// Seeds is the number of replays per point, with seeds FirstSeed,
	// FirstSeed+1, ... (a replay's seed draws its tie order).
	Seeds     int
	FirstSeed uint64
	// Draws is the number of draws of the catalog's power error per seed;
	// draw 0 is the catalog's own figures (every factor 1).
	Draws int
	// Add is the node added (AddSpec).
	Add string
	// Overall searches the number of nodes added to the cluster as a
	// whole (spread over the innermost domains) instead of per domain.
	Overall bool
	// Risk is the most probability, over the hours of the replay, the
	// seeds and the power-error draws, that a domain's hourly power (its
	// highest power in the hour) exceeds its limit. An answer holds the
	// upper end of the probability's 95% confidence interval over the
	// replays to it, not only the estimate.
	Risk float64
	// MaxAdd bounds the search: nodes added per innermost domain.
	MaxAdd int
	// Cap also replays each point with the domains' limits enforced and
	// reports what capping costs in completion time.
	Cap bool
}

// Validate names the first bad setting.
func (o *Options) Validate() error {
	switch {
	case o.Seeds < 1 || o.Seeds > 100:
		return fmt.Errorf("--seeds %d, want 1..100", o.Seeds)
	case o.Draws < 1 || o.Draws > 100:
		return fmt.Errorf("--draws %d, want 1..100 (1: the catalog's figures only)", o.Draws)
	case !(o.Risk > 0 && o.Risk < 1):
		return fmt.Errorf("--risk %v, want a probability in (0, 1), e.g. 0.01", o.Risk)
	case o.MaxAdd < 1 || o.MaxAdd > 1000:
		return fmt.Errorf("--max-add %d, want 1..1000", o.MaxAdd)
	case strings.TrimSpace(o.Add) == "":
		return fmt.Errorf("--add: give the GPU model of the nodes to add (MODEL or MODEL:GPUS, e.g. A100:8)")
	}
	return nil
}

// AddSpec reads --add (MODEL or MODEL:GPUS) into the shape of the node
// added: the GPU model as the catalog names it, and the GPU count, vCPU and
// memory of the commonest shape among the cluster's nodes of that model
// (ties: the larger shape), or among all its GPU nodes when it has none of
// that model. GPUS overrides the count.
func AddSpec(spec string, cat *hw.Catalog, nodes []cluster.NodeSpec) (cluster.NodeSpec, error) {
	model, count, _ := strings.Cut(strings.TrimSpace(spec), ":")
	g, err := cat.GPU(model)
	if err != nil {
		return cluster.NodeSpec{}, fmt.Errorf("--add %s: %w", spec, err)
	}
	gpus := 0
	if count != "" {
		if gpus, err = strconv.Atoi(count); err != nil || gpus < 1 || gpus > 64 {
			return cluster.NodeSpec{}, fmt.Errorf("--add %s: GPUs %q, want 1..64", spec, count)
		}
	}
	type shape struct {
		gpus     int
		cpu, mem int64
		cpuModel string
	}
	pick := func(keep func(cluster.NodeSpec) bool) (shape, bool) {
		n := map[shape]int{}
		for _, s := range nodes {
			if keep(s) {
				n[shape{s.GPUs, s.CPUMilli, s.MemMiB, s.CPUModel}]++
			}
		}
		var all []shape
		for s := range n {
			all = append(all, s)
		}
		slices.SortFunc(all, func(a, b shape) int {
			return cmp.Or(-cmp.Compare(n[a], n[b]), -cmp.Compare(a.gpus, b.gpus), -cmp.Compare(a.cpu, b.cpu), -cmp.Compare(a.mem, b.mem), strings.Compare(a.cpuModel, b.cpuModel))
		})
		if len(all) == 0 {
			return shape{}, false
		}
		return all[0], true
	}
	sh, ok := pick(func(s cluster.NodeSpec) bool {
		if s.GPUs == 0 {
			return false
		}
		m, err := cat.GPU(s.GPUModel)
		return err == nil && m.Name == g.Name
	})
	if !ok {
		if sh, ok = pick(func(s cluster.NodeSpec) bool { return s.GPUs > 0 }); !ok {
			return cluster.NodeSpec{}, fmt.Errorf("--add %s: the cluster has no GPU node whose vCPU and memory a new node could copy", spec)
		}
	}
	if gpus > 0 {
		sh.gpus = gpus
	}
	return cluster.NodeSpec{GPUs: sh.gpus, GPUModel: g.Name, CPUMilli: sh.cpu, MemMiB: sh.mem, CPUModel: sh.cpuModel}, nil
}

// addedPrefix starts the names of the nodes the planner adds.
const addedPrefix = "plan-"

// Planner holds what every point of a search shares.
type Planner struct {
	env  *experiment.Env
	s    *scenario.Scenario
	in   *tasks.Inputs
	opt  Options
	pol  *scenario.PolicySpec
	add  cluster.NodeSpec
	topo *power.Topology
	// leaves are the innermost domains (those nodes name), by domain index.
	leaves []int
	limits []hw.Watts
	// p95 is each GPU model's p95 relative error (the catalog's band).
	p95 map[string]float64
}

// New checks the scenario and options before any run: a replay scenario
// with a topology, the policy, the node added, names free for the added
// nodes. in must have passed tasks.CheckReplay (in.Domains bound).
func New(env *experiment.Env, s *scenario.Scenario, in *tasks.Inputs, opt Options) (*Planner, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if s.Mode != scenario.Replay {
		return nil, fmt.Errorf("scenario %s: mode %s: plan power replays a trace (mode: replay)", s.Name, s.Mode)
	}
	if s.Topology == nil || in.Domains == nil {
		return nil, fmt.Errorf("scenario %s: no topology: plan power needs the power domains (docs/power-domains.md)", s.Name)
	}
	p := &Planner{env: env, s: s, in: in, opt: opt, topo: s.Topology.Topology()}
	for i := range s.Policies {
		if opt.Policy == "" || s.Policies[i].Name == opt.Policy {
			p.pol = &s.Policies[i]
			break
		}
	}
	if p.pol == nil {
		var names []string
		for _, ps := range s.Policies {
			names = append(names, ps.Name)
		}
		return nil, fmt.Errorf("--policy %s: scenario %s has no such policy (it has %s)", opt.Policy, s.Name, strings.Join(names, ", "))
	}
	var err error
	if p.add, err = AddSpec(opt.Add, env.Catalog, in.Nodes); err != nil {
		return nil, err
	}
	for _, n := range in.Nodes {
		if strings.HasPrefix(n.Name, addedPrefix) {
			return nil, fmt.Errorf("node %s: the planner names the nodes it adds %s..., and the cluster already has one", n.Name, addedPrefix)
		}
	}
	leaf := map[string]bool{}
	for _, d := range p.topo.Member {
		leaf[d] = true
	}
	for i, d := range p.topo.Domains {
		p.limits = append(p.limits, d.Limit)
		if leaf[d.Name] {
			p.leaves = append(p.leaves, i)
		}
	}
	p.p95 = map[string]float64{}
	for _, n := range append(slices.Clone(in.Nodes), p.add) {
		if n.GPUs == 0 {
			continue
		}
		g, err := env.Catalog.GPU(n.GPUModel)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		p.p95[g.Name] = tasks.ModelErrorFor(env.Catalog, s.PowerModel, g.Name).P95Rel
	}
	return p, nil
}

// factors is draw d's power-error factor of each GPU model for seed: 1
// for draw 0 (the catalog's figures), else uniform in [1 - p95, 1 + p95]
// (at least 0), drawn from the seed, the draw and a hash of the model's
// name, so that no factor depends on the order models are met in.
func (p *Planner) factors(seed uint64, draw int) map[string]float64 {
	f := make(map[string]float64, len(p.p95))
	for m, e := range p.p95 {
		if draw == 0 {
			f[m] = 1
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(m))
		r := rand.New(rand.NewPCG(seed^h.Sum64(), uint64(draw)))
		f[m] = max(0, 1+e*(2*r.Float64()-1))
	}
	return f
}

// scaled charges each busy GPU's power (a GPU with any allocation: what
// the error figures are measured on) times its model's factor; idle GPUs
// and CPUs as the model says.
type scaled struct {
	power.Model
	f map[string]float64
}

func (m scaled) NodePower(n *cluster.Node) power.Breakdown {
	b := m.Model.NodePower(n)
	if n.GPU == nil {
		return b
	}
	idle := n.IdleGPUs()
	if idle == len(n.GPUFree) || n.State == cluster.Off {
		return b
	}
	busy := b.GPU - hw.Watts(idle)*n.GPU.IdleW
	b.GPU += hw.Watts(m.f[n.GPU.Name]-1) * busy
	return b
}

// enlarged is the inputs and topology with added[d] nodes joining each
// innermost domain d (by domain index), named plan-<domain>-<i>, the
// nodes in name order as LoadInputs sorts them.
func (p *Planner) enlarged(added []int) (*tasks.Inputs, *power.Topology) {
	in := *p.in
	in.Nodes = slices.Clone(p.in.Nodes)
	t := &power.Topology{Domains: slices.Clone(p.topo.Domains), Member: make(map[string]string, len(p.topo.Member)+len(added))}
	for n, d := range p.topo.Member {
		t.Member[n] = d
	}
	for d, k := range added {
		for j := range k {
			n := p.add
			n.Name = fmt.Sprintf("%s%s-%03d", addedPrefix, t.Domains[d].Name, j)
			in.Nodes = append(in.Nodes, n)
			t.Member[n.Name] = t.Domains[d].Name
		}
	}
	cluster.SortSpecs(in.Nodes)
	return &in, t
}

// bind binds t to in's nodes at their idle power; loose lifts every limit
// out of reach (the uncapped replay records, never enforces).
func (p *Planner) bind(in *tasks.Inputs, t *power.Topology, loose bool) (*power.Domains, error) {
	c, err := cluster.New(p.env.Catalog, in.Nodes)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(c.Nodes))
	idle := make([]hw.Watts, len(c.Nodes))
	for i, n := range c.Nodes {
		names[i], idle[i] = n.Name, power.PWR{}.NodePower(n).Total()
	}
	if loose {
		t = &power.Topology{Domains: slices.Clone(t.Domains), Member: t.Member}
		for i := range t.Domains {
			t.Domains[i].Limit = 1e12
		}
	}
	d, _, err := t.Bind(names, idle)
	return d, err
}

// Point is one evaluated enlargement: every replay of it reduced to each
// domain's hourly power.
type Point struct {
	// Added is the nodes added to each innermost domain, by domain index
	// (0 elsewhere); Total their sum.
	Added []int
	Total int
	// PerLeaf is the search's step in per-domain mode (every innermost
	// domain takes PerLeaf nodes); -1 in overall mode.
	PerLeaf int
	// Hours is the number of hours behind each domain's figures: the
	// uncapped replays' hours summed (one replay per seed and draw).
	Hours int
	// Domains are the figures per domain, in declared order.
	Domains []DomainPoint
	// Capped is the replay with the limits enforced (nil without --cap).
	Capped *Capped
	// JCTS is the mean completion time of the uncapped replays at the
	// catalog's figures (seconds, over the pods that ended).
	JCTS float64
	// member is each node's innermost domain (not written out).
	member map[string]string
}

// DomainPoint is one domain's hourly power at one point.
type DomainPoint struct {
	// Exceed is the share of hours (x seeds x draws) whose highest power
	// exceeds the limit; Catalog the same over draw 0 only (the catalog's
	// figures); Seeds the share of each seed at the catalog's figures,
	// Draws of each draw over all seeds.
	Exceed, Catalog float64
	Seeds, Draws    []float64
	// Upper is the upper end of the 95% confidence interval (Student's t)
	// of Exceed as the mean of the replays' shares (seeds x draws), and
	// CatalogUpper of Catalog over the seeds: the figures the answers
	// hold to the risk (the share itself with one replay).
	Upper, CatalogUpper float64
	// Quantiles of the hourly highest power at the catalog's figures over
	// hours and seeds, and the p99's range over the draws.
	P50, P95, P99, Max   hw.Watts
	P99DrawLo, P99DrawHi hw.Watts
}

// Capped is what enforcing the domains' limits did at a point, at the
// catalog's figures, over the seeds.
type Capped struct {
	// LeftOut is the number of the point's added nodes that their domains
	// could not hold even idle, left out of the capped replay.
	LeftOut int
	// JCTS is the mean completion time over the pods that ended; Unstarted
	// the pods that never started (mean over the seeds).
	JCTS      float64
	Unstarted float64
	WaitS     float64
}

// replayOut is one replay reduced: per domain, its hours' highest power.
type replayOut struct {
	max   [][]float64
	jct   float64
	wait  float64
	unst  int
	ended int
}

func reduce(res *sim.Result) replayOut {
	o := replayOut{max: make([][]float64, len(res.DomainHours))}
	for d, hs := range res.DomainHours {
		o.max[d] = make([]float64, len(hs))
		for h, x := range hs {
			o.max[d][h] = float64(x.Max)
		}
	}
	var jct, wait float64
	started := 0
	for _, t := range res.Tasks {
		if t.Start < 0 {
			o.unst++
			continue
		}
		started++
		wait += float64(t.Start-t.Submit) / 1000
		if t.End >= 0 {
			o.ended++
			jct += float64(t.End-t.Submit) / 1000
		}
	}
	if o.ended > 0 {
		o.jct = jct / float64(o.ended)
	}
	if started > 0 {
		o.wait = wait / float64(started)
	}
	return o
}

// Evaluate replays the cluster with added[d] nodes joining each innermost
// domain d: Seeds x Draws uncapped replays (limits recorded, not
// enforced) and, with Cap, Seeds capped ones at the catalog's figures.
func (p *Planner) Evaluate(added []int, what string) (*Point, error) {
	in, t := p.enlarged(added)
	loose, err := p.bind(in, t, true)
	if err != nil {
		return nil, err
	}
	in.Domains = loose
	nrun := p.opt.Seeds * p.opt.Draws
	jobs := make([]runKey, 0, nrun)
	for s := range p.opt.Seeds {
		for d := range p.opt.Draws {
			jobs = append(jobs, runKey{p.opt.FirstSeed + uint64(s), d})
		}
	}
	outs := make([]replayOut, nrun)
	errs := experiment.Parallel(nrun, p.env.Workers, func(i int) error {
		f := p.factors(jobs[i].seed, jobs[i].draw)
		wrap := func(m power.Model) power.Model { return scaled{Model: m, f: f} }
		if jobs[i].draw == 0 {
			wrap = nil
		}
		res, err := tasks.ReplayForPlan(p.env, p.s, in, tasks.PlanReplay{Policy: p.pol, Seed: jobs[i].seed, Domains: loose, Power: wrap})
		if err != nil {
			return fmt.Errorf("%s, seed %d, draw %d: %w", what, jobs[i].seed, jobs[i].draw, err)
		}
		outs[i] = reduce(res)
		return nil
	}, p.env.Progress, func(i int) string { return fmt.Sprintf("%s, seed %d, draw %d", what, jobs[i].seed, jobs[i].draw) })
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	pt := &Point{Added: added, PerLeaf: -1, member: t.Member}
	for _, k := range added {
		pt.Total += k
	}
	for _, o := range outs {
		if len(o.max) > 0 {
			pt.Hours += len(o.max[0])
		}
	}
	var jct float64
	for s := range p.opt.Seeds {
		jct += outs[s*p.opt.Draws].jct / float64(p.opt.Seeds)
	}
	pt.JCTS = jct
	for d := range p.limits {
		pt.Domains = append(pt.Domains, p.domainPoint(d, jobs, outs))
	}
	if p.opt.Cap {
		if pt.Capped, err = p.capped(added, what); err != nil {
			return nil, err
		}
	}
	return pt, nil
}

// runKey is one uncapped replay of a point: its seed and power-error draw.
type runKey struct {
	seed uint64
	draw int
}

// domainPoint reduces domain d's hours over a point's replays.
func (p *Planner) domainPoint(d int, jobs []runKey, outs []replayOut) DomainPoint {
	lim := float64(p.limits[d])
	over := func(hs []float64) (n int) {
		for _, w := range hs {
			if w > lim {
				n++
			}
		}
		return n
	}
	var dp DomainPoint
	allOver, allN := 0, 0
	catOver, catN := 0, 0
	drawOver := make([]int, p.opt.Draws)
	drawN := make([]int, p.opt.Draws)
	var catalog []float64
	p99 := make([][]float64, p.opt.Draws)
	var perRun []float64
	for i, o := range outs {
		hs := o.max[d]
		n := over(hs)
		perRun = append(perRun, frac(n, len(hs)))
		allOver, allN = allOver+n, allN+len(hs)
		dr := jobs[i].draw
		drawOver[dr] += n
		drawN[dr] += len(hs)
		p99[dr] = append(p99[dr], hs...)
		if dr == 0 {
			catOver, catN = catOver+n, catN+len(hs)
			catalog = append(catalog, hs...)
			dp.Seeds = append(dp.Seeds, frac(n, len(hs)))
		}
	}
	dp.Exceed, dp.Catalog = frac(allOver, allN), frac(catOver, catN)
	dp.Upper, dp.CatalogUpper = upper(perRun, dp.Exceed), upper(dp.Seeds, dp.Catalog)
	dp.P99DrawLo = hw.Watts(math.Inf(1))
	for dr := range p.opt.Draws {
		dp.Draws = append(dp.Draws, frac(drawOver[dr], drawN[dr]))
		slices.Sort(p99[dr])
		q := hw.Watts(quantile(p99[dr], 0.99))
		dp.P99DrawLo, dp.P99DrawHi = min(dp.P99DrawLo, q), max(dp.P99DrawHi, q)
	}
	slices.Sort(catalog)
	dp.P50, dp.P95 = hw.Watts(quantile(catalog, 0.50)), hw.Watts(quantile(catalog, 0.95))
	dp.P99, dp.Max = hw.Watts(quantile(catalog, 0.99)), hw.Watts(quantile(catalog, 1))
	return dp
}

// capped replays the cluster with the domains' limits enforced, at the
// catalog's figures, one replay per seed. A domain takes only as many of
// its added nodes as its limit, and every limit above it, can hold idle
// (innermost domains by name); the rest are left out and counted.
func (p *Planner) capped(added []int, what string) (*Capped, error) {
	node, err := cluster.New(p.env.Catalog, []cluster.NodeSpec{{Name: "x", CPUMilli: p.add.CPUMilli, MemMiB: p.add.MemMiB, GPUs: p.add.GPUs, GPUModel: p.add.GPUModel, CPUModel: p.add.CPUModel}})
	if err != nil {
		return nil, err
	}
	nodeIdle := power.PWR{}.NodePower(node.Nodes[0]).Total()
	room := make([]hw.Watts, len(p.limits))
	for d := range room {
		room[d] = p.limits[d] - p.in.Domains.IdleW[d]
	}
	parent := p.parents()
	leaves := slices.Clone(p.leaves)
	slices.SortFunc(leaves, func(a, b int) int { return strings.Compare(p.topo.Domains[a].Name, p.topo.Domains[b].Name) })
	kept := make([]int, len(added))
	c := &Capped{}
	for _, l := range leaves {
		j := added[l]
		for a := l; a >= 0; a = parent[a] {
			j = min(j, int(math.Floor(float64(room[a]/nodeIdle))))
		}
		j = max(j, 0)
		for a := l; a >= 0; a = parent[a] {
			room[a] -= hw.Watts(j) * nodeIdle
		}
		kept[l] = j
		c.LeftOut += added[l] - j
	}
	in, t := p.enlarged(kept)
	d, err := p.bind(in, t, false)
	if err != nil {
		return nil, fmt.Errorf("%s capped: %w", what, err)
	}
	in.Domains = d
	outs := make([]replayOut, p.opt.Seeds)
	errs := experiment.Parallel(p.opt.Seeds, p.env.Workers, func(i int) error {
		seed := p.opt.FirstSeed + uint64(i)
		res, err := tasks.ReplayForPlan(p.env, p.s, in, tasks.PlanReplay{Policy: p.pol, Seed: seed, Domains: d})
		if err != nil {
			return fmt.Errorf("%s capped, seed %d: %w", what, seed, err)
		}
		outs[i] = reduce(res)
		return nil
	}, p.env.Progress, func(i int) string { return fmt.Sprintf("%s capped, seed %d", what, p.opt.FirstSeed+uint64(i)) })
	if err := firstErr(errs); err != nil {
		return nil, err
	}
	n := float64(p.opt.Seeds)
	for _, o := range outs {
		c.JCTS += o.jct / n
		c.WaitS += o.wait / n
		c.Unstarted += float64(o.unst) / n
	}
	return c, nil
}

// upper is the upper end of the 95% interval of the mean of shares
// (pooled: the hours-weighted mean, which is reported), never below
// pooled; pooled itself for one share.
func upper(shares []float64, pooled float64) float64 {
	ci := experiment.CI95(shares)
	if math.IsNaN(float64(ci.Hi)) {
		return pooled
	}
	return max(pooled, pooled+float64(ci.Hi-ci.Mean))
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func frac(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// quantile is the nearest-rank q-quantile of sorted values (0 for none):
// the smallest value with at least a share q of the values at or below it.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// nodes is how many of the point's nodes have their innermost domain
// among names.
func (pt *Point) nodes(names map[string]bool) int {
	n := 0
	for _, d := range pt.member {
		if names[d] {
			n++
		}
	}
	return n
}
