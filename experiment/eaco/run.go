package eaco

import (
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/eaco"
	"github.com/wattsched/wattsched/sim"
)

// Run is one simulation: a policy on a cluster size with a seed.
type Run struct {
	Nodes  int
	Policy string
	Seed   uint64
	Res    *sim.ColocResult
	// EaCO's observation outcomes and history use.
	Finalised, Undone, Records, FromEstimate int
	// CostUSD and CO2Kg price the run's hourly energy (grid.Account).
	CostUSD, CO2Kg float64
}

// RunOne simulates one policy (from reg) on nodes x 8 V100 with Gavel's
// measured pairs as they are (scenarios of mode coloc).
func (e *Env) RunOne(reg *policy.Registries, pol string, args []byte, nodes int, seed uint64, jobs []policy.ColocJob, timeline bool) (*Run, error) {
	return e.RunOneWith(reg, pol, args, nodes, seed, jobs, RunOptions{Timeline: timeline})
}

// RunOptions are a run's engine settings beyond the cluster and jobs.
type RunOptions struct {
	Timeline bool
	// Rounds selects Gavel's round-based timing (nil: event-driven).
	Rounds *sim.RoundTiming
	// Progress, if set, hears how many jobs have ended (sim.ColocOptions).
	Progress func(ended, total int)
}

// RunOneWith is RunOne with engine options.
func (e *Env) RunOneWith(reg *policy.Registries, pol string, args []byte, nodes int, seed uint64, jobs []policy.ColocJob, o RunOptions) (*Run, error) {
	return e.runIn(Setting{Name: "gavel-table", Truth: coloc.PairRule(e.Truth.Pair), History: e.History}, reg, pol, args, nodes, seed, jobs, o)
}

// RunIn simulates one policy under an interference setting (event-driven).
func (e *Env) RunIn(set Setting, reg *policy.Registries, pol string, args []byte, nodes int, seed uint64, jobs []policy.ColocJob, timeline bool) (*Run, error) {
	return e.runIn(set, reg, pol, args, nodes, seed, jobs, RunOptions{Timeline: timeline})
}

func (e *Env) runIn(set Setting, reg *policy.Registries, pol string, args []byte, nodes int, seed uint64, jobs []policy.ColocJob, o RunOptions) (*Run, error) {
	s, err := reg.Coloc.New(pol, args, policy.ColocDeps{History: set.History, Seed: seed})
	if err != nil {
		return nil, err
	}
	res, err := sim.RunColoc(jobs, s, sim.ColocOptions{Nodes: nodes, GPUsPerNode: 8, GPUMemGiB: GPUMemGiB, Power: e.Power, SleepIdle: sleeps(s),
		TruthSet: set.Truth, MaxShare: MaxShare, Timeline: o.Timeline, Rounds: o.Rounds, Rates: e.TP.Pair, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	r := &Run{Nodes: nodes, Policy: pol, Seed: seed, Res: res}
	if p, ok := s.(*eaco.Policy); ok {
		r.Finalised, r.Undone = p.Finalised, p.Undone
		r.Records, r.FromEstimate = p.History().Records(), p.History().FromEstimate
	}
	return r, nil
}

func sleeps(s policy.ColocScheduler) bool {
	if z, ok := s.(policy.IdleSleeper); ok {
		return z.SleepsIdleNodes()
	}
	return false
}
