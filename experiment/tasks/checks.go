package tasks

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/sim"
)

// NeverStart counts the pods that the checks before a run found can never
// start, whatever the policy: no node can hold them even when the cluster
// is empty (NoNode), or they fit but would take even the idle cluster over
// the power limit (OverLimit; the Online scheduler rejects these when
// they reach the head of the queue). They are counted in tasks, never in
// started; the waits and completion times are over the tasks that
// started.
type NeverStart struct {
	Count     int `json:"count"`
	NoNode    int `json:"no_node"`
	OverLimit int `json:"over_power_limit"`
	// First names the first few such pods, in trace order.
	First []string `json:"first"`
	// Why says, for the first of them, what stops it.
	Why string `json:"why"`
}

// neverStartShown is how many pod names NeverStart keeps.
const neverStartShown = 5

// Line says in one line what NeverStart counts.
func (n *NeverStart) Line(pods int) string {
	names := strings.Join(n.First, ", ")
	if n.Count > len(n.First) {
		names += ", ..."
	}
	return fmt.Sprintf("%d of %d pods can never start (%d fit no node even on the empty cluster, %d exceed the power limit even on the idle cluster): %s (%s)",
		n.Count, pods, n.NoNode, n.OverLimit, names, n.Why)
}

// checkTasks makes the checks of a task-mode run (replay, compare,
// inflation) that need no run: a power limit below what the cluster draws
// idle, the pods that can never start (an error with env.Strict, else a
// warning through env.Note, kept in in.NeverStart for the results), and
// in replay that the price and carbon series and the measured recording
// cover the run's time.
func checkTasks(env *experiment.Env, s *scenario.Scenario, in *Inputs) error {
	c, err := cluster.New(env.Catalog, in.Nodes)
	if err != nil {
		return err
	}
	pm := power.PWR{}
	if err := sim.CheckGangs(in.Pods, c); err != nil {
		return fmt.Errorf("%s: %w", s.Trace.Pods, err)
	}
	lim := limit(s, c)
	if err := checkLimit(s, c, pm, lim); err != nil {
		return err
	}
	if err := bindTopology(env, s, c, pm, in); err != nil {
		return err
	}
	ns, startable := neverStart(s, c, pm, lim, in.Domains, in.Pods)
	in.NeverStart = ns
	if ns != nil {
		if env.Strict {
			return fmt.Errorf("--strict: %s", ns.Line(len(in.Pods)))
		}
		env.Notef("warning: %s", ns.Line(len(in.Pods)))
	}
	if s.Mode != scenario.Replay {
		return nil
	}
	least, most, err := speedCheck(s, c, env.Catalog, in)
	if err != nil {
		return err
	}
	end, pod := latestEnd(in.Pods, startable, least)
	acct, err := s.Account()
	if err != nil {
		return err
	}
	if err := checkSeries(acct, end, pod); err != nil {
		return err
	}
	// Where a pod lands decides whether it outlasts the series: say so
	// before the run when its slowest GPU would take it past the end.
	if end, pod := latestEnd(in.Pods, startable, most); checkSeries(acct, end, pod) != nil {
		h, ser := seriesHorizon(acct)
		env.Notef("warning: pod %s would end at %.1f h if it ran on its slowest GPU (job speed), past the end of %s at %.0f h: a run that places it there fails", pod, end.Seconds()/3600, ser.Name, h.Seconds()/3600)
	}
	return checkRecording(s)
}

// checkLimit refuses a power limit below the least the cluster can draw:
// its idle power with every node on, or with power_down every node at its
// off power. No pod could ever start under it.
func checkLimit(s *scenario.Scenario, c *cluster.Cluster, pm power.Model, lim power.Limit) error {
	if lim <= 0 {
		return nil
	}
	var least hw.Watts
	what := "idle power"
	if s.PowerDown != nil {
		least = hw.Watts(s.PowerDown.OffW) * hw.Watts(len(c.Nodes))
		what = fmt.Sprintf("power with every node off (%d x power_down.off_w %g W)", len(c.Nodes), s.PowerDown.OffW)
	} else {
		for _, n := range c.Nodes {
			least += pm.NodePower(n).Total()
		}
	}
	if !lim.Allows(least) {
		return fmt.Errorf("power_limit: %.0f W is below the cluster's %s, %.0f W: no pod could ever start", float64(lim), what, float64(least))
	}
	return nil
}

