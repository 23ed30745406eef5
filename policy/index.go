package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// The Placer's index: per task class, the best node kept up to date where
// nodes change, so that a placement costs work for the nodes that changed
// since the class was last placed and a few heap steps, not a pass over
// every node.
//
// A node's raw scores for a class depend only on the task fields the
// scorers read (the class's key, TaskReader) and the node's state, so they change only when the node does
// (cluster.ChangedSince lists those nodes). Nodes with equal raw scores
// form a group; a group keeps its nodes in a heap by tie-break rank, and
// the class keeps its groups with nodes in a heap by total score. The
// total of a group is the weighted sum Place computes, with each
// normalising scorer's score taken from the extremes of its raw scores
// over the feasible nodes (MinMaxNormalizer: kube-scheduler's min-max
// rule needs nothing else). Those extremes are the extremes over the
// groups with nodes; when one of them moves, every group's total may move
// and the groups are re-keyed (a pass over the groups, whose number is
// bounded by the scores' range, not by the nodes). With one scorer the
// order of the raw scores is the order of the totals at the top (only the
// highest raw score normalises to 100), so the groups are keyed by the raw
// score and never re-keyed.
//
// Ties are broken as the scan in score breaks them: the highest total,
// then the lowest rank (SetRank; node index when none), then the lowest
// node index.

// rawScores are a node's raw scores for a class, one per scorer.
type rawScores [maxCachedScorers]int64

// scoreGroup is the feasible nodes of a class with equal raw scores.
type scoreGroup struct {
	raw rawScores
	// key orders groups: the total under the extremes of the last re-key
	// (or the raw score with one scorer).
	key int64
	// The places of its nodes in the tie-break order (placeIndex.ord):
	// sorted, from head on, and pend, a heap of the places added since the
	// last merge. Both may also hold places of nodes that left the group
	// (or twice, of a node that came back); top is the best place of a
	// node in the group and n the number of its nodes. The best node
	// leaving costs a step past the departed ones, not a heap's log n.
	sorted []int32
	head   int32
	pend   []int32
	top, n int32
	// at is the group's place in classIndex.heap; -1 without nodes.
	at int32
}

// classIndex is one task class's view of every node.
type classIndex struct {
	ready bool
	mark  uint64 // cluster.ChangeMark when the class was last brought up to date
	// group is each node's group (-1 where the class does not fit), by
	// the node's place in the tie-break order.
	group  []int32
	groups []scoreGroup
	byRaw  map[rawScores]int32
	// heap holds the groups with nodes, best first.
	heap []int32
	// lo and hi are the extremes of each normalising scorer's raw scores
	// over the groups in heap; dirty is set when they moved since the keys
	// were computed.
	lo, hi rawScores
	dirty  bool
}

// placeIndex is the index of one cluster.
type placeIndex struct {
	c       *cluster.Cluster
	classes []*classIndex
	// ord is each node's place in the tie-break order (rank, then index),
	// node the node at each place: heaps compare places, not ranks.
	ord, node []int32
	// seen stamps the nodes already brought up to date in one pass.
	seen  []uint32
	stamp uint32
	// alike holds the scores of each node state in one scoreAll; spec is
	// each node's spec (nodes alike before any change), fresh and freshOK
	// the scores of an untouched node of each spec in one scoreAll; gids is
	// scoreAll's group of each node.
	alike   map[nodeState]cacheEntry
	spec    []int32
	fresh   []cacheEntry
	freshOK []bool
	gids    []int32
}

// indexable reports whether Place may use the index for a task of class
// cls: a cached Placer (cls >= 0), no power gate (its admission depends on the whole cluster's
// power), no explanation (it reports every feasible node), and scorers
// whose normalisation the index can compute.
func (p *Placer) indexable(cls int) bool {
	return p.canIndex && cls >= 0 && p.gate == nil && p.explain == nil
}

