// Package gandivapack is Gandiva's packing as Gavel implements it and the
// EaCO paper ran it (Section 6.2): while the jobs fit, each runs alone;
// when they do not, waiting jobs are paired at random with running
// unshared jobs of the same GPU count, and greedy introspection measures
// each new pair and undoes it when its normalized throughput (sum of both
// jobs' rates relative to alone) is below 1. This is the co-location
// Gandiva; policy/gandiva is the elastic one (PowerFlow's baseline). See
// docs/policies/gandiva_packing.md.
package gandivapack

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace/gavel"
)

// Name is the policy's registry name.
const Name = "gandiva_packing"

// Args configure the policy.
type Args struct {
	// MinNormalized is the introspection bound (Gavel: 1.0).
	MinNormalized float64 `yaml:"min_normalized"`
	// SleepIdle: idle nodes sleep (default: no, as in Gavel).
	policy.SleepArg `yaml:",inline"`
	// GavelSeed seeds the random pairing under timing gavel-rounds as
	// Gavel's --seed does (its Python random.Random(seed)); unset: the
	// run's seed.
	GavelSeed *uint64 `yaml:"gavel_seed"`
}

// Default returns Gavel's bound.
func (Args) Default() Args { return Args{MinNormalized: 1} }

// Validate checks the bound.
func (a Args) Validate() error {
	if !(a.MinNormalized >= 0 && a.MinNormalized <= 2) {
		return fmt.Errorf("min_normalized: %v, want in [0, 2]", a.MinNormalized)
	}
	return nil
}

// Policy is Gandiva's packing for one run.
type Policy struct {
	policy.SleepArg
	a       Args
	h       *coloc.History
	rng     *rand.Rand
	pending map[int]int     // set -> job joined, under introspection
	bad     map[[2]int]bool // (job, set) pairs introspection undid
	// Round-based timing: Gavel's assigned combinations and its Python
	// random source.
	seed     uint64
	assigned map[int]assignment
	py       *pyRand
}

var _ policy.ColocScheduler = (*Policy)(nil)

// New builds the policy, seeded from the deps.
func New(a Args, d policy.ColocDeps) (*Policy, error) {
	if d.History == nil {
		return nil, fmt.Errorf("gandiva_packing needs a history H")
	}
	return &Policy{SleepArg: a.SleepArg, a: a, h: d.History(), rng: rand.New(rand.NewPCG(d.Seed, 0x9a9d1fa)), seed: pySeed(a, d), pending: map[int]int{}, bad: map[[2]int]bool{}}, nil
}

// ScheduleColoc implements policy.ColocScheduler.
func (p *Policy) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	var acts []policy.ColocAction
	for _, o := range st.Observed {
		j, ok := p.pending[o.Set]
		if !ok {
			continue
		}
		delete(p.pending, o.Set)
		var sum float64
		for _, f := range o.Factors {
			sum += f
		}
		if len(o.Factors) == 2 && sum < p.a.MinNormalized && slices.Contains(o.Jobs, j) {
			p.bad[[2]int{j, o.Set}] = true
			acts = append(acts, policy.ColocAction{Kind: policy.ColocUndo, Job: j})
		}
	}
	for set := range p.pending {
		if st.Set(set) == nil {
			delete(p.pending, set)
		}
	}
	start, wait, _ := policy.StartFIFO(st)
	acts = append(acts, start...)
	if len(wait) == 0 {
		return policy.ColocDecision{Actions: acts}
	}
	taken := map[int]bool{}
	for _, a := range acts {
		if a.Kind == policy.ColocUndo {
			taken[st.View(a.Job).Set] = true
		}
	}
	for _, v := range wait {
		var opts []int
		for _, s := range st.Sets {
			if len(s.Jobs) == 1 && !taken[s.ID] && len(s.GPUs) == v.Job.Key.Scale && !p.bad[[2]int{v.Job.ID, s.ID}] && policy.MemFits(st, s, v) && p.feasible(st.View(s.Jobs[0]).Job.Key, v.Job.Key) {
				opts = append(opts, s.ID)
			}
		}
		if len(opts) == 0 {
			continue
		}
		s := opts[p.rng.IntN(len(opts))]
		taken[s] = true
		p.pending[s] = v.Job.ID
		acts = append(acts, policy.ColocAction{Kind: policy.ColocJoin, Job: v.Job.ID, Set: s, Observe: true})
	}
	return policy.ColocDecision{Actions: acts}
}

// feasible excludes pairs known not to run together (Gavel records a
// throughput of 0 for them).
func (p *Policy) feasible(a, b gavel.Key) bool {
	f := p.h.Predict([]gavel.Key{a, b})
	return f[0] > 0 && f[1] > 0
}

// pySeed is the seed of the round-based pairing: GavelSeed if set, else
// the run's.
func pySeed(a Args, d policy.ColocDeps) uint64 {
	if a.GavelSeed != nil {
		return *a.GavelSeed
	}
	return d.Seed
}
