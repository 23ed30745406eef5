package eaco

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/policy/eaco"
	"github.com/wattsched/wattsched/sim"
)

// untracked hands a scheduler the engine's state without its change
// list, so that EaCO rebuilds its candidate index and drops every kept
// prediction at each decision (as before they were kept).
type untracked struct{ s policy.ColocScheduler }

func (u untracked) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	c := *st
	c.Tracked, c.Changed = false, nil
	return u.s.ScheduleColoc(&c)
}

// TestEaCOIndexFollowsEngine: EaCO's candidate index and predictions kept
// from the sets the engine reports changed (and H's records) give the
// same run, to the last bit, as both rebuilt at every decision, under
// each interference setting (the paper's: noisy observations that H
// learns from); the runs co-locate jobs, undo placements and release
// sets, so every kind of change is exercised.
func TestEaCOIndexFollowsEngine(t *testing.T) {
	e, err := NewEnv(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range e.Settings {
		t.Run(set.Name, func(t *testing.T) {
			jobs := e.WorkloadFor(set, 3, 600, 400)
			run := func(wrap bool) (*sim.ColocResult, *eaco.Policy) {
				s, err := builtin.Registries().Coloc.New(eaco.Name, []byte(set.EacoArgs), policy.ColocDeps{History: set.History, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				p := s.(*eaco.Policy)
				if wrap {
					s = untracked{s}
				}
				r, err := sim.RunColoc(jobs, s, sim.ColocOptions{Nodes: 16, GPUsPerNode: 8, GPUMemGiB: GPUMemGiB, Power: e.Power, SleepIdle: true,
					TruthSet: set.Truth, MaxShare: MaxShare, ObsNoise: set.ObsNoise, ObsSeed: 3})
				if err != nil {
					t.Fatal(err)
				}
				return r, p
			}
			kept, pk := run(false)
			rebuilt, pr := run(true)
			t.Logf("%d joins, %d undos, %d sets, %d observations", kept.Joins, kept.Undos, len(kept.Sets), pk.History().Observations)
			if kept.Joins < 50 || kept.Undos < 1 || len(kept.Sets) < 100 {
				t.Fatalf("the run exercises too little: %d joins, %d undos, %d sets", kept.Joins, kept.Undos, len(kept.Sets))
			}
			if d := cmp.Diff(rebuilt, kept); d != "" {
				t.Errorf("kept index vs rebuilt (-rebuilt +kept):\n%s", d)
			}
			if d := cmp.Diff(pr.Predictions, pk.Predictions, cmp.AllowUnexported(eaco.Prediction{})); d != "" {
				t.Errorf("predictions (-rebuilt +kept):\n%s", d)
			}
		})
	}
}

// TestEaCOBoundKeepsRuns: the bound that skips candidate sets eq. 1
// rejects whatever the remaining steps (eaco.Policy.DisableBound) gives
// the same run, to the last bit, as testing every set in full, under
// each interference setting: the paper's learns from noisy observations,
// so H's records change the predictions the verdicts were decided on.
func TestEaCOBoundKeepsRuns(t *testing.T) {
	e, err := NewEnv(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range e.Settings {
		t.Run(set.Name, func(t *testing.T) {
			jobs := e.WorkloadFor(set, 5, 1500, 300)
			run := func(bound bool) (*sim.ColocResult, *eaco.Policy) {
				s, err := builtin.Registries().Coloc.New(eaco.Name, []byte(set.EacoArgs), policy.ColocDeps{History: set.History, Seed: 5})
				if err != nil {
					t.Fatal(err)
				}
				p := s.(*eaco.Policy)
				if !bound {
					p.DisableBound()
				}
				r, err := sim.RunColoc(jobs, s, sim.ColocOptions{Nodes: 64, GPUsPerNode: 8, GPUMemGiB: GPUMemGiB, Power: e.Power, SleepIdle: true,
					TruthSet: set.Truth, MaxShare: MaxShare, ObsNoise: set.ObsNoise, ObsSeed: 5})
				if err != nil {
					t.Fatal(err)
				}
				return r, p
			}
			bounded, pb := run(true)
			full, pf := run(false)
			b := pb.Bounds
			t.Logf("%d joins, %d undos, %d observations; bound: %d verdicts, %d rejecting, %d sets skipped", bounded.Joins, bounded.Undos,
				pb.History().Observations, b.Decided, b.Blocked, b.Skipped)
			if bounded.Joins < 50 || pb.History().Observations < 50 || b.Blocked < 20 || b.Skipped < b.Blocked {
				t.Fatalf("the run exercises too little: %d joins, %d observations, bound %+v", bounded.Joins, pb.History().Observations, b)
			}
			if pf.Bounds != (eaco.BoundStats{}) {
				t.Errorf("the bound worked while disabled: %+v", pf.Bounds)
			}
			if d := cmp.Diff(full, bounded); d != "" {
				t.Errorf("bounded vs full (-full +bounded):\n%s", d)
			}
			if d := cmp.Diff(pf.Predictions, pb.Predictions, cmp.AllowUnexported(eaco.Prediction{})); d != "" {
				t.Errorf("predictions (-full +bounded):\n%s", d)
			}
		})
	}
}