// placeIndexed is Place through the index.
func (p *Placer) placeIndexed(t *job.Task, cls int, c *cluster.Cluster) (Decision, bool) {
	p.held = false
	ci := p.upToDate(t, cls, c)
	if len(ci.heap) == 0 {
		return Decision{}, false
	}
	if ci.dirty {
		p.rekey(ci)
	}
	g := &ci.groups[ci.heap[0]]
	n := c.Nodes[p.ix.node[g.top]]
	return p.decision(t, n, p.indexTotal(ci, &g.raw)), true
}

// upToDate returns the index of t's class cls with every node's scores current.
func (p *Placer) upToDate(t *job.Task, cls int, c *cluster.Cluster) *classIndex {
	if p.ix == nil || p.ix.c != c || len(p.ix.seen) != len(c.Nodes) {
		p.ix = p.newIndex(c)
	}
	ix := p.ix
	if cls >= len(ix.classes) {
		ix.classes = append(ix.classes, make([]*classIndex, cls+1-len(ix.classes))...)
	}
	ci := ix.classes[cls]
	if ci == nil {
		ci = &classIndex{group: make([]int32, len(c.Nodes)), byRaw: map[rawScores]int32{}}
		for i := range ci.group {
			ci.group[i] = -1
		}
		ix.classes[cls] = ci
	}
	changed, ok := c.ChangedSince(ci.mark)
	evaluated := 0
	if !ci.ready || !ok {
		evaluated = p.scoreAll(ci, t, c)
		ci.ready = true
	} else {
		ix.stamp++
		if ix.stamp == 0 { // wrapped: no stale stamp may match
			clear(ix.seen)
			ix.stamp = 1
		}
		for _, ch := range changed {
			id := ch.Node
			if ix.seen[id] == ix.stamp {
				continue
			}
			o := ix.ord[id]
			if ch.Took && ci.group[o] < 0 && len(p.filters) == 0 {
				// It did not fit and only lost resources since. (Not
				// stamped: a later change of the batch may free some.)
				continue
			}
			ix.seen[id] = ix.stamp
			var e cacheEntry
			p.evaluate(t, c.Nodes[id], &e)
			p.update(ci, o, &e)
			evaluated++
		}
	}
	ci.mark = c.ChangeMark()
	p.misses += int64(evaluated)
	p.hits += int64(len(c.Nodes) - evaluated)
	return ci
}

// scoreAll scores every node for the class and returns how many it scored:
// with scorers that read only node state (StateScorer) and no filters,
// one node of each state (most nodes of a large cluster are alike when a
// class is first placed).
//
// The class is rebuilt from empty groups, its nodes taken in tie-break
// order, so that every group's places arrive sorted.
func (p *Placer) scoreAll(ci *classIndex, t *job.Task, c *cluster.Cluster) int {
	ix := p.ix
	for gid := range ci.groups {
		g := &ci.groups[gid]
		g.sorted, g.head, g.pend, g.n, g.at = g.sorted[:0], 0, g.pend[:0], 0, -1
	}
	ci.heap, ci.dirty = ci.heap[:0], false
	for o := range ci.group {
		ci.group[o] = -1
	}
	// Score in node order (memory order), then file the nodes into their
	// groups in tie-break order.
	if len(ix.gids) != len(c.Nodes) {
		ix.gids = make([]int32, len(c.Nodes))
	}
	if p.stateOnly {
		if ix.alike == nil {
			ix.alike = map[nodeState]cacheEntry{}
		}
		clear(ix.alike)
		clear(ix.freshOK)
	}
	scored := 0
	for i, n := range c.Nodes {
		var e cacheEntry
		switch {
		case !p.stateOnly:
			p.evaluate(t, n, &e)
			scored++
		case n.Version == 0: // untouched: its state is its spec's
			sp := ix.spec[i]
			if ix.freshOK[sp] {
				e = ix.fresh[sp]
			} else {
				p.evaluate(t, n, &e)
				scored++
				ix.fresh[sp], ix.freshOK[sp] = e, true
			}
		default:
			k, ok := stateOf(n)
			var seen bool
			if e, seen = ix.alike[k]; !ok || !seen {
				p.evaluate(t, n, &e)
				scored++
				if ok {
					ix.alike[k] = e
				}
			}
		}
		ix.gids[i] = p.groupOf(ci, &e)
	}
	for o, i := range ix.node {
		if gid := ix.gids[i]; gid >= 0 {
			p.join(ci, gid, int32(o))
		}
	}
	return scored
}

