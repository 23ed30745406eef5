package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
)

// ElasticDomainGuard keeps an elastic scheduler's decisions within the
// limits of power domains (racks, PDUs, rows over the nodes), the same step
// after every system's own decision, so that a comparison under domains
// compares the schedulers and not who reads the topology
// (docs/scenarios.md, "Power domains", elastic).
//
// A domain's power is charged by one rule for every system
// (ElasticDomainCharge for each allocated GPU: its metered draw when the
// job keeps running where and as it runs, else the system's own power
// prediction, else, for a system that predicts none, the most a GPU draws
// at the allocation's frequency), plus the idle GPUs of its powered nodes,
// as the engine checks it
// (sim.ElasticOptions.Domains). While some domain is above its
// limit (the deepest first, then the first declared), one allocation with
// a GPU in it gives way: first one that starts, resumes or moves a job,
// then one that keeps a job where it runs; among those the newest job
// (latest submission, then highest ID). It is moved, with the same GPUs
// per node and frequency, to the lowest-numbered nodes with free GPUs
// where every domain on their path and the cluster limit hold it
// (powering a node on if needed: its idle GPUs count), or else held back:
// its job waits, as if the scheduler had not placed it. A node the
// decision powered on that ends with no GPU in use is left off.
type ElasticDomainGuard struct {
	Inner   ElasticScheduler
	Domains *power.Domains
	// GPUMaxW is the most a GPU draws at each frequency index (the
	// hardware's envelope), charged until a GPU's draw is metered.
	GPUMaxW []hw.Watts
	// Moved and Held count, per domain (Domains.List order), the
	// allocations moved elsewhere and held back because that domain would
	// have passed its limit.
	Moved, Held []int
	// Blocked says why the last allocation held back while nothing else
	// ran was held ("" when none was): a job no placement the domains
	// allow can start, which leaves it waiting for ever.
	Blocked string
}

// NewElasticDomainGuard wraps s (d nil or empty: the guard changes
// nothing); gpuMax is the most a GPU draws at each frequency index.
func NewElasticDomainGuard(s ElasticScheduler, d *power.Domains, gpuMax []hw.Watts) *ElasticDomainGuard {
	return &ElasticDomainGuard{Inner: s, Domains: d, GPUMaxW: gpuMax, Moved: make([]int, d.Len()), Held: make([]int, d.Len())}
}

// ElasticDomainCharge is the power per GPU a power domain is charged for
// allocation a of the job whose view is v (nil: unknown), the rule every
// system is held to: the job's metered draw per GPU when a keeps it on the
// nodes it runs on now, at the frequency it runs at, with no profiling
// window to start; else the system's own prediction (a.Pred over a's GPUs)
// when it makes one, as the cluster's power limit is checked; else, for a
// system that predicts no power, gpuMax[a.FreqIdx], the most a GPU draws
// at that frequency (the highest of gpuMax for a profiling window, which
// cycles frequencies): nameplate until metered.
func ElasticDomainCharge(v *ElasticView, a *ElasticAlloc, gpuMax []hw.Watts) hw.Watts {
	if v != nil && v.PowerW > 0 && v.GPUs > 0 && !a.Profile && a.FreqIdx == v.FreqIdx && SamePlacement(a.Nodes, v.Nodes) {
		return hw.Watts(v.PowerW / float64(v.GPUs))
	}
	n := 0
	for _, ns := range a.Nodes {
		n += ns.GPUs
	}
	if a.Pred > 0 && n > 0 {
		return a.Pred / hw.Watts(n)
	}
	if a.Profile || v != nil && v.Profiling || a.FreqIdx < 0 || a.FreqIdx >= len(gpuMax) {
		return slices.Max(gpuMax)
	}
	return gpuMax[a.FreqIdx]
}

// SamePlacement reports whether two placements hold the same GPUs on the
// same nodes (in any order).
func SamePlacement(a, b []NodeShare) bool {
	if len(a) != len(b) {
		return false
	}
	for _, ns := range a {
		if !slices.Contains(b, ns) {
			return false
		}
	}
	return true
}

// ScheduleElastic implements ElasticScheduler.
func (g *ElasticDomainGuard) ScheduleElastic(st *ElasticState) ElasticDecision {
	d := g.Inner.ScheduleElastic(st)
	if g.Domains.Len() == 0 {
		return d
	}
	return g.repair(st, d)
}

