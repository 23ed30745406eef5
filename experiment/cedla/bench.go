package cedla

import (
	"fmt"

	"github.com/wattsched/wattsched/policy"
	pcedla "github.com/wattsched/wattsched/policy/cedla"
)

// BenchState is the benchmark plan: 160 nodes (40 per type), 280
// training jobs (seed 1) at 1e5 requests/min, a 96-slot look-ahead, at the
// slot where the most jobs are waiting (each with all its epochs left).
func BenchState() (*policy.SlotState, error) {
	tb, err := EmbeddedTable()
	if err != nil {
		return nil, err
	}
	const look = 96
	s, err := NewSetup(tb, 40, 672, look, 4, 1)
	if err != nil {
		return nil, err
	}
	base := s.Derived.Models(s.Fitted, s.Count, nil, s.Restart, s.TurnOn)
	w, err := Generate(s.Derived, base, 280, 1e5, s.Slots, look, 1)
	if err != nil {
		return nil, err
	}
	m := s.Derived.Models(s.Fitted, s.Count, w.Bound, s.Restart, s.TurnOn)
	best, bestN := 0, -1
	for h := range s.Slots {
		n := 0
		for _, j := range w.Jobs {
			if j.Arrival <= h && j.Deadline >= h {
				n++
			}
		}
		if n > bestN {
			best, bestN = h, n
		}
	}
	st := &policy.SlotState{Slot: best, Horizon: s.Slots, Models: m, Load: w.Load[best : best+look], Price: s.Price[best : best+look], On: make([]int, len(GPUs))}
	for _, j := range w.Jobs {
		if j.Arrival <= best && j.Deadline >= best {
			st.Jobs = append(st.Jobs, policy.SlotJobState{SlotJob: j, Remaining: j.Epochs, LastType: -1})
		}
	}
	return st, nil
}

// BenchPlan solves the benchmark plan once (Problem 2 or 1) on one thread
// with a 1% gap; binarySlots as in pcedla.Args (0: the exact problem over
// the whole window).
func BenchPlan(mode pcedla.Mode, binarySlots int) (*policy.PlanInfo, int, error) {
	return benchPlan(mode, binarySlots, 0, 0)
}

// BenchPlanStudy is BenchPlan with the study's planner settings: 4
// binary slots, the first 16 slots one by one, the rest in hourly blocks.
func BenchPlanStudy(mode pcedla.Mode) (*policy.PlanInfo, int, error) {
	return benchPlan(mode, 4, 16, 4)
}

func benchPlan(mode pcedla.Mode, binarySlots, blockAfter, blockSlots int) (*policy.PlanInfo, int, error) {
	st, err := BenchState()
	if err != nil {
		return nil, 0, err
	}
	a := pcedla.Args{}.Default()
	a.Mode, a.Threads, a.BinarySlots, a.BlockAfter, a.BlockSlots = mode, 1, binarySlots, blockAfter, blockSlots
	s, err := NewSetup(mustTable(), 40, 672, 96, 4, 1)
	if err != nil {
		return nil, 0, err
	}
	p, err := pcedla.New(a, s.Solver, s.RestartSeconds)
	if err != nil {
		return nil, 0, err
	}
	plan, err := p.Plan(st)
	if err != nil {
		return nil, 0, err
	}
	if plan.Info == nil {
		return nil, 0, fmt.Errorf("cedla: no plan info")
	}
	return plan.Info, len(st.Jobs), nil
}

func mustTable() *Table {
	tb, err := EmbeddedTable()
	if err != nil {
		panic(err)
	}
	return tb
}
