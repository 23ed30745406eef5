package policy

import (
	"cmp"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// StartGang starts every pod of a gang job at once: the engine applies
// all of Pods or fails the run (all-or-nothing); a pod of a gang is never
// started by a lone Start.
type StartGang struct {
	Gang string
	Pods []Start
}

func (StartGang) action() {}

// GangOptions say how Online serves gang jobs (tasks with job.Task.Gang).
type GangOptions struct {
	// HeadOfLine makes a gang that cannot start block every task queued
	// behind it (strict FIFO). Without it (the default) smaller work is
	// backfilled around a waiting gang, as kube-scheduler does with
	// scheduler-plugins' Coscheduling (pods of other groups keep being
	// scheduled while a PodGroup waits) and as Kueue's default
	// BestEffortFIFO queueing does.
	HeadOfLine bool
	// Group, when set, puts each node in a node group (a rack, a
	// topology domain): a gang is packed within one group when some
	// group can hold it, else placed over the whole cluster.
	Group func(n *cluster.Node) string
}

// scheduleGang serves queued task t, a pod of a gang: the first queued
// pod of a gang stands for the whole gang (seen records the gangs already
// served in this call). It returns the gang's start, or block when the
// tasks behind must wait (HeadOfLine and the gang cannot start).
func (o *Online) scheduleGang(st *State, t *job.Task, seen map[string]bool) (a Action, block bool) {
	if seen[t.Gang] {
		return nil, false
	}
	seen[t.Gang] = true
	if o.unchangedFor(t.Gang, st) { // tried whole, and nothing was freed since
		return nil, o.Gangs.HeadOfLine
	}
	var pods []*job.Task
	for _, q := range st.Queue {
		if q.Gang == t.Gang {
			pods = append(pods, q)
		}
	}
	if len(pods) < t.GangSize { // pods still to arrive
		return nil, o.Gangs.HeadOfLine
	}
	ds, ok := o.Placer.PlaceGang(pods, st.Cluster, o.Gangs.Group)
	if !ok {
		if o.gangTried == nil {
			o.gangTried = map[string]uint64{}
		}
		o.gangTried[t.Gang] = st.Cluster.ChangeMark()
		return nil, o.Gangs.HeadOfLine
	}
	delete(o.gangTried, t.Gang)
	g := StartGang{Gang: t.Gang, Pods: make([]Start, len(ds))}
	for i, d := range ds {
		g.Pods[i] = Start{Task: d.Task, Node: d.Node, GPUs: d.GPUs, MIGStart: d.MIGStart}
	}
	return g, true
}

// unchangedFor reports whether gang g could not start at its last try
// and the cluster has since only taken resources (allocations): then it
// cannot start now either, and is not placed again. A release or a power
// state change may let it in; so may a meter's readings (measured mode,
// never memoised). The mark moves past the allocations it has read, so
// each change is read once per waiting gang.
func (o *Online) unchangedFor(g string, st *State) bool {
	mark, ok := o.gangTried[g]
	if !ok || st.Meter != nil {
		return false
	}
	changes, ok := st.Cluster.ChangedSince(mark)
	if !ok {
		return false
	}
	for _, c := range changes {
		if !c.Took {
			return false
		}
	}
	o.gangTried[g] = st.Cluster.ChangeMark()
	return true
}

// GangDecision is where PlaceGang puts one pod of a gang.
type GangDecision struct {
	Task job.ID
	Decision
}

// PlaceGang places every pod of a gang or none: the pods, largest first
// (ties by name), are placed one by one by the Placer's filters, scorers
// and power gate on a tentative copy of the cluster, each seeing the
// pods placed before it; if any pod fits nowhere nothing is placed and ok
// is false. Under a power gate each pod is admitted on the copy, which
// holds the pods placed before it, so the gang is admitted as a whole.
// With group set, the gang is first placed within each node group alone
// and the group whose pods score highest in sum wins (ties to the
// group's name); only when no group can hold it is it placed over the
// whole cluster. Scores are computed afresh (no cache, no index): the
// tentative copy is not the cluster the cache follows.
func (p *Placer) PlaceGang(pods []*job.Task, c *cluster.Cluster, group func(n *cluster.Node) string) ([]GangDecision, bool) {
	var need int64
	for _, t := range pods {
		need += t.TotalGPUMilli()
	}
	if need > c.TotalGPUMilli-c.AllocGPUMilli { // free GPUs, counting nodes not on: a bound
		return nil, false
	}
	order := slices.Clone(pods)
	slices.SortFunc(order, func(a, b *job.Task) int {
		return cmp.Or(cmp.Compare(b.TotalGPUMilli(), a.TotalGPUMilli()), cmp.Compare(b.CPUMilli, a.CPUMilli),
			cmp.Compare(b.MemMiB, a.MemMiB), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	if group != nil {
		names := map[string][]bool{}
		for i, n := range c.Nodes {
			g := group(n)
			if names[g] == nil {
				names[g] = make([]bool, len(c.Nodes))
			}
			names[g][i] = true
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range names {
				if !yield(k) {
					return
				}
			}
		})
		var best []GangDecision
		var bestScore int64
		for _, k := range keys {
			ds, ok := p.placeGangOn(order, c, names[k])
			if !ok {
				continue
			}
			var s int64
			for _, d := range ds {
				s += d.Score
			}
			if best == nil || s > bestScore {
				best, bestScore = ds, s
			}
		}
		if best != nil {
			return best, true
		}
	}
	return p.placeGangOn(order, c, nil)
}

// placeGangOn places the pods in order on a copy of c, on the nodes in
// only (nil: all).
func (p *Placer) placeGangOn(order []*job.Task, c *cluster.Cluster, only []bool) ([]GangDecision, bool) {
	tent := c.Clone()
	p.only = only
	defer func() { p.only = nil }()
	ds := make([]GangDecision, 0, len(order))
	for _, t := range order {
		if !p.score(t, -1, tent) {
			return nil, false
		}
		best := 0
		for k := 1; k < len(p.idx); k++ {
			if p.total[k] > p.total[best] || p.total[k] == p.total[best] && p.less(p.idx[k], p.idx[best]) {
				best = k
			}
		}
		n := tent.Nodes[p.idx[best]]
		d := p.decision(t, n, p.total[best])
		var err error
		if t.MIG() && len(d.GPUs) == 1 {
			err = tent.AllocateMIG(t, n.ID, d.GPUs[0], d.MIGStart)
		} else {
			err = tent.Allocate(t, n.ID, d.GPUs)
		}
		if err != nil {
			return nil, false // the selector chose GPUs that do not fit: the engine would refuse them
		}
		ds = append(ds, GangDecision{Task: t.ID, Decision: d})
	}
	return ds, true
}
