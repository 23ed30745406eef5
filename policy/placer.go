package policy

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// Weighted is a scorer with its weight in the Placer's weighted sum.
type Weighted struct {
	Name   string
	Scorer Scorer
	Weight int64
}

// Decision is where a Placer puts a task.
type Decision struct {
	Node  cluster.NodeID
	GPUs  []int
	Score int64
	// MIGStart is the memory slice of the MIG instance on GPUs[0] for a
	// task asking for one (0 otherwise).
	MIGStart int
}

// maxCachedScorers bounds the scorers whose raw scores a Placer caches.
const maxCachedScorers = 4

type cacheEntry struct {
	ver      uint64 // node.Version+1 when valid
	feasible bool
	raw      [maxCachedScorers]int64
	inc      hw.Watts // the task's power increase (with a gate)
}

// Placer chains filters and weighted scorers like kube-scheduler: nodes that
// pass cluster.Fits and every Filter are scored by each Scorer, each
// scorer's scores are normalised over the feasible nodes when it implements
// Normalizer, the weighted sum is taken, and the highest total wins. Ties go
// to the node with the lowest rank (node ID unless SetRank was called). The
// GPUs inside the chosen node are picked by the highest-weighted scorer that
// implements GPUSelector, else by cluster.BestFitGPUs.
type Placer struct {
	filters  []Filter
	scorers  []Weighted
	selector GPUSelector
	rank     []int
	gate     *PowerGate
	// held is set when the last Place found nodes that fit but none
	// within the power limit.
	held bool
	// domainWeight weighs the domain-headroom term (SetDomainWeight; 0:
	// off).
	domainWeight int64
	// incs is the task's power increase on each node of idx (with a gate).
	incs []hw.Watts
	// domScore is the domain-headroom score of each scored node, in the
	// order of idx (explanations).
	domScore []int64
	// domBind is, per node index, the domain that refused the last scored
	// task there (-1: none; nil without domains), for explanations.
	domBind []int

	cache [][]cacheEntry // [class][node]: one class's entries are contiguous
	// reads is what the scorers and filters read of a task; cached is set
	// when every one of them declares it (TaskReader). classes numbers
	// the tasks' keys (taskKey) in first-seen order: a task's class
	// indexes cache and the index.
	reads   TaskFields
	cached  bool
	classes map[taskKey]int
	// scratch
	idx    []int
	raw    [][]int64
	total  []int64
	hits   int64
	misses int64

	// The index (index.go): canIndex when every scorer's normalisation
	// can be computed from extremes (normed[i] with equal[i] the score of
	// equal nodes for MinMaxNormalizer scorers) and the scores fit a cache
	// entry; ix is built on the first indexed Place; rekeys counts the
	// passes made after an extreme moved.
	canIndex bool
	// stateOnly: no filters and every scorer a StateScorer.
	stateOnly bool
	normed    []bool
	equal     []int64
	ix        *placeIndex
	rekeys    int64

	// explain, when set, is filled by every successful Place (nil: no
	// explanation and no work for one).
	explain *Explanation
	// rawCopy holds the scores before normalisation (explain only).
	rawCopy [][]int64
	// only, when set, limits score to the nodes it marks (a gang's node
	// group, gang.go).
	only []bool
}

// NewPlacer builds a Placer. Weights must be positive.
func NewPlacer(filters []Filter, scorers []Weighted) (*Placer, error) {
	if len(scorers) == 0 {
		return nil, fmt.Errorf("placer needs at least one scorer")
	}
	p := &Placer{filters: filters, scorers: scorers, raw: make([][]int64, len(scorers)),
		canIndex: len(scorers) <= maxCachedScorers, stateOnly: len(filters) == 0, normed: make([]bool, len(scorers)), equal: make([]int64, len(scorers))}
	p.reads, p.cached = declaredReads(filters, scorers)
	p.cached = p.cached && len(scorers) <= maxCachedScorers
	var bestW int64 = -1
	for i, s := range scorers {
		if s.Weight <= 0 {
			return nil, fmt.Errorf("scorer %s: weight %d must be positive", s.Name, s.Weight)
		}
		if sel, ok := s.Scorer.(GPUSelector); ok && s.Weight > bestW {
			p.selector, bestW = sel, s.Weight
		}
		if _, ok := s.Scorer.(StateScorer); !ok {
			p.stateOnly = false
		}
		if mm, ok := s.Scorer.(MinMaxNormalizer); ok {
			p.normed[i], p.equal[i] = true, mm.NormalizeEqual()
		} else if _, ok := s.Scorer.(Normalizer); ok {
			p.canIndex = false // a normalisation the index cannot compute
		}
	}
	return p, nil
}

