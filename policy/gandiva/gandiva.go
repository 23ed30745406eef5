// Package gandiva is the Gandiva baseline of PowerFlow's evaluation (Xiao
// et al., OSDI'18, as PowerFlow Section 6.1 uses it): not elastic (each
// job runs on the GPU count its trace asks for) and not energy-aware (all
// GPUs at one fixed frequency, all nodes on). Jobs start in submission
// order whenever a packed placement is free, without blocking later jobs
// that fit; running jobs are never moved. docs/policies/gandiva.md says
// what of Gandiva is and is not modelled.
package gandiva

import (
	"fmt"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "gandiva"

// Args configure Gandiva.
type Args struct {
	// FreqIdx is the fixed frequency index (-1: the highest).
	FreqIdx int
	// KeepIdleNodesOn leaves nodes without jobs powered (by default they
	// are shut down, as PowerFlow does; see docs/reproduce-powerflow.md).
	KeepIdleNodesOn bool
}

// Default runs at the highest frequency.
func (Args) Default() Args { return Args{FreqIdx: -1} }

// Validate checks the arguments.
func (a Args) Validate() error {
	if a.FreqIdx < -1 {
		return fmt.Errorf("gandiva: freq index %d", a.FreqIdx)
	}
	return nil
}

// Policy is Gandiva.
type Policy struct{ args Args }

var _ policy.ElasticScheduler = (*Policy)(nil)

// New returns Gandiva.
func New(args Args) (*Policy, error) {
	if err := args.Validate(); err != nil {
		return nil, err
	}
	return &Policy{args: args}, nil
}

// ScheduleElastic implements policy.ElasticScheduler.
func (p *Policy) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	fi := policy.FreqIndex(p.args.FreqIdx, st.FreqsMHz)
	d := policy.ElasticDecision{Allocs: policy.PlaceInOrder(st, st.Jobs, fi)}
	if !p.args.KeepIdleNodesOn {
		d.NodeOn = policy.NodesInUse(d.Allocs, st.Nodes)
	}
	return d
}
