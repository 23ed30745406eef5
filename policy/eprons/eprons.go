// Package eprons is the CE-DLA paper's EPRONS baseline (Sec. 3.2 (2),
// after Zhou et al., IPDPS 2018): the fewest watts of powered servers that
// keep inference within its latency bound (min N x P_server subject to the
// bound), idle servers off; training jobs in arrival order on the nodes
// that draw the least power, run without pause; no prices, no deadlines.
package eprons

import (
	"slices"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's name.
const Name = "eprons"

// Policy is the EPRONS baseline.
type Policy struct{}

var _ policy.SlotPlanner = (*Policy)(nil)

// Args configures the EPRONS baseline: it has no arguments (the paper gives it
// none), so a scenario may only leave them empty.
type Args struct{}

// Default implements policy.Args.
func (Args) Default() Args { return Args{} }

// Validate implements policy.Args.
func (Args) Validate() error { return nil }

// Build is New for the slotted registry family (policy/builtin).
func Build(Args, policy.SlotDeps) (*Policy, error) { return New(), nil }

// New returns the EPRONS baseline.
func New() *Policy { return &Policy{} }

// Plan implements policy.SlotPlanner for one slot.
func (*Policy) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	m := st.Models
	nt := len(m.Types)
	d := policy.NewSlotDecision(m)
	free := make([]int, nt)
	for t, ty := range m.Types {
		free[t] = ty.Count
	}
	// Inference first (it is what EPRONS optimises): per model, node types
	// by watts per request/s of latency-bound capacity, fewest watts first.
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
	// the free node type with the least training draw.
	for _, j := range st.Jobs {
		if j.LastType >= 0 && free[j.LastType] > 0 {
			d.Train = append(d.Train, policy.SlotRun{Job: j.ID, Type: j.LastType})
			free[j.LastType]--
		}
	}
	for _, j := range st.Jobs {
		if j.LastType >= 0 {
			continue
		}
		best := -1
		for t := range nt {
			if free[t] > 0 && (best < 0 || m.TrainW[j.Model][t] < m.TrainW[j.Model][best]) {
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