// demandKey identifies a demand, so that pods asking for the same are
// checked once.
func demandKey(d *job.Demand) string {
	return fmt.Sprintf("%d/%d/%d/%d/%s", d.CPUMilli, d.MemMiB, d.GPUCount, d.GPUMilli, strings.Join(d.GPUSpec, "|"))
}

// neverStart finds the pods that can never start: those that fit on no
// node of the empty cluster (cluster.FitsWhenOn, the check every task-mode
// Placer makes; their placers have no other filter), and, under a power
// limit without power_down, those the power gate would never admit even
// on the idle cluster, or one of its power domains (PowerGate.NeverFits,
// the rule Online rejects them by). startable[i] says whether pod i may start; ns is nil when all may.
func neverStart(s *scenario.Scenario, c *cluster.Cluster, pm power.Model, lim power.Limit, dom *power.Domains, pods []job.Task) (ns *NeverStart, startable []bool) {
	type verdict struct {
		ok, noNode bool
		why        string
	}
	seen := map[string]verdict{}
	var gate *policy.PowerGate
	if (lim > 0 || dom != nil) && s.PowerDown == nil {
		gate = &policy.PowerGate{Limit: lim, Model: pm, Domains: dom}
	}
	startable = make([]bool, len(pods))
	for i := range pods {
		d := &pods[i].Demand
		k := demandKey(d)
		v, done := seen[k]
		if !done {
			v = verdict{noNode: true, why: "fits no node: the cluster has no nodes"}
			for _, n := range c.Nodes {
				if ok, _ := cluster.FitsWhenOn(d, n); ok {
					v = verdict{ok: true}
					break
				}
			}
			if v.noNode && len(c.Nodes) > 0 {
				v.why = "fits no node: " + whyNoNode(d, c.Nodes)
			}
			if v.ok && gate != nil {
				if never, why := gate.NeverFits(d, c.Nodes, cluster.BestFitGPUs); never {
					v = verdict{why: why}
				}
			}
			seen[k] = v
		}
		startable[i] = v.ok
		if v.ok {
			continue
		}
		if ns == nil {
			ns = &NeverStart{Why: pods[i].Name + ": " + v.why}
		}
		ns.Count++
		if v.noNode {
			ns.NoNode++
		} else {
			ns.OverLimit++
		}
		if len(ns.First) < neverStartShown {
			ns.First = append(ns.First, pods[i].Name)
		}
	}
	return ns, startable
}

// whyNoNode tallies why d fits none of nodes: each reason with its count
// of nodes, the most frequent first (ties by reason).
func whyNoNode(d *job.Demand, nodes []*cluster.Node) string {
	count := map[string]int{}
	for _, n := range nodes {
		_, why := cluster.FitsWhenOn(d, n)
		count[why]++
	}
	reasons := slices.Collect(maps.Keys(count))
	slices.SortFunc(reasons, func(a, b string) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%s on %d", r, count[r])
	}
	return strings.Join(parts, ", ") + " of " + strconv.Itoa(len(nodes)) + " nodes"
}

// latestEnd is the time every replay of pods reaches at least: the last
// arrival, and the end of every pod that can start run at once on
// arrival (waiting only delays it) on the fastest GPU for it (least: the
// smallest factor perf.Speed gives its work); pod names the pod that sets
// it.
func latestEnd(pods []job.Task, startable []bool, least func(t *job.Task) float64) (end job.Time, pod string) {
	for i := range pods {
		t := &pods[i]
		at := t.Submit
		if startable[i] {
			at += job.Time(math.Ceil(max(t.Work*least(t), 0) * 1000))
		}
		if at > end || pod == "" {
			end, pod = at, t.Name
		}
	}
	return end, pod
}

// seriesHorizon is how far from simulated time 0 the account's price and
// carbon series both reach, and the one that ends first (0 and nil when
// the account wraps past their end).
func seriesHorizon(a *elgrid.Account) (job.Time, *elgrid.Series) {
	if a.Wrap {
		return 0, nil
	}
	var h job.Time
	var first *elgrid.Series
	for _, s := range []*elgrid.Series{a.Price, a.Carbon} {
		t := job.Time(s.End().Sub(a.Start) / time.Millisecond)
		if first == nil || t < h {
			h, first = t, s
		}
	}
	return h, first
}

