// Package fifopacked is Gavel's FIFO with packing as the EaCO paper ran it
// (Section 6.2, "FIFO_packed"): FIFO while the head of the queue fits on
// free GPUs; when it does not, the head is packed with the running
// unshared job of the same GPU count with which the pair's normalized
// throughput (sum of both jobs' rates relative to alone) is highest, if
// above a threshold; packing stops at the first job that finds no partner,
// so no job jumps the queue. See docs/policies/fifo_packed.md.
package fifopacked

import (
	"fmt"

	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "fifo_packed"

// Args configure FIFO_packed.
type Args struct {
	// Threshold is the normalized pair throughput a packing must exceed
	// (Gavel's packing_threshold default, 1.5).
	Threshold float64 `yaml:"threshold"`
	// SleepIdle: idle nodes sleep (default: no, as in Gavel).
	policy.SleepArg `yaml:",inline"`
}

// Default returns Gavel's default.
func (Args) Default() Args { return Args{Threshold: 1.5} }

// Validate checks the threshold.
func (a Args) Validate() error {
	if !(a.Threshold >= 0 && a.Threshold <= 2) {
		return fmt.Errorf("threshold: %v, want in [0, 2]", a.Threshold)
	}
	return nil
}

// Policy is FIFO_packed.
type Policy struct {
	policy.SleepArg
	a      Args
	h      *coloc.History
	rounds policy.GavelFIFO
}

var (
	_ policy.ColocScheduler = (*Policy)(nil)
	_ policy.RoundAllocator = (*Policy)(nil)
)

// AllocateRound implements policy.RoundAllocator: Gavel's
// FIFOPolicyWithPacking (packing mode, measured pair rates).
func (p *Policy) AllocateRound(st *policy.RoundState) []policy.RoundShare {
	return p.rounds.Allocate(st)
}

// RoundRules implements policy.RoundAllocator: pairs tracked, only
// allocated combinations run.
func (*Policy) RoundRules() policy.RoundRules {
	return policy.RoundRules{Pairs: true, AllocatedOnly: true}
}

// New builds FIFO_packed; it predicts pairs from H like every policy.
func New(a Args, d policy.ColocDeps) (*Policy, error) {
	if d.History == nil {
		return nil, fmt.Errorf("fifo_packed needs a history H")
	}
	return &Policy{SleepArg: a.SleepArg, a: a, h: d.History(), rounds: policy.GavelFIFO{Packing: true, Threshold: a.Threshold, Admit: policy.AdmitGavel}}, nil
}

// ScheduleColoc implements policy.ColocScheduler.
func (p *Policy) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	acts, wait, _ := policy.StartFIFO(st)
	taken := map[int]bool{}
	for _, v := range wait {
		best, bestTP := -1, p.a.Threshold
		for _, s := range st.Sets {
			if len(s.Jobs) != 1 || taken[s.ID] || len(s.GPUs) != v.Job.Key.Scale || !policy.MemFits(st, s, v) {
				continue
			}
			tp := policy.NormalizedPair(p.h, st.View(s.Jobs[0]).Job.Key, v.Job.Key)
			if tp > bestTP {
				best, bestTP = s.ID, tp
			}
		}
		if best < 0 {
			break
		}
		taken[best] = true
		acts = append(acts, policy.ColocAction{Kind: policy.ColocJoin, Job: v.Job.ID, Set: best})
	}
	return policy.ColocDecision{Actions: acts}
}
