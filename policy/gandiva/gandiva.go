// Package gandiva is the Gandiva baseline of PowerFlow's evaluation (Xiao
// et al., OSDI'18, as PowerFlow Section 6.1 uses it): not elastic (each
// job runs on the GPU count its trace asks for) and not energy-aware (all
// GPUs at one fixed frequency; the paper's baseline keeps every node on,
// keep_idle_nodes_on, which the preset sets). Jobs start in submission
// order whenever a packed placement is free, without blocking later jobs
// that fit; running jobs are never moved (unless packed_placement gives it
// PowerFlow's placement). docs/policies/gandiva.md says what of Gandiva is
// and is not modelled.
package gandiva

import (
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "gandiva"

// Args configure Gandiva.
type Args struct {
	policy.FixedFreq `yaml:",inline"`
}

// Default runs at the highest frequency.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (a Args) Validate() error { return a.FixedFreq.Validate(Name) }

// Policy is Gandiva.
type Policy struct {
	args Args
	fi   int // frequency index (-1: the highest)
}

var _ policy.ElasticScheduler = (*Policy)(nil)

// New returns Gandiva.
func New(args Args, deps policy.ElasticDeps) (*Policy, error) {
	if err := args.Validate(); err != nil {
		return nil, err
	}
	fi, err := args.Index(Name, deps.FreqsMHz)
	if err != nil {
		return nil, err
	}
	return &Policy{args: args, fi: fi}, nil
}

// ScheduleElastic implements policy.ElasticScheduler.
func (p *Policy) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	fi := policy.FreqIndex(p.fi, st.FreqsMHz)
	d := policy.ElasticDecision{Allocs: p.args.Place(st, st.Jobs, fi)}
	d.NodeOn = p.args.NodeOn(d.Allocs, st.Nodes)
	return d
}
