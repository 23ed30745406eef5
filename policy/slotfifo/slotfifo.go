// Package slotfifo is the CE-DLA paper's baseline (Sec. 3.2 (1)): training jobs
// start in arrival order, each on a free node of the type with the most
// free nodes (ties: the cluster's order of types), so that training is
// spread over the types and gets the cluster's mean speed, neither the
// slowest nor the fastest first, and run without pause until done; inference is spread over every
// other node; no node is ever turned off; deadlines, latency bounds, power
// and prices are not looked at.
package slotfifo

import (
	"math"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's name.
const Name = "fifo"

// Policy is the FIFO baseline.
type Policy struct{}

var _ policy.SlotPlanner = (*Policy)(nil)

// Args configures the FIFO baseline: it has no arguments (the paper gives it
// none), so a scenario may only leave them empty.
type Args struct{}

// Default implements policy.Args.
func (Args) Default() Args { return Args{} }

// Validate implements policy.Args.
func (Args) Validate() error { return nil }

// Build is New for the slotted registry family (policy/builtin).
func Build(Args, policy.SlotDeps) (*Policy, error) { return New(), nil }

// New returns the FIFO baseline.
func New() *Policy { return &Policy{} }

// Plan implements policy.SlotPlanner for one slot.
func (*Policy) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	m := st.Models
	d := policy.NewSlotDecision(m)
	free := make([]int, len(m.Types))
	total := 0
	for t, ty := range m.Types {
		free[t], d.On[t] = ty.Count, ty.Count
		total += ty.Count
	}
	// Nodes kept for inference: each model's load over the cluster's mean
	// service rate (FIFO does not know the latency bound).
	reserve := 0
	for i := range m.Models {
		var mean float64
		for t := range m.Types {
			mean += m.Mu[i][t] / float64(len(m.Types))
		}
		if st.Load[0][i] > 0 {
			reserve += int(math.Ceil(st.Load[0][i] / mean))
		}
	}
	// At most every node: a load that needs more leaves none to training.
	avail := max(total-reserve, 0)
	// Running jobs keep their type; then the rest in arrival (ID) order.
	for _, j := range st.Jobs {
		if j.LastType >= 0 && avail > 0 && free[j.LastType] > 0 {
			d.Train = append(d.Train, policy.SlotRun{Job: j.ID, Type: j.LastType})
			free[j.LastType]--
			avail--
		}
	}
	for _, j := range st.Jobs {
		if j.LastType >= 0 || avail == 0 {
			continue
		}
		t := 0
		for u := range m.Types {
			if free[u] > free[t] {
				t = u
			}
		}
		if free[t] > 0 {
			d.Train = append(d.Train, policy.SlotRun{Job: j.ID, Type: t})
			free[t]--
			avail--
		}
	}
	policy.SpreadInference(m, st.Load[0], free, false, &d)
	return &policy.SlotPlan{Slots: []policy.SlotDecision{d}}, nil
}