// checkSeries refuses a replay whose pods reach past the end of the price
// or carbon series: the run could not be priced.
func checkSeries(a *elgrid.Account, end job.Time, pod string) error {
	h, s := seriesHorizon(a)
	if s == nil || end <= h {
		return nil
	}
	return fmt.Errorf("grid: pod %s takes the run to at least %.1f h after simulated time 0 (%s UTC), past the end of %s at %.0f h (%s UTC): the run could not be priced; give a price and carbon series that cover the trace, or an earlier grid.start",
		pod, end.Seconds()/3600, after(a.Start, end).Format(time.DateTime),
		s.Name, h.Seconds()/3600, s.End().Format(time.DateTime))
}

// after is t plus d, in whole days first: a time.Duration holds only
// 292 years, a trace's times 2^40 s.
func after(t time.Time, d job.Time) time.Time {
	const day = 24 * 3600 * 1000
	return t.AddDate(0, 0, int(d/day)).Add(time.Duration(d%day) * time.Millisecond)
}

// checkRecording refuses a measured recording whose last point comes
// before the run begins: every lookup would fall back to the estimate.
// (One that begins after the pods' latest end may still meet pods that
// wait, so it is left to the run's fallback counts.)
func checkRecording(s *scenario.Scenario) error {
	rec, start, err := s.Recorded()
	if err != nil || rec == nil {
		return err
	}
	first, last := rec.Span()
	if last.Before(start) {
		return fmt.Errorf("measured.file %s: its points (%s to %s) end before the run begins (simulated time 0 is measured.start %s): every reading would fall back to the estimate; set measured.start inside the recording",
			s.Measured.File, first.Format(time.RFC3339), last.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	return nil
}

// MaxScaledWorkS bounds a pod's duration once scaled by job speed: 2^40
// s, the bound the pod list puts on a traced duration.
const MaxScaledWorkS = 1 << 40

// speedCheck checks, before any run, what job speed needs: every pod's
// reference GPU is a catalog model with a speed figure for the pod's
// workload class, as is every GPU model of the cluster. It sets in.Speed
// (nil when no GPU pod names a reference) and in.JobSpeed, the line the
// results print, and returns the least and the greatest factor each pod's
// work may be scaled by (the fastest and the slowest GPU model of the
// cluster for it).
func speedCheck(s *scenario.Scenario, c *cluster.Cluster, cat *hw.Catalog, in *Inputs) (least, most func(t *job.Task) float64, err error) {
	var models []string // the cluster's GPU models, in node order
	for _, n := range c.Nodes {
		if n.GPU != nil && !slices.Contains(models, n.GPU.Name) {
			models = append(models, n.GPU.Name)
		}
	}
	type group struct{ ref, workload string }
	var groups []group
	first := map[group]*job.Task{}
	lo, hi := map[group]float64{}, map[group]float64{}
	slowest := map[group]string{}
	gpuPods, unref := 0, 0
	for i := range in.Pods {
		t := &in.Pods[i]
		if t.GPUCount == 0 {
			continue
		}
		gpuPods++
		if t.RefGPU == "" {
			unref++
			continue
		}
		g := group{t.RefGPU, perf.Workload(t)}
		if first[g] == nil {
			first[g] = t
			groups = append(groups, g)
		}
	}
	one := func(*job.Task) float64 { return 1 }
	if len(groups) == 0 {
		in.Speed = nil
		in.JobSpeed = "Job speed: not modelled, the reference GPU is unknown (no trace.reference_gpu, no reference_gpu column): every pod runs its traced duration on whatever GPU it lands on, so a policy that moves pods to slower GPUs is credited with energy it would not save (docs/scenarios.md#job-speed)."
		return one, one, nil
	}
	var parts []string
	for _, g := range groups {
		t := first[g]
		where := fmt.Sprintf("trace.pods %s: pod %s: reference_gpu", s.Trace.Pods, t.Name)
		if g.ref == s.Trace.ReferenceGPU {
			where = "trace.reference_gpu"
		}
		ref, err := cat.GPU(g.ref)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", where, err)
		}
		var fs []string
		lo[g] = math.Inf(1)
		for _, m := range models {
			f := 1.0
			if m != ref.Name {
				if f, err = cat.SpeedRatio(ref.Name, m, g.workload); err != nil {
					return nil, nil, fmt.Errorf("job speed of %s pods measured on %s (%s; pod %s the first): %w", g.workload, g.ref, where, t.Name, err)
				}
			}
			lo[g] = min(lo[g], f)
			if f > hi[g] {
				hi[g], slowest[g] = f, m
			}
			fs = append(fs, fmt.Sprintf("x%.3g on %s", f, m))
		}
		if len(models) == 0 {
			lo[g], hi[g] = 1, 1
		}
		parts = append(parts, fmt.Sprintf("%s pods measured on %s run %s", g.workload, g.ref, strings.Join(fs, ", ")))
	}
	for i := range in.Pods {
		t := &in.Pods[i]
		if t.RefGPU == "" || t.GPUCount == 0 {
			continue
		}
		if g := (group{t.RefGPU, perf.Workload(t)}); t.Work*hi[g] > MaxScaledWorkS {
			return nil, nil, fmt.Errorf("trace.pods %s: pod %s: its %.0f s measured on %s would run %.3g s on %s (x%.3g), past the %d s (2^40) a pod's duration may reach",
				s.Trace.Pods, t.Name, t.Work, g.ref, t.Work*hi[g], slowest[g], hi[g], int64(MaxScaledWorkS))
		}
	}
	line := fmt.Sprintf("Job speed: a pod runs its traced duration x speed(reference GPU)/speed(GPU it lands on), the speeds from the catalog (docs/scenarios.md#job-speed): %s", strings.Join(parts, "; "))
	if unref > 0 {
		line += fmt.Sprintf("; %d of %d GPU pods name no reference GPU and keep their traced durations", unref, gpuPods)
	}
	in.Speed = &perf.Speed{Catalog: cat}
	in.JobSpeed = line + "."
	factor := func(m map[group]float64) func(t *job.Task) float64 {
		return func(t *job.Task) float64 {
			if t.RefGPU == "" || t.GPUCount == 0 {
				return 1
			}
			return m[group{t.RefGPU, perf.Workload(t)}]
		}
	}
	return factor(lo), factor(hi), nil
}

// bindTopology binds the scenario's power topology to the cluster's nodes
// (in.Domains; nil without one): an error names the scenario file, the
// line and the field; each warning is printed, counted.
func bindTopology(env *experiment.Env, s *scenario.Scenario, c *cluster.Cluster, pm power.Model, in *Inputs) error {
	names := make([]string, len(c.Nodes))
	idle := make([]hw.Watts, len(c.Nodes))
	for i, n := range c.Nodes {
		names[i], idle[i] = n.Name, pm.NodePower(n).Total()
	}
	var column map[string]string
	if t := s.Topology; t != nil && t.NodeColumn != "" && in.NodeColumns != nil {
		column = in.NodeColumns.Values[t.NodeColumn]
		// A value naming no domain is the node list's error, at its line.
		var bad []string
		for n, v := range column {
			if v != "" && !slices.ContainsFunc(t.Domains, func(d power.Domain) bool { return d.Name == v }) && t.Members[n] == "" {
				bad = append(bad, n)
			}
		}
		if len(bad) > 0 {
			slices.SortFunc(bad, func(a, b string) int { return in.NodeColumns.Line[a] - in.NodeColumns.Line[b] })
			n := bad[0]
			return fmt.Errorf("trace.nodes %s line %d: column %s: %q is not a domain of the topology (%d node(s) in all name undeclared domains)", s.Trace.Nodes, in.NodeColumns.Line[n], t.NodeColumn, column[n], len(bad))
		}
	}
	d, warn, err := s.BindTopologyColumn(names, idle, column)
	if err != nil {
		return err
	}
	in.Domains = d
	for i, w := range warn {
		env.Notef("warning (topology, %d of %d): %s", i+1, len(warn), w)
	}
	return nil
}