func (g *ElasticDomainGuard) repair(st *ElasticState, d ElasticDecision) ElasticDecision {
	gpn, nodes := st.GPUsPerNode, st.Nodes
	on := make([]bool, nodes)
	if d.NodeOn == nil {
		for i := range on {
			on[i] = true
		}
	} else {
		copy(on, d.NodeOn)
	}
	views := make(map[int]*ElasticView, len(st.Jobs))
	for _, v := range st.Jobs {
		views[v.Job.ID] = v
	}
	used := make([]int, nodes)
	nodeW := make([]hw.Watts, nodes)
	apply := func(a *ElasticAlloc, sign int) {
		w := ElasticDomainCharge(views[a.Job], a, g.GPUMaxW)
		for _, ns := range a.Nodes {
			if ns.Node < 0 || ns.Node >= nodes {
				continue // the engine refuses it
			}
			used[ns.Node] += sign * ns.GPUs
			nodeW[ns.Node] += hw.Watts(sign) * w * hw.Watts(ns.GPUs)
		}
	}
	for k := range d.Allocs {
		apply(&d.Allocs[k], 1)
	}
	nodePower := func(n int) hw.Watts {
		if !on[n] {
			return nodeW[n]
		}
		return nodeW[n] + hw.Watts(gpn-used[n])*st.IdleGPU
	}
	load := g.Domains.NewLoad()
	for n := range nodes {
		load.Add(n, nodePower(n))
	}
	// pred is the cluster's predicted power as the engine checks it
	// against PowerLimit: the allocations' Pred and the powered idle GPUs.
	var pred hw.Watts
	for k := range d.Allocs {
		pred += d.Allocs[k].Pred
	}
	for n := range nodes {
		if on[n] {
			pred += hw.Watts(gpn-used[n]) * st.IdleGPU
		}
	}
	over := func() int {
		best := -1
		for i, dom := range g.Domains.List {
			if power.Limit(dom.Limit).AllowsRecomputed(load.W[i]) {
				continue
			}
			if best < 0 || g.Domains.Depth[i] > g.Domains.Depth[best] {
				best = i
			}
		}
		return best
	}
	in := func(a *ElasticAlloc, dom int) bool {
		for _, ns := range a.Nodes {
			if ns.Node >= 0 && ns.Node < nodes && slices.Contains(g.Domains.Path(ns.Node), int32(dom)) {
				return true
			}
		}
		return false
	}
	// stays reports whether a keeps its job where it runs now.
	stays := func(a *ElasticAlloc) bool {
		v := views[a.Job]
		return v != nil && v.GPUs > 0 && SamePlacement(a.Nodes, v.Nodes)
	}
	allocs := slices.Clone(d.Allocs)
	keep := make([]bool, len(allocs))
	for k := range keep {
		keep[k] = true
	}
	settled := make([]bool, len(allocs)) // moved: placed within the limits
	changed := false
	for dom := over(); dom >= 0; dom = over() {
		victim := -1
		for k := range allocs {
			if !keep[k] || settled[k] || !in(&allocs[k], dom) {
				continue
			}
			if victim < 0 || g.yieldsBefore(views, stays, &allocs[k], &allocs[victim]) {
				victim = k
			}
		}
		if victim < 0 {
			break // only idle power is over: Bind refuses such limits; the engine names it
		}
		changed = true
		a := &allocs[victim]
		for _, ns := range a.Nodes {
			if ns.Node >= 0 && ns.Node < nodes {
				load.Add(ns.Node, -nodePower(ns.Node))
				pred += hw.Watts(ns.GPUs) * st.IdleGPU
			}
		}
		pred -= a.Pred
		apply(a, -1)
		for _, ns := range a.Nodes {
			if ns.Node >= 0 && ns.Node < nodes {
				load.Add(ns.Node, nodePower(ns.Node))
			}
		}
		if place, after, ok := g.relocate(st, a, on, used, load, pred); ok {
			moved := *a
			moved.Nodes = place
			for _, ns := range place {
				load.Add(ns.Node, -nodePower(ns.Node))
			}
			for _, ns := range place {
				on[ns.Node] = true
			}
			apply(&moved, 1)
			for _, ns := range place {
				load.Add(ns.Node, nodePower(ns.Node))
			}
			pred = after
			allocs[victim] = moved
			settled[victim] = true
			g.Moved[dom]++
			continue
		}
		keep[victim] = false
		g.Held[dom]++
		if !slices.Contains(keep, true) {
			n, w := 0, ElasticDomainCharge(views[a.Job], a, g.GPUMaxW)
			for _, ns := range a.Nodes {
				n += ns.GPUs
			}
			dd := g.Domains.List[dom]
			g.Blocked = fmt.Sprintf("job %d on %d GPUs is charged %.0f W a GPU (%.0f W), and no placement of it keeps every domain within its limit with nothing else running (first refused by domain %q, %s, limit %.0f W)",
				a.Job, n, w, w*hw.Watts(n), dd.Name, dd.Level, dd.Limit)
		}
	}
	if !changed {
		return d
	}
	out := d
	out.Allocs = make([]ElasticAlloc, 0, len(allocs))
	for k := range allocs {
		if keep[k] {
			out.Allocs = append(out.Allocs, allocs[k])
		}
	}
	if d.NodeOn != nil || !allOn(on) {
		for n := range on {
			if on[n] && used[n] == 0 && !st.NodeOn[n] {
				on[n] = false
			}
		}
		out.NodeOn = on
	}
	return out
}