// SetGate makes the Placer filter out nodes where a task would take the
// cluster's estimated power over the gate's limit (nil: no gate), as
// kube-scheduler's PowerBudget plugin filters them.
func (p *Placer) SetGate(g *PowerGate) { p.gate = g }

// SetDomainWeight adds the domain-headroom term to every total, with
// weight w (0: off, the default): the term of a node is DomainScore, its
// power domains' least relative headroom once the task runs there. It
// acts only with a gate that has domains; scorers are unchanged.
func (p *Placer) SetDomainWeight(w int64) { p.domainWeight = w }

// DomainScore is the domain-headroom score of placing a task that adds
// inc on node: MaxScore times the least, over the domains on the node's
// path, of the headroom left after it as a share of the domain's limit,
// (limit - load - inc) / limit, clamped to 0..1 and rounded. A node
// whose domains stay cool scores near MaxScore; one that fills its rack
// to the limit scores 0. It is not min-max normalised over the nodes: a
// small difference between racks that are all cool stays small.
func DomainScore(l *power.DomainLoad, d *power.Domains, node int, inc hw.Watts) int64 {
	frac := 1.0
	for _, i := range d.Path(node) {
		lim := d.List[i].Limit
		frac = min(frac, float64(lim-l.W[i]-inc)/float64(lim))
	}
	frac = max(0, frac)
	return int64(math.Round(frac * float64(MaxScore)))
}

// Gate is the Placer's power gate (nil when none).
func (p *Placer) Gate() *PowerGate { return p.gate }

// Held reports whether the last Place found no node because of the power
// limit: the task fits somewhere, but nowhere within the limit.
func (p *Placer) Held() bool { return p.held }

// SetRank sets the tie-break rank of every node (lower wins), indexed by
// node ID; nil restores ties by node ID. The engines set cluster.TieRank,
// which follows the nodes' names, not their order.
func (p *Placer) SetRank(rank []int) {
	p.rank = rank
	p.ix = nil // its heaps are ordered by rank
}

// Notes are the notes of the Placer's scorers that implement Noter, each
// prefixed with the scorer's name, in scorer order.
func (p *Placer) Notes() []string {
	var out []string
	for _, s := range p.scorers {
		if nt, ok := s.Scorer.(Noter); ok {
			for _, n := range nt.Notes() {
				out = append(out, s.Name+": "+n)
			}
		}
	}
	return out
}

// CacheStats reports score-cache hits (a node's cached scores reused) and
// misses (a node scored).
func (p *Placer) CacheStats() (hits, misses int64) { return p.hits, p.misses }

// Rekeys is the number of times the index recomputed a class's totals
// because an extreme of a normalised score moved (only weighted mixes with
// a normalising scorer do).
func (p *Placer) Rekeys() int64 { return p.rekeys }

func (p *Placer) evaluate(t *job.Task, n *cluster.Node, e *cacheEntry) {
	e.feasible = false
	if ok, _ := cluster.Fits(&t.Demand, n); !ok {
		return
	}
	for _, f := range p.filters {
		if ok, _ := f.Feasible(t, n); !ok {
			return
		}
	}
	e.feasible = true
	for i, s := range p.scorers {
		if i < maxCachedScorers {
			e.raw[i] = s.Scorer.Score(t, n)
		}
	}
	if p.gate != nil {
		e.inc = p.gate.Increase(&t.Demand, n, p.SelectGPUs(t, n))
	}
}

// declaredReads is the union of what filters and scorers read of a task,
// and whether every one of them declares it (TaskReader).
func declaredReads(filters []Filter, scorers []Weighted) (TaskFields, bool) {
	var reads TaskFields
	all := true
	add := func(v any) {
		if r, ok := v.(TaskReader); ok {
			reads |= r.TaskReads()
		} else {
			all = false
		}
	}
	for _, f := range filters {
		add(f)
	}
	for _, s := range scorers {
		add(s.Scorer)
	}
	return reads, all
}

// maxClasses bounds the task classes a Placer caches (each holds a cache
// entry per node): a scorer that declares ReadsWork makes nearly every
// task a class of its own, and the tasks past the bound are scored afresh.
const maxClasses = 4096

