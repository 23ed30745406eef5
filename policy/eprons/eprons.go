// Package eprons is the CE-DLA paper's EPRONS baseline (Sec. 3.2 (2),
// after Zhou et al., IPDPS 2018): the fewest watts of powered servers that
// keep inference within its latency bound (min N x P_server subject to the
// bound), idle servers off; training jobs in arrival order on the free
// node type of least energy per epoch (the paper's "nodes that require the
// low energy consumption", Sec. 3.3; or, as an option, of least power);
// no prices, no deadlines. Inference is placed first, so a running job
// whose node type inference fills is paused for the slot (and placed
// again as a new job when a node frees up).
package eprons

import (
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's name.
const Name = "eprons"

// Policy is the EPRONS baseline.
type Policy struct{ a Args }

var _ policy.SlotPlanner = (*Policy)(nil)

// Training is how EPRONS picks the node type of a new training job.
type Training string

// The readings of the paper's "low energy consumption".
const (
	// LeastEnergy: the least predicted energy per epoch (training draw over
	// epochs per slot), the default.
	LeastEnergy Training = "least-energy"
	// LeastPower: the least predicted training draw (the slowest, most
	// frugal GPUs), this project's reading before issue 26.
	LeastPower Training = "least-power"
)

// Args configures the EPRONS baseline.
type Args struct {
	Training Training `yaml:"training"`
	// NoPause is a diagnostic, not the paper's EPRONS: a running training
	// job keeps its node before inference is placed (inference takes the
	// nodes left), so no job is ever paused. docs/policies/cedla-baselines.md
	// measures what EPRONS's pausing costs with it.
	NoPause bool `yaml:"no_pause"`
}

// Default implements policy.Args: least energy per epoch.
func (Args) Default() Args { return Args{Training: LeastEnergy} }

// Validate implements policy.Args.
func (a Args) Validate() error {
	if a.Training != LeastEnergy && a.Training != LeastPower {
		return fmt.Errorf("eprons.training: %q, want %q or %q", a.Training, LeastEnergy, LeastPower)
	}
	return nil
}

// Build is New for the slotted registry family (policy/builtin).
func Build(a Args, _ policy.SlotDeps) (*Policy, error) { return New(a) }

// New returns the EPRONS baseline.
func New(a Args) (*Policy, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return &Policy{a: a}, nil
}

// Plan implements policy.SlotPlanner for one slot.
func (p *Policy) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	m := st.Models
	nt := len(m.Types)
	d := policy.NewSlotDecision(m)
	free := make([]int, nt)
	for t, ty := range m.Types {
		free[t] = ty.Count
	}
	// NoPause: running jobs keep their type before inference is placed.
	kept := map[int]bool{}
	if p.a.NoPause {
		for _, j := range st.Jobs {
			if j.LastType >= 0 && free[j.LastType] > 0 {
				d.Train = append(d.Train, policy.SlotRun{Job: j.ID, Type: j.LastType})
				free[j.LastType]--
				kept[j.ID] = true
			}
		}
	}
	// Inference first (it is what EPRONS optimises): per model, node types
	// by watts per request/s of latency-bound capacity, fewest watts first.
	// A running job whose type has no node left is paused for the slot.
	for i := range m.Models {
		order := make([]int, nt)
		for t := range order {
			order[t] = t
		}
		per := func(t int) float64 {
			c := m.Cap(i, t)
			if c <= 0 {
				return 1e300
			}
			return (m.InferBaseW[i][t] + m.InferPerReqW[i][t]*c) / c
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch pa, pb := per(a), per(b); {
			case pa < pb:
				return -1
			case pa > pb:
				return 1
			}
			return 0
		})
		one := make([]float64, len(m.Models))
		one[i] = st.Load[0][i]
		policy.ServeInference(m, one, free, order, 1, &d)
	}
	// Training: running jobs keep their type; new ones in arrival order on
	// the free node type of least energy per epoch (or least draw).
	for _, j := range st.Jobs {
		if j.LastType >= 0 && !kept[j.ID] && free[j.LastType] > 0 {
			d.Train = append(d.Train, policy.SlotRun{Job: j.ID, Type: j.LastType})
			free[j.LastType]--
		}
	}
	for _, j := range st.Jobs {
		if j.LastType >= 0 {
			continue
		}
		cost := func(t int) float64 {
			if p.a.Training == LeastPower {
				return float64(m.TrainW[j.Model][t])
			}
			return float64(m.TrainW[j.Model][t]) / m.Epochs[j.Model][t]
		}
		best := -1
		for t := range nt {
			if free[t] > 0 && (best < 0 || cost(t) < cost(best)) {
				best = t
			}
		}
		if best >= 0 {
			d.Train = append(d.Train, policy.SlotRun{Job: j.ID, Type: best})
			free[best]--
		}
	}
	for t := range nt {
		d.On[t] = m.Types[t].Count - free[t]
	}
	return &policy.SlotPlan{Slots: []policy.SlotDecision{d}}, nil
}
