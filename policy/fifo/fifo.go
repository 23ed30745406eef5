// Package fifo is Gavel's default FIFO scheduler as the EaCO paper ran it
// (Section 6.2, "default"): jobs start in arrival order, each alone on its
// own GPUs, never shared. See docs/policies/fifo.md.
package fifo

import (
	"fmt"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "fifo"

// Args configure FIFO: whether idle nodes sleep (default: no, as in
// Gavel) and, under round-based timing, how a finished job's replacement
// is admitted.
type Args struct {
	policy.SleepArg `yaml:",inline"`
	// Admission (timing: gavel-rounds only): gavel (Gavel's base mode,
	// replacements over-admitted and time-shared) or free (only on free
	// GPUs). The event-driven engine always admits on free GPUs.
	Admission policy.Admission `yaml:"admission"`
}

// Default returns the defaults: Gavel's admission.
func (Args) Default() Args { return Args{Admission: policy.AdmitGavel} }

// Validate checks the admission rule.
func (a Args) Validate() error {
	if err := a.Admission.Validate(); err != nil {
		return fmt.Errorf("admission: %w", err)
	}
	return nil
}

// Policy is FIFO.
type Policy struct {
	policy.SleepArg
	rounds policy.GavelFIFO
}

var (
	_ policy.ColocScheduler = (*Policy)(nil)
	_ policy.RoundAllocator = (*Policy)(nil)
)

// New builds FIFO.
func New(a Args, _ policy.ColocDeps) (*Policy, error) {
	return &Policy{SleepArg: a.SleepArg, rounds: policy.GavelFIFO{Admit: a.Admission}}, nil
}

// AllocateRound implements policy.RoundAllocator: Gavel's FIFOPolicy in
// base mode.
func (p *Policy) AllocateRound(st *policy.RoundState) []policy.RoundShare {
	return p.rounds.Allocate(st)
}

// RoundRules implements policy.RoundAllocator: jobs alone, only allocated
// ones run.
func (*Policy) RoundRules() policy.RoundRules { return policy.RoundRules{AllocatedOnly: true} }

// ScheduleColoc implements policy.ColocScheduler.
func (*Policy) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	acts, _, _ := policy.StartFIFO(st)
	return policy.ColocDecision{Actions: acts}
}
