package planpower

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/power"
)

// Plan is the planner's answer: every point it replayed, and per domain
// (or for the cluster as a whole) the most nodes that fit at the risk.
type Plan struct {
	Options Options
	// Add is the shape of the node added.
	Add     cluster.NodeSpec
	Domains []power.Domain
	// Leaf marks the innermost domains (those nodes name directly).
	Leaf []bool
	// Points are the replayed enlargements, in order of nodes added; the
	// first is the current cluster.
	Points []*Point
	// Answers are per domain (per-domain mode; nil in overall mode).
	Answers []Answer
	// Overall is the answer in overall mode (nil otherwise).
	Overall *Overall
}

// Answer is one domain's answer in per-domain mode, in nodes added to
// every innermost domain at once (the search's step k; for a domain above
// the innermost level, k per innermost domain under it). -1: the domain
// is over the risk with the current nodes.
type Answer struct {
	// Fits is the largest k such that the upper end of the 95%
	// confidence interval of the domain's exceedance (pooled over hours,
	// seeds and draws; DomainPoint.Upper) is at most the risk at k and at
	// every smaller k.
	Fits int
	// Catalog is Fits at the catalog's figures (draw 0) only
	// (DomainPoint.CatalogUpper); SeedLo and SeedHi the range over the
	// seeds of the step where each seed's own exceedance first passes the
	// risk, less one; DrawLo and DrawHi the same over the draws (each
	// pooled over the seeds).
	Catalog, SeedLo, SeedHi, DrawLo, DrawHi int
	// Path is, for an innermost domain, the least Fits of it and the
	// domains above it: what its feed and every feed above can carry.
	Path int
	// Censored is set when no step of the search went over the risk:
	// Fits is the search's bound (--max-add), a lower bound.
	Censored bool
}

// Overall is the answer in overall mode.
type Overall struct {
	// Fits is the most nodes added to the cluster (spread over Order) for
	// which every domain within the risk with the current nodes stays
	// within it; Censored when the bound was reached without a miss.
	Fits     int
	Censored bool
	// Order is the innermost domains the nodes go to, round robin, most
	// headroom (limit - p99 of the hourly highest power) first, ties by
	// name; domains over the risk already, or under one that is, take none.
	Order []string
	// Over are the domains over the risk with the current nodes.
	Over []string
}

// Run searches: per domain (every innermost domain takes k = 0, 1, ...
// nodes until every domain is over the risk or k reaches MaxAdd) or, with
// Overall, the number of nodes for the whole cluster (doubling, then
// bisection between the last that fits and the first that does not; each
// answer is a replayed point, not an interpolation).
func (p *Planner) Run() (*Plan, error) {
	pl := &Plan{Options: p.opt, Add: p.add, Domains: p.topo.Domains, Leaf: make([]bool, len(p.limits))}
	for _, l := range p.leaves {
		pl.Leaf[l] = true
	}
	if p.opt.Overall {
		return pl, p.overall(pl)
	}
	for k := 0; k <= p.opt.MaxAdd; k++ {
		added := make([]int, len(p.limits))
		for _, l := range p.leaves {
			added[l] = k
		}
		p.env.Notef("plan power: %d %s node(s) added to each of %d innermost domains: %d replays", k, p.add.GPUModel, len(p.leaves), p.replays())
		pt, err := p.Evaluate(added, fmt.Sprintf("+%d per domain", k))
		if err != nil {
			return nil, err
		}
		pt.PerLeaf = k
		pl.Points = append(pl.Points, pt)
		if p.allOver(pl.Points) {
			break
		}
	}
	pl.Answers = p.answers(pl.Points)
	return pl, nil
}

func (p *Planner) replays() int {
	n := p.opt.Seeds * p.opt.Draws
	if p.opt.Cap {
		n += p.opt.Seeds
	}
	return n
}

// allOver reports whether every domain's exceedance (its estimate, not
// only its upper bound) has passed the risk at some point.
func (p *Planner) allOver(pts []*Point) bool {
	for d := range p.limits {
		if !slices.ContainsFunc(pts, func(pt *Point) bool { return pt.Domains[d].Exceed > p.opt.Risk }) {
			return false
		}
	}
	return true
}

// fits is the last step before ex first passes the risk (-1 at once), and
// whether none did.
func (p *Planner) fits(pts []*Point, ex func(pt *Point) float64) (int, bool) {
	for i, pt := range pts {
		if ex(pt) > p.opt.Risk {
			return i - 1, false
		}
	}
	return len(pts) - 1, true
}