// taskKey is what the Placer's scorers and filters read of a task: the
// fields they did not declare are left zero, so tasks that differ only
// there share a key.
type taskKey struct {
	cpu, mem int64
	gpus     int
	milli    int64
	spec     string
	kind     job.Kind
	ref      string
	work     float64
	// mig is the MIG profile, always part of the key: where a MIG task
	// fits (cluster.Fits) differs from a share of the same milli-GPU.
	mig string
}

// class is t's cache class: tasks equal in every field the scorers and
// filters read share one; -1 when the Placer is not cached.
func (p *Placer) class(t *job.Task) int {
	if !p.cached {
		return -1
	}
	k := taskKey{mig: t.MIGProfile}
	if p.reads&ReadsDemand != 0 {
		k.cpu, k.mem, k.gpus, k.milli = t.CPUMilli, t.MemMiB, t.GPUCount, t.GPUMilli
		switch len(t.GPUSpec) {
		case 0:
		case 1:
			k.spec = t.GPUSpec[0]
		default:
			k.spec = t.SpecString()
		}
	}
	if p.reads&ReadsKind != 0 {
		k.kind = t.Kind
	}
	if p.reads&ReadsRefGPU != 0 {
		k.ref = t.RefGPU
	}
	if p.reads&ReadsWork != 0 {
		k.work = t.Work
	}
	c, ok := p.classes[k]
	if !ok {
		if len(p.classes) >= maxClasses {
			return -1 // scored afresh: the same decisions, without a cache row
		}
		if p.classes == nil {
			p.classes = map[taskKey]int{}
		}
		c = len(p.classes)
		p.classes[k] = c
	}
	return c
}

// Place chooses a node and GPUs for t, or reports that no node is feasible.
func (p *Placer) Place(t *job.Task, c *cluster.Cluster) (Decision, bool) {
	cls := p.class(t)
	if p.indexable(cls) {
		return p.placeIndexed(t, cls, c)
	}
	if !p.score(t, cls, c) {
		return Decision{}, false
	}
	best := 0
	for k := 1; k < len(p.idx); k++ {
		if p.total[k] > p.total[best] || p.total[k] == p.total[best] && p.less(p.idx[k], p.idx[best]) {
			best = k
		}
	}
	n := c.Nodes[p.idx[best]]
	if p.explain != nil {
		p.fillExplanation(t, c, best)
	}
	d := p.decision(t, n, p.total[best])
	if p.explain != nil {
		p.explain.MIG = nil
		if t.MIG() && len(d.GPUs) == 1 {
			p.explain.MIG = &ExplainMIG{GPU: d.GPUs[0], Slot: cluster.MIGSlot{Profile: t.MIGProfile, Start: d.MIGStart}}
		}
	}
	return d, true
}

// decision is the Decision for t on n with total score: the GPUs and, for
// a MIG task, the instance's start.
func (p *Placer) decision(t *job.Task, n *cluster.Node, score int64) Decision {
	if t.MIG() {
		if g, s, ok := p.SelectMIG(t, n); ok {
			return Decision{Node: n.ID, GPUs: []int{g}, Score: score, MIGStart: s}
		}
		return Decision{Node: n.ID, Score: score}
	}
	return Decision{Node: n.ID, GPUs: p.SelectGPUs(t, n), Score: score}
}

// Top returns every feasible node with the highest total score for t, in
// node order, and that score; ok is false when no node is feasible. Place
// picks the first of them by rank; kube-scheduler picks one at random.
func (p *Placer) Top(t *job.Task, c *cluster.Cluster) (nodes []cluster.NodeID, score int64, ok bool) {
	if !p.score(t, p.class(t), c) {
		return nil, 0, false
	}
	score = p.total[0]
	for _, v := range p.total {
		score = max(score, v)
	}
	for k, v := range p.total {
		if v == score {
			nodes = append(nodes, c.Nodes[p.idx[k]].ID)
		}
	}
	return nodes, score, true
}