// yieldsBefore reports whether allocation a gives way before b: one that
// starts, resumes or moves a job before one that keeps a job in place, then
// the newer job (later submission, then higher ID).
func (g *ElasticDomainGuard) yieldsBefore(views map[int]*ElasticView, stays func(*ElasticAlloc) bool, a, b *ElasticAlloc) bool {
	if sa, sb := stays(a), stays(b); sa != sb {
		return !sa
	}
	va, vb := views[a.Job], views[b.Job]
	if va != nil && vb != nil {
		if c := cmp.Compare(va.Job.Submit, vb.Job.Submit); c != 0 {
			return c > 0
		}
	}
	return a.Job > b.Job
}

// relocate finds nodes for a's GPUs per node (largest share first, each on
// the lowest-numbered node with room whose domains and the cluster limit
// hold the change), with the cluster's predicted power after it, or
// reports false; pred is the predicted power without a.
func (g *ElasticDomainGuard) relocate(st *ElasticState, a *ElasticAlloc, on []bool, used []int, load *power.DomainLoad, pred hw.Watts) ([]NodeShare, hw.Watts, bool) {
	pred += a.Pred
	shares := make([]int, 0, len(a.Nodes))
	n := 0
	for _, ns := range a.Nodes {
		shares = append(shares, ns.GPUs)
		n += ns.GPUs
	}
	slices.SortFunc(shares, func(x, y int) int { return cmp.Compare(y, x) })
	w := ElasticDomainCharge(nil, a, g.GPUMaxW) // a moved job is not metered where it goes
	scratch := load.Clone()
	var place []NodeShare
	for _, s := range shares {
		found := false
		for node := range st.Nodes {
			if st.GPUsPerNode-used[node] < s || slices.ContainsFunc(place, func(ns NodeShare) bool { return ns.Node == node }) {
				continue
			}
			// s more GPUs busy at w each, taken from idle ones (or from an
			// off node, which is powered on with its other GPUs idle).
			delta := w * hw.Watts(s)
			if on[node] {
				delta -= hw.Watts(s) * st.IdleGPU
			} else {
				delta += hw.Watts(st.GPUsPerNode-used[node]-s) * st.IdleGPU
			}
			dpred := -hw.Watts(s) * st.IdleGPU
			if !on[node] {
				dpred += hw.Watts(st.GPUsPerNode) * st.IdleGPU
			}
			if !st.PowerLimit.AllowsRecomputed(pred + dpred) {
				continue
			}
			if _, ok := scratch.Fits(node, delta); !ok {
				continue
			}
			scratch.Add(node, delta)
			pred += dpred
			place = append(place, NodeShare{Node: node, GPUs: s})
			found = true
			break
		}
		if !found {
			return nil, 0, false
		}
	}
	slices.SortFunc(place, func(x, y NodeShare) int { return x.Node - y.Node })
	return place, pred, true
}

func allOn(on []bool) bool {
	for _, b := range on {
		if !b {
			return false
		}
	}
	return true
}
