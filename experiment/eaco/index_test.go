package eaco

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/eaco"
	"github.com/wattsched/wattsched/sim"
)

// untracked hands a scheduler the engine's state without its change
// list, so that EaCO rebuilds its candidate index from every set at each
// decision (as before the index was kept).
type untracked struct{ p *eaco.Policy }

func (u untracked) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	c := *st
	c.Tracked, c.Changed = false, nil
	return u.p.ScheduleColoc(&c)
}

// TestEaCOIndexFollowsEngine: EaCO's candidate index kept from the sets
// the engine reports changed gives the same run, to the last bit, as the
// index rebuilt from every set at every decision; the run co-locates jobs,
// undoes placements and releases sets, so every kind of change is
// exercised.
func TestEaCOIndexFollowsEngine(t *testing.T) {
	e, err := NewEnv(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	jobs := e.Workload(3, 600, 400)
	run := func(wrap bool) (*sim.ColocResult, *eaco.Policy) {
		p, err := eaco.New(eaco.Args{}.Default(), policy.ColocDeps{History: e.History})
		if err != nil {
			t.Fatal(err)
		}
		var s policy.ColocScheduler = p
		if wrap {
			s = untracked{p}
		}
		r, err := sim.RunColoc(jobs, s, sim.ColocOptions{Nodes: 16, GPUsPerNode: 8, GPUMemGiB: GPUMemGiB, Power: e.Power, SleepIdle: true,
			TruthSet: coloc.PairRule(e.Truth.Pair), MaxShare: MaxShare})
		if err != nil {
			t.Fatal(err)
		}
		return r, p
	}
	kept, pk := run(false)
	rebuilt, pr := run(true)
	t.Logf("%d joins, %d undos, %d sets", kept.Joins, kept.Undos, len(kept.Sets))
	if kept.Joins < 50 || kept.Undos < 1 || len(kept.Sets) < 100 {
		t.Fatalf("the run exercises too little: %d joins, %d undos, %d sets", kept.Joins, kept.Undos, len(kept.Sets))
	}
	if d := cmp.Diff(rebuilt, kept); d != "" {
		t.Errorf("kept index vs rebuilt (-rebuilt +kept):\n%s", d)
	}
	if pk.Finalised != pr.Finalised || pk.Undone != pr.Undone {
		t.Errorf("observations: kept %d/%d, rebuilt %d/%d", pk.Finalised, pk.Undone, pr.Finalised, pr.Undone)
	}
}