func (p *Planner) answers(pts []*Point) []Answer {
	out := make([]Answer, len(p.limits))
	for d := range out {
		a := &out[d]
		a.Fits, a.Censored = p.fits(pts, func(pt *Point) float64 { return pt.Domains[d].Upper })
		a.Catalog, _ = p.fits(pts, func(pt *Point) float64 { return pt.Domains[d].CatalogUpper })
		a.SeedLo, a.SeedHi = rangeOf(p.opt.Seeds, func(s int) int {
			k, _ := p.fits(pts, func(pt *Point) float64 { return pt.Domains[d].Seeds[s] })
			return k
		})
		a.DrawLo, a.DrawHi = rangeOf(p.opt.Draws, func(s int) int {
			k, _ := p.fits(pts, func(pt *Point) float64 { return pt.Domains[d].Draws[s] })
			return k
		})
	}
	parent := p.parents()
	for d := range out {
		out[d].Path = out[d].Fits
		for a := parent[d]; a >= 0; a = parent[a] {
			out[d].Path = min(out[d].Path, out[a].Fits)
		}
	}
	return out
}

func rangeOf(n int, f func(i int) int) (lo, hi int) {
	for i := range n {
		v := f(i)
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

// parents is each domain's parent index (-1 at the top).
func (p *Planner) parents() []int {
	idx := map[string]int{}
	for i, d := range p.topo.Domains {
		idx[d.Name] = i
	}
	out := make([]int, len(p.topo.Domains))
	for i, d := range p.topo.Domains {
		out[i] = -1
		if d.Parent != "" {
			out[i] = idx[d.Parent]
		}
	}
	return out
}

// overall searches the number of nodes for the whole cluster.
func (p *Planner) overall(pl *Plan) error {
	p.env.Notef("plan power: the current cluster: %d replays", p.replays())
	base, err := p.Evaluate(make([]int, len(p.limits)), "+0")
	if err != nil {
		return err
	}
	pl.Points = append(pl.Points, base)
	ov := &Overall{}
	over := make([]bool, len(p.limits))
	for d, dp := range base.Domains {
		if dp.Upper > p.opt.Risk {
			over[d] = true
			ov.Over = append(ov.Over, p.topo.Domains[d].Name)
		}
	}
	parent := p.parents()
	var order []int
	for _, l := range p.leaves {
		ok := true
		for a := l; a >= 0; a = parent[a] {
			ok = ok && !over[a]
		}
		if ok {
			order = append(order, l)
		}
	}
	head := func(d int) float64 { return float64(p.limits[d] - base.Domains[d].P99) }
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(-cmp.Compare(head(a), head(b)), cmp.Compare(p.topo.Domains[a].Name, p.topo.Domains[b].Name))
	})
	for _, d := range order {
		ov.Order = append(ov.Order, p.topo.Domains[d].Name)
	}
	pl.Overall = ov
	if len(order) == 0 {
		return nil
	}
	spread := func(n int) []int {
		added := make([]int, len(p.limits))
		for i, d := range order {
			added[d] = n / len(order)
			if i < n%len(order) {
				added[d]++
			}
		}
		return added
	}
	ok := func(pt *Point) bool {
		for d, dp := range pt.Domains {
			if !over[d] && dp.Upper > p.opt.Risk {
				return false
			}
		}
		return true
	}
	bound := p.opt.MaxAdd * len(order)
	eval := func(n int) (bool, error) {
		p.env.Notef("plan power: %d %s node(s) added to the cluster: %d replays", n, p.add.GPUModel, p.replays())
		pt, err := p.Evaluate(spread(n), fmt.Sprintf("+%d overall", n))
		if err != nil {
			return false, err
		}
		pl.Points = append(pl.Points, pt)
		return ok(pt), nil
	}
	good, bad := 0, -1
	for n := 1; ; n *= 2 {
		n = min(n, bound)
		fit, err := eval(n)
		if err != nil {
			return err
		}
		if !fit {
			bad = n
			break
		}
		good = n
		if n == bound {
			break
		}
	}
	for bad > good+1 {
		mid := (good + bad) / 2
		fit, err := eval(mid)
		if err != nil {
			return err
		}
		if fit {
			good = mid
		} else {
			bad = mid
		}
	}
	ov.Fits, ov.Censored = good, bad < 0
	slices.SortStableFunc(pl.Points, func(a, b *Point) int { return cmp.Compare(a.Total, b.Total) })
	return nil
}