// groupOf is the group of scores e in the class (-1 when infeasible),
// made if new.
func (p *Placer) groupOf(ci *classIndex, e *cacheEntry) int32 {
	if !e.feasible {
		return -1
	}
	gid, ok := ci.byRaw[e.raw]
	if !ok {
		gid = int32(len(ci.groups))
		ci.groups = append(ci.groups, scoreGroup{raw: e.raw, at: -1})
		ci.byRaw[e.raw] = gid
	}
	return gid
}

// nodeState is what a StateScorer may read of a node with up to 8 GPUs.
type nodeState struct {
	gpuModel, cpuModel         string
	cpu, mem, freeCPU, freeMem int64
	state                      cluster.PowerState
	tasks                      int
	affinity                   [9]int32
	gpus                       int
	gpuFree                    [8]int64
}

// stateOf is n's state; false for a node with more than 8 GPUs or in MIG
// mode (whose state is its instances, not the GPUs' free shares).
func stateOf(n *cluster.Node) (nodeState, bool) {
	if len(n.GPUFree) > 8 || n.MIG != nil {
		return nodeState{}, false
	}
	k := nodeState{gpuModel: n.GPUModel, cpu: n.CPUMilli, mem: n.MemMiB, freeCPU: n.FreeCPUMilli, freeMem: n.FreeMemMiB,
		state: n.State, tasks: n.Tasks, affinity: n.Affinity, gpus: len(n.GPUFree)}
	if n.CPU != nil {
		k.cpuModel = n.CPU.Name
	}
	copy(k.gpuFree[:], n.GPUFree)
	return k, true
}

// update moves the node at place ni in the tie-break order to the group of
// its scores e for the class.
func (p *Placer) update(ci *classIndex, ni int32, e *cacheEntry) {
	old := ci.group[ni]
	if !e.feasible {
		if old >= 0 {
			p.leave(ci, ni)
		}
		return
	}
	if old >= 0 && ci.groups[old].raw == e.raw {
		return
	}
	gid := p.groupOf(ci, e)
	if gid == old {
		return
	}
	if old >= 0 {
		p.leave(ci, ni)
	}
	p.join(ci, gid, ni)
}

// join adds the node at place o to group gid.
func (p *Placer) join(ci *classIndex, gid, o int32) {
	g := &ci.groups[gid]
	ci.group[o] = gid
	g.n++
	if len(g.pend) == 0 && (len(g.sorted) == 0 || o > g.sorted[len(g.sorted)-1]) {
		g.sorted = append(g.sorted, o) // still sorted: no heap step
	} else {
		g.pushPend(o)
		if len(g.pend) > 16 && 4*len(g.pend) > len(g.sorted)-int(g.head) {
			g.merge(ci.group, gid)
		}
	}
	if g.n > 1 {
		if o < g.top { // a new best node: the group may move up
			g.top = o
			p.groupUp(ci, int(g.at))
		}
		return
	}
	g.top = o
	p.widen(ci, &g.raw, len(ci.heap) == 0)
	g.key = p.key(ci, &g.raw)
	g.at = int32(len(ci.heap))
	ci.heap = append(ci.heap, gid)
	p.groupUp(ci, int(g.at))
}

