package policy

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// Explanation says why a Placer chose a node for a task: the scores of the
// chosen node and of the next best feasible nodes, per scorer before and
// after normalisation, and how many nodes each filter reason ruled out.
// Place fills it in place (its slices are reused): read it before the next
// Place.
type Explanation struct {
	// Scorers are the Placer's scorers with their weights, in its order;
	// NodeScore.Raw and NodeScore.Score follow this order.
	Scorers []Weighted
	// Nodes are the chosen node first, then up to Top runners-up in the
	// order Place ranks them (highest total, then the tie-break rank),
	// then the best node of each GPU model that none of those has, by
	// rank: so that "why this model and not that one" has its answer.
	Nodes []NodeScore
	// Feasible is the number of nodes that passed every filter (and the
	// power gate): the nodes whose scores were normalised together.
	Feasible int
	// Filtered counts the nodes ruled out per reason, most first (ties by
	// reason).
	Filtered []FilterCount
	// Top bounds the runners-up (0: none; SetExplain makes it 3 when unset).
	Top int
	// MIG is the MIG instance chosen on the chosen node, for a task
	// asking for one (nil otherwise).
	MIG *ExplainMIG
}

// ExplainMIG is the MIG instance a task was given: a GPU of the node and
// the instance's profile and start memory slice.
type ExplainMIG struct {
	GPU  int
	Slot cluster.MIGSlot
}

// String is gpu<GPU>:<profile>@<start>.
func (m ExplainMIG) String() string { return fmt.Sprintf("gpu%d:%s", m.GPU, m.Slot) }

// NodeScore is one node's scores for a task.
type NodeScore struct {
	Node cluster.NodeID
	// Rank is the node's place among the feasible nodes in Place's order
	// (1: chosen).
	Rank int
	// Raw are the scorers' scores before normalisation, Score after it
	// (0..MaxScore for normalising scorers; Raw for the others).
	Raw, Score []int64
	// Total is the weighted sum: the sum over scorers of Weight x Score.
	Total int64
}

// FilterCount is how many nodes one reason ruled out.
type FilterCount struct {
	Reason string
	Nodes  int
}

// GateReason is the reason Explanation gives for nodes where a task fits
// but would take the cluster over the power limit.
const GateReason = "power budget"

// DefaultExplainTop is the runners-up an Explanation keeps when Top is 0
// at SetExplain.
const DefaultExplainTop = 3

// SetExplain makes every successful Place fill x (nil: stop explaining).
// Explaining never changes a decision: it reads the scores Place computed,
// and re-asks cluster.Fits and the filters (never the scorers) for the
// reasons of the nodes they ruled out.
func (p *Placer) SetExplain(x *Explanation) {
	p.explain = x
	if x == nil {
		return
	}
	if x.Top == 0 {
		x.Top = DefaultExplainTop
	}
	x.Scorers = p.scorers
	if p.rawCopy == nil {
		p.rawCopy = make([][]int64, len(p.scorers))
	}
}

// fillExplanation fills p.explain after score, best being the index in
// p.idx of the chosen node.
func (p *Placer) fillExplanation(t *job.Task, c *cluster.Cluster, best int) {
	x := p.explain
	// The runners-up: the Top best of the others, in Place's order.
	order := []int{best}
	for k := range p.idx {
		if k == best {
			continue
		}
		pos := len(order)
		for pos > 1 && p.before(k, order[pos-1]) {
			pos--
		}
		if pos <= x.Top {
			order = slices.Insert(order, pos, k)
			if len(order) > x.Top+1 {
				order = order[:x.Top+1]
			}
		}
	}
	// The best node of each GPU model the nodes above leave out.
	top := len(order)
	for k := range p.idx {
		m := c.Nodes[p.idx[k]].GPUModel
		j := slices.IndexFunc(order, func(o int) bool { return c.Nodes[p.idx[o]].GPUModel == m })
		switch {
		case j < 0:
			order = append(order, k)
		case j >= top && p.before(k, order[j]):
			order[j] = k
		}
	}
	extra := order[top:]
	slices.SortFunc(extra, func(a, b int) int { // distinct nodes: never equal
		if p.before(a, b) {
			return -1
		}
		return 1
	})
	ranks := make([]int, len(order))
	for j, k := range order {
		ranks[j] = j + 1
		if j >= top { // its place among all the feasible nodes
			ranks[j] = 1
			for o := range p.idx {
				if p.before(o, k) {
					ranks[j]++
				}
			}
		}
	}
	x.Nodes = x.Nodes[:0]
	for j, k := range order {
		ns := NodeScore{Node: c.Nodes[p.idx[k]].ID, Rank: ranks[j], Total: p.total[k]}
		for i := range p.scorers {
			ns.Raw = append(ns.Raw, p.rawCopy[i][k])
			ns.Score = append(ns.Score, p.raw[i][k])
		}
		x.Nodes = append(x.Nodes, ns)
	}
	x.Feasible = len(p.idx)
	x.Filtered = x.Filtered[:0]
	next := 0 // p.idx is in node order
	for ni, n := range c.Nodes {
		if next < len(p.idx) && p.idx[next] == ni {
			next++
			continue
		}
		x.Filtered = addReason(x.Filtered, p.reason(t, n))
	}
	slices.SortFunc(x.Filtered, func(a, b FilterCount) int {
		return cmp.Or(cmp.Compare(b.Nodes, a.Nodes), cmp.Compare(a.Reason, b.Reason))
	})
}

// before says whether feasible node k ranks before feasible node j.
func (p *Placer) before(k, j int) bool {
	if p.total[k] != p.total[j] {
		return p.total[k] > p.total[j]
	}
	return p.less(p.idx[k], p.idx[j])
}

// reason is why n was not among the scored nodes: cluster.Fits's reason,
// a filter's, the power domain that refused it (PowerGate.DomainReason),
// or GateReason.
func (p *Placer) reason(t *job.Task, n *cluster.Node) string {
	if ok, why := cluster.Fits(&t.Demand, n); !ok {
		return why
	}
	for _, f := range p.filters {
		if ok, why := f.Feasible(t, n); !ok {
			return why
		}
	}
	if p.domBind != nil && p.domBind[n.ID] >= 0 {
		return p.gate.DomainReason(p.domBind[n.ID])
	}
	return GateReason
}

func addReason(fc []FilterCount, reason string) []FilterCount {
	for i := range fc {
		if fc[i].Reason == reason {
			fc[i].Nodes++
			return fc
		}
	}
	return append(fc, FilterCount{Reason: reason, Nodes: 1})
}