// SelectGPUs picks t's GPUs on n the way Place does: with the
// highest-weighted scorer that implements GPUSelector, else
// cluster.BestFitGPUs. It returns nil for a task without GPUs.
//
// For a MIG task it is the GPU of SelectMIG's instance.
func (p *Placer) SelectGPUs(t *job.Task, n *cluster.Node) []int {
	if t.GPUCount == 0 {
		return nil
	}
	if t.MIG() {
		g, _, ok := p.SelectMIG(t, n)
		if !ok {
			return nil
		}
		return []int{g}
	}
	if p.selector != nil {
		return p.selector.SelectGPUs(t, n)
	}
	return cluster.BestFitGPUs(&t.Demand, n)
}

// SelectMIG picks the MIG instance of a MIG task t on n (a node in MIG
// mode): with the highest-weighted GPU selector when it implements
// MIGSelector, else cluster.FirstMIG (the lowest GPU and start with room).
// ok is false when n has no room for the instance.
func (p *Placer) SelectMIG(t *job.Task, n *cluster.Node) (gpu, start int, ok bool) {
	if ms, is := p.selector.(MIGSelector); is {
		return ms.SelectMIG(t, n)
	}
	return cluster.FirstMIG(&t.Demand, n)
}

// score fills p.idx with the feasible nodes and p.total with their
// weighted normalised scores, using the cache of class cls (-1: none);
// false when no node is feasible (p.held says whether nodes that fit were
// all over the power limit).
func (p *Placer) score(t *job.Task, cls int, c *cluster.Cluster) bool {
	p.held = false
	var clusterW hw.Watts
	var load *power.DomainLoad
	if p.gate != nil {
		clusterW = p.gate.ClusterPower(c.Nodes)
		if load = p.gate.DomainLoad(c.Nodes); load != nil {
			p.domBind = slices.Grow(p.domBind[:0], len(c.Nodes))[:len(c.Nodes)]
			for i := range p.domBind {
				p.domBind[i] = -1
			}
		}
	}
	fit := false
	cacheable := cls >= 0
	var row []cacheEntry
	if cacheable {
		if cls >= len(p.cache) {
			p.cache = append(p.cache, make([][]cacheEntry, cls+1-len(p.cache))...)
		}
		if len(p.cache[cls]) != len(c.Nodes) {
			p.cache[cls] = make([]cacheEntry, len(c.Nodes))
		}
		row = p.cache[cls]
	}
	p.idx, p.incs = p.idx[:0], p.incs[:0]
	for i := range p.raw {
		p.raw[i] = p.raw[i][:0]
	}
	var e cacheEntry
	for ni, n := range c.Nodes {
		if p.only != nil && !p.only[ni] {
			continue
		}
		ep := &e
		if cacheable {
			ep = &row[ni]
			if ep.ver == n.Version+1 {
				p.hits++
			} else {
				p.misses++
				p.evaluate(t, n, ep)
				ep.ver = n.Version + 1
			}
		} else {
			p.evaluate(t, n, ep)
		}
		if !ep.feasible {
			continue
		}
		fit = true
		if p.gate != nil {
			if ok, _ := p.gate.Admit(clusterW, ep.inc); !ok {
				continue
			}
			if b, ok := load.Fits(ni, ep.inc); !ok {
				p.domBind[ni] = b
				continue
			}
		}
		p.idx = append(p.idx, ni)
		p.incs = append(p.incs, ep.inc)
		for i, s := range p.scorers {
			v := int64(0)
			if cacheable {
				v = ep.raw[i]
			} else {
				v = s.Scorer.Score(t, n)
			}
			p.raw[i] = append(p.raw[i], v)
		}
	}
	if len(p.idx) == 0 {
		p.held = fit && p.gate != nil
		return false
	}
	p.total = append(p.total[:0], make([]int64, len(p.idx))...)
	if p.explain != nil {
		for i := range p.raw {
			p.rawCopy[i] = append(p.rawCopy[i][:0], p.raw[i]...)
		}
	}
	for i, s := range p.scorers {
		if nz, ok := s.Scorer.(Normalizer); ok {
			nz.Normalize(p.raw[i])
		}
		for k, v := range p.raw[i] {
			p.total[k] += s.Weight * v
		}
	}
	p.domScore = p.domScore[:0]
	if p.domainWeight > 0 && load != nil {
		for k, ni := range p.idx {
			v := DomainScore(load, p.gate.Domains, ni, p.incs[k])
			p.domScore = append(p.domScore, v)
			p.total[k] += p.domainWeight * v
		}
	}
	return true
}

func (p *Placer) less(a, b int) bool {
	if p.rank == nil {
		return a < b
	}
	return p.rank[a] < p.rank[b]
}
