// Package fifo is Gavel's default FIFO scheduler as the EaCO paper ran it
// (Section 6.2, "default"): jobs start in arrival order, each alone on its
// own GPUs, never shared. See docs/policies/fifo.md.
package fifo

import "github.com/wattsched/wattsched/policy"

// Name is the policy's registry name.
const Name = "fifo"

// Args configure FIFO: only whether idle nodes sleep (default: no, as in Gavel).
type Args struct {
	policy.SleepArg `yaml:",inline"`
}

// Default returns the (empty) defaults.
func (Args) Default() Args { return Args{} }

// Validate accepts everything.
func (Args) Validate() error { return nil }

// Policy is FIFO.
type Policy struct{ policy.SleepArg }

var _ policy.ColocScheduler = (*Policy)(nil)

// New builds FIFO.
func New(a Args, _ policy.ColocDeps) (*Policy, error) { return &Policy{a.SleepArg}, nil }

// ScheduleColoc implements policy.ColocScheduler.
func (*Policy) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	acts, _, _ := policy.StartFIFO(st)
	return policy.ColocDecision{Actions: acts}
}