// leave takes the node at place o out of its group. Its entry stays until
// the group's best node is looked for past it (or the group is
// compacted): a departure costs nothing but when the best node leaves.
func (p *Placer) leave(ci *classIndex, o int32) {
	gid := ci.group[o]
	g := &ci.groups[gid]
	ci.group[o] = -1
	g.n--
	if g.n == 0 { // the group is empty: out of the class heap
		g.sorted, g.head, g.pend = g.sorted[:0], 0, g.pend[:0]
		at := int(g.at)
		g.at = -1
		end := len(ci.heap) - 1
		if at != end {
			ci.heap[at] = ci.heap[end]
			ci.groups[ci.heap[at]].at = int32(at)
		}
		ci.heap = ci.heap[:end]
		if at != end {
			p.groupFix(ci, at)
		}
		p.narrow(ci, &g.raw)
		return
	}
	if len(g.sorted)-int(g.head)+len(g.pend) > 2*int(g.n)+16 {
		g.merge(ci.group, gid)
	}
	if o == g.top { // the group may move down
		g.findTop(ci.group, gid)
		p.groupDown(ci, int(g.at))
	}
}

// findTop sets top to the best place of a node in the group, dropping the
// entries of departed nodes it passes.
func (g *scoreGroup) findTop(group []int32, gid int32) {
	for int(g.head) < len(g.sorted) && group[g.sorted[g.head]] != gid {
		g.head++
	}
	for len(g.pend) > 0 && group[g.pend[0]] != gid {
		g.popPend()
	}
	switch {
	case len(g.pend) == 0:
		g.top = g.sorted[g.head]
	case int(g.head) == len(g.sorted):
		g.top = g.pend[0]
	default:
		g.top = min(g.sorted[g.head], g.pend[0])
	}
}

