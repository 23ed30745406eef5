// Package zeus adds Zeus (You et al., NSDI'23) to a non-elastic scheduler,
// as PowerFlow's Gandiva+Zeus and Tiresias+Zeus baselines do: each job
// runs at the configuration that minimises Zeus' cost
// eta*E + (1-eta)*MaxPower*T per iteration (Zeus eq. 2 with its
// energy-time knob eta), found by just-in-time profiling of the job's own
// run. Zeus' knob is the GPU power limit; here it is the core frequency
// (the knob this simulator's GPUs expose), and the global batch size stays
// as the user set it.
package zeus

import (
	"fmt"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "zeus"

// Args configure Zeus.
type Args struct {
	// Eta is Zeus' energy-time knob in [0, 1] (0.5 in Zeus' evaluation).
	Eta float64 `yaml:"eta"`
	// Base is the scheduler Zeus configures the jobs of (gandiva or
	// tiresias in PowerFlow's evaluation).
	Base policy.Ref `yaml:"base"`
}

// Default is Zeus' default knob over Gandiva.
func (Args) Default() Args { return Args{Eta: 0.5, Base: policy.Ref{Policy: "gandiva"}} }

// Validate checks the arguments.
func (a Args) Validate() error {
	if !(a.Eta >= 0 && a.Eta <= 1) {
		return fmt.Errorf("zeus.eta: %v, want 0..1", a.Eta)
	}
	if a.Base.Policy == "" || a.Base.Policy == Name {
		return fmt.Errorf("zeus.base.policy: %q, want the elastic policy Zeus wraps", a.Base.Policy)
	}
	return nil
}

// Policy wraps a scheduler with Zeus' per-job configuration choice.
type Policy struct {
	args      Args
	maxPowerW float64
	inner     policy.ElasticScheduler
}

var _ policy.ElasticScheduler = (*Policy)(nil)

// New builds the base scheduler with deps.Build and wraps it; deps.GPUMaxPower
// is the GPU's maximum power.
func New(args Args, deps policy.ElasticDeps) (*Policy, error) {
	if err := args.Validate(); err != nil {
		return nil, err
	}
	if !(deps.GPUMaxPower > 0) {
		return nil, fmt.Errorf("zeus: the GPU's maximum power is not known")
	}
	if deps.Build == nil {
		return nil, fmt.Errorf("zeus: cannot build the base policy %q", args.Base.Policy)
	}
	raw, err := args.Base.RawArgs()
	if err != nil {
		return nil, fmt.Errorf("zeus.base.args: %w", err)
	}
	inner, err := deps.Build(args.Base.Policy, raw)
	if err != nil {
		return nil, fmt.Errorf("zeus.base: %w", err)
	}
	return &Policy{args: args, maxPowerW: float64(deps.GPUMaxPower), inner: inner}, nil
}

// ScheduleElastic implements policy.ElasticScheduler: the inner
// scheduler's placements, with each job profiled on its first run and then
// run at its lowest-cost profiled frequency.
func (p *Policy) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	d := p.inner.ScheduleElastic(st)
	views := make(map[int]*policy.ElasticView, len(st.Jobs))
	for _, v := range st.Jobs {
		views[v.Job.ID] = v
	}
	for i := range d.Allocs {
		a := &d.Allocs[i]
		v := views[a.Job]
		n := 0
		for _, ns := range a.Nodes {
			n += ns.GPUs
		}
		best, cost := -1, 0.0
		for _, o := range v.Obs {
			if o.GPUs != n {
				continue
			}
			c := p.args.Eta*o.IterJ + (1-p.args.Eta)*p.maxPowerW*float64(n)*o.IterSec
			if best < 0 || c < cost || (c == cost && o.FreqIdx > best) {
				best, cost = o.FreqIdx, c
			}
		}
		if best < 0 {
			a.Profile = true
			a.FreqIdx = len(st.FreqsMHz) - 1
			continue
		}
		a.FreqIdx = best
	}
	return d
}
