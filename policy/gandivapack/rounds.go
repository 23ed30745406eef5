package gandivapack

import (
	"slices"

	"github.com/wattsched/wattsched/policy"
)

// assignment is a job's combination in Gavel's GandivaPolicy and its
// partner (-1: alone).
type assignment struct {
	c     policy.Combo
	other int
}

var _ policy.RoundAllocator = (*Policy)(nil)

// RoundRules implements policy.RoundAllocator: pairs tracked; a
// combination without a share may fill GPUs left over in a round.
func (*Policy) RoundRules() policy.RoundRules { return policy.RoundRules{Pairs: true} }

// AllocateRound implements policy.RoundAllocator as Gavel's GandivaPolicy
// (policies/gandiva.py): combinations whose normalized throughput (sum of
// both jobs' rates over their isolated rates) is below MinNormalized, and
// jobs alone, are dropped; if every job fits on the GPUs each job gets an
// equal share; otherwise the jobs not in a kept pair are paired at random
// with jobs of the same GPU count (Python's random.sample, seeded from the
// run's seed as Gavel seeds it), the rest alone, and every combination
// gets an equal share of the GPUs, capped at 1.
func (p *Policy) AllocateRound(st *policy.RoundState) []policy.RoundShare {
	if p.assigned == nil {
		p.assigned = map[int]assignment{}
		p.py = newPyRand(p.seed)
	}
	scale := map[int]int{}
	requested := 0
	for _, j := range st.Jobs {
		scale[j.ID] = j.Key.Scale
		requested += j.Key.Scale
	}
	var drop []int
	for id, a := range p.assigned {
		_, alive := scale[id]
		_, otherAlive := scale[a.other]
		if !alive || a.other >= 0 && !otherAlive || p.normalized(st, a.c) < p.a.MinNormalized {
			drop = append(drop, id, a.other)
		}
	}
	for _, id := range drop {
		delete(p.assigned, id)
	}
	var combos []policy.Combo
	if requested <= st.GPUs {
		for _, j := range st.Jobs {
			combos = append(combos, policy.Alone(j.ID))
		}
	} else {
		var free []int
		for _, j := range st.Jobs {
			if _, ok := p.assigned[j.ID]; !ok {
				free = append(free, j.ID)
			}
		}
		for i, n := 0, len(free); len(free) > 1 && i < n; i++ {
			a, b := p.py.sample2(free)
			if scale[a] != scale[b] {
				continue
			}
			free = slices.DeleteFunc(free, func(x int) bool { return x == a || x == b })
			c := policy.PairOf(a, b)
			p.assigned[a], p.assigned[b] = assignment{c, b}, assignment{c, a}
		}
		for _, id := range free {
			p.assigned[id] = assignment{policy.Alone(id), -1}
		}
		seen := map[policy.Combo]bool{}
		for _, j := range st.Jobs {
			if a, ok := p.assigned[j.ID]; ok && !seen[a.c] {
				seen[a.c] = true
				combos = append(combos, a.c)
			}
		}
	}
	out := make([]policy.RoundShare, len(combos))
	m := float64(len(combos))
	for i, c := range combos {
		x := float64(st.GPUs) / m / float64(scale[c.A])
		out[i] = policy.RoundShare{Combo: c, Frac: x / max(x, 1)}
	}
	return out
}

// normalized is Gavel's normalized packed throughput of c (0 alone or if
// either job cannot run in the pair).
func (p *Policy) normalized(st *policy.RoundState, c policy.Combo) float64 {
	if !c.IsPair() {
		return 0
	}
	ra, rb := st.Rates(c)
	if !(ra > 0) || !(rb > 0) {
		return 0
	}
	return ra/st.IsoRate(c.A) + rb/st.IsoRate(c.B)
}