// pushPend adds o to the heap of places added since the last merge.
func (g *scoreGroup) pushPend(o int32) {
	h := append(g.pend, o)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if h[i] > h[parent] {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	g.pend = h
}

// popPend removes the top of the pending heap.
func (g *scoreGroup) popPend() {
	h := g.pend
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		best := i
		if k := 2*i + 1; k < len(h) && h[k] < h[best] {
			best = k
		}
		if k := 2*i + 2; k < len(h) && h[k] < h[best] {
			best = k
		}
		if best == i {
			break
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
	g.pend = h
}

// merge makes the group's places one sorted list without departed nodes
// or repeats.
func (g *scoreGroup) merge(group []int32, gid int32) {
	h := make([]int32, 0, g.n)
	for _, list := range [2][]int32{g.sorted[g.head:], g.pend} {
		for _, o := range list {
			if group[o] == gid {
				h = append(h, o)
			}
		}
	}
	slices.Sort(h)
	g.sorted, g.head, g.pend = slices.Compact(h), 0, g.pend[:0]
}

// newIndex is an empty index of c, with the tie-break order of its nodes.
func (p *Placer) newIndex(c *cluster.Cluster) *placeIndex {
	n := len(c.Nodes)
	ix := &placeIndex{c: c, seen: make([]uint32, n), ord: make([]int32, n), node: make([]int32, n)}
	for i := range ix.node {
		ix.node[i] = int32(i)
	}
	if p.rank != nil {
		slices.SortStableFunc(ix.node, func(a, b int32) int { return cmp.Compare(p.rank[a], p.rank[b]) })
	}
	for o, i := range ix.node {
		ix.ord[i] = int32(o)
	}
	type specKey struct {
		gpuModel, cpuModel string
		cpu, mem           int64
		gpus               int
		mig                string // the MIG mode and layouts ("": none)
	}
	specs := map[specKey]int32{}
	ix.spec = make([]int32, n)
	for i, nd := range c.Nodes {
		k := specKey{gpuModel: nd.GPUModel, cpu: nd.CPUMilli, mem: nd.MemMiB, gpus: len(nd.GPUFree)}
		for _, m := range nd.MIG {
			k.mig += fmt.Sprintf("%v%v;", m.Dynamic, m.Instances)
		}
		if nd.CPU != nil {
			k.cpuModel = nd.CPU.Name
		}
		sp, ok := specs[k]
		if !ok {
			sp = int32(len(specs))
			specs[k] = sp
		}
		ix.spec[i] = sp
	}
	ix.fresh, ix.freshOK = make([]cacheEntry, len(specs)), make([]bool, len(specs))
	return ix
}

// groupBefore orders groups: higher key, then the better best node.
func (p *Placer) groupBefore(ci *classIndex, a, b int32) bool {
	ga, gb := &ci.groups[a], &ci.groups[b]
	if ga.key != gb.key {
		return ga.key > gb.key
	}
	return ga.top < gb.top
}

func (p *Placer) groupUp(ci *classIndex, i int) {
	h := ci.heap
	for i > 0 {
		parent := (i - 1) / 2
		if !p.groupBefore(ci, h[i], h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		ci.groups[h[i]].at, ci.groups[h[parent]].at = int32(i), int32(parent)
		i = parent
	}
}

func (p *Placer) groupDown(ci *classIndex, i int) {
	h := ci.heap
	for {
		best := i
		for _, k := range [2]int{2*i + 1, 2*i + 2} {
			if k < len(h) && p.groupBefore(ci, h[k], h[best]) {
				best = k
			}
		}
		if best == i {
			return
		}
		h[i], h[best] = h[best], h[i]
		ci.groups[h[i]].at, ci.groups[h[best]].at = int32(i), int32(best)
		i = best
	}
}

// groupFix restores the class heap after its element i changed.
func (p *Placer) groupFix(ci *classIndex, i int) {
	p.groupDown(ci, i)
	p.groupUp(ci, i)
}

// widen takes a group that just got its first node into the extremes
// (first: it is the only group with nodes).
func (p *Placer) widen(ci *classIndex, raw *rawScores, first bool) {
	for i, normed := range p.normed {
		if !normed {
			continue
		}
		switch {
		case first:
			ci.lo[i], ci.hi[i] = raw[i], raw[i]
		case raw[i] < ci.lo[i]:
			ci.lo[i] = raw[i]
		case raw[i] > ci.hi[i]:
			ci.hi[i] = raw[i]
		default:
			continue
		}
		ci.dirty = ci.dirty || len(p.scorers) > 1
	}
}

// narrow recomputes the extremes after a group lost its last node, when
// that group held one of them.
func (p *Placer) narrow(ci *classIndex, raw *rawScores) {
	for i, normed := range p.normed {
		if !normed || len(ci.heap) == 0 || raw[i] != ci.lo[i] && raw[i] != ci.hi[i] {
			continue
		}
		lo, hi := ci.groups[ci.heap[0]].raw[i], ci.groups[ci.heap[0]].raw[i]
		for _, gid := range ci.heap {
			v := ci.groups[gid].raw[i]
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo != ci.lo[i] || hi != ci.hi[i] {
			ci.lo[i], ci.hi[i] = lo, hi
			ci.dirty = ci.dirty || len(p.scorers) > 1
		}
	}
}

// key is the heap key of raw scores: the raw score with one scorer (its
// order is the order of the totals at the top), else the total.
func (p *Placer) key(ci *classIndex, raw *rawScores) int64 {
	if len(p.scorers) == 1 {
		return raw[0]
	}
	return p.indexTotal(ci, raw)
}

// indexTotal is the weighted sum of the normalised scores, as score computes it.
func (p *Placer) indexTotal(ci *classIndex, raw *rawScores) int64 {
	var sum int64
	for i, s := range p.scorers {
		v := raw[i]
		if p.normed[i] {
			v = MinMaxScore(v, ci.lo[i], ci.hi[i], p.equal[i])
		}
		sum += s.Weight * v
	}
	return sum
}

// rekey recomputes every group's key under the current extremes and
// rebuilds the class heap.
func (p *Placer) rekey(ci *classIndex) {
	for _, gid := range ci.heap {
		g := &ci.groups[gid]
		g.key = p.key(ci, &g.raw)
	}
	for i := len(ci.heap)/2 - 1; i >= 0; i-- {
		p.groupDown(ci, i)
	}
	ci.dirty = false
	p.rekeys++
}
