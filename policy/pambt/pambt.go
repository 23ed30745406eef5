// Package pambt is the CE-DLA paper's PA-MBT baseline (Sec. 3.2 (3), after
// Carrera et al., TPDS 2012): performance-aware allocation of mixed batch
// (training) and transactional (inference) work that maximises the least
// relative performance; energy, prices and node power states are not
// looked at (every node stays on).
package pambt

import (
	"math"
	"slices"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's name.
const Name = "pambt"

// Policy is the PA-MBT baseline.
type Policy struct{}

var _ policy.SlotPlanner = (*Policy)(nil)

// Args configures the PA-MBT baseline: it has no arguments (the paper gives it
// none), so a scenario may only leave them empty.
type Args struct{}

// Default implements policy.Args.
func (Args) Default() Args { return Args{} }

// Validate implements policy.Args.
func (Args) Validate() error { return nil }

// Build is New for the slotted registry family (policy/builtin).
func Build(Args, policy.SlotDeps) (*Policy, error) { return New(), nil }

// New returns the PA-MBT baseline.
func New() *Policy { return &Policy{} }

// Plan implements policy.SlotPlanner for one slot. Relative performance of
// a training job: its slack (deadline minus the finish if it ran on the
// fastest type from now) over its window; of inference: meeting the bound.
// The max-min allocation is greedy: a new job that cannot meet its
// deadline on any node is rejected (its relative performance cannot be
// raised); an admitted job is never rejected (the slotted engine decides
// a job once, at its first plan): when it can no longer meet its deadline
// it runs after the jobs that still can; inference gets the slowest nodes that keep it within the
// bound; the jobs with the least slack take the fastest free nodes; every
// node left serves inference, which lowers its latency further.
func (*Policy) Plan(st *policy.SlotState) (*policy.SlotPlan, error) {
	m := st.Models
	nt := len(m.Types)
	d := policy.NewSlotDecision(m)
	free := make([]int, nt)
	for t, ty := range m.Types {
		free[t], d.On[t] = ty.Count, ty.Count
	}
	type cand struct {
		j     policy.SlotJobState
		slack float64
	}
	var cands []cand
	var reject []int
	for _, j := range st.Jobs {
		best := 0.0
		for t := range nt {
			best = math.Max(best, m.Epochs[j.Model][t])
		}
		finish := float64(st.Slot) + math.Ceil(j.Remaining/best-1e-9) - 1
		slack := (float64(j.Deadline) - finish) / float64(j.Deadline-j.Arrival+1)
		if slack < 0 && !j.Admitted {
			reject = append(reject, j.ID)
			continue
		}
		cands = append(cands, cand{j, slack})
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		// Admitted jobs that can no longer meet their deadline (negative
		// slack) run after every job that still can.
		if la, lb := a.slack < 0, b.slack < 0; la != lb {
			if lb {
				return -1
			}
			return 1
		}
		switch {
		case a.slack < b.slack:
			return -1
		case a.slack > b.slack:
			return 1
		}
		return a.j.ID - b.j.ID
	})
	// Fastest-first order of the types for training (mean over models).
	speed := make([]float64, nt)
	for t := range nt {
		for i := range m.Models {
			speed[t] += m.Epochs[i][t]
		}
	}
	fast := make([]int, nt)
	for t := range fast {
		fast[t] = t
	}
	slices.SortStableFunc(fast, func(a, b int) int {
		switch {
		case speed[a] > speed[b]:
			return -1
		case speed[a] < speed[b]:
			return 1
		}
		return 0
	})
	slow := slices.Clone(fast)
	slices.Reverse(slow)
	// Inference's minimum: the slowest nodes that meet the bound.
	need := policy.NewSlotDecision(m)
	left := slices.Clone(free)
	policy.ServeInference(m, st.Load[0], left, slow, 1, &need)
	for t := range nt {
		for i := range m.Models {
			free[t] -= need.Infer[i][t]
		}
	}
	for _, c := range cands {
		t := -1
		// A job keeps its type when that type still has a free node.
		if c.j.LastType >= 0 && free[c.j.LastType] > 0 {
			t = c.j.LastType
		} else {
			for _, u := range fast {
				if free[u] > 0 {
					t = u
					break
				}
			}
		}
		if t < 0 {
			break
		}
		d.Train = append(d.Train, policy.SlotRun{Job: c.j.ID, Type: t})
		free[t]--
	}
	// Every node not training serves inference: the minimum plus the rest,
	// each node loaded in proportion to its latency-bound capacity.
	for i := range m.Models {
		copy(d.Infer[i], need.Infer[i])
	}
	policy.SpreadInference(m, st.Load[0], free, true, &d)
	return &policy.SlotPlan{Slots: []policy.SlotDecision{d}, Reject: reject}, nil
}
