package eaco

import (
	"math"
	"slices"

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
	// Pred is EaCO's prediction error at its joins (zero for others).
	Pred PredError

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
	if pol == eaco.Name && set.EacoArgs != "" {
		args = append(append(slices.Clone(args), '\n'), set.EacoArgs...)
	}
	s, err := reg.Coloc.New(pol, args, policy.ColocDeps{History: set.History, Seed: seed})
	if err != nil {
		return nil, err
	}
	res, err := sim.RunColoc(jobs, s, sim.ColocOptions{Nodes: nodes, GPUsPerNode: 8, GPUMemGiB: GPUMemGiB, Power: e.Power, SleepIdle: sleeps(s),
		TruthSet: set.Truth, MaxShare: MaxShare, Timeline: o.Timeline, Rounds: o.Rounds, Rates: e.TP.Pair, ObsNoise: set.ObsNoise, ObsSeed: seed, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	r := &Run{Nodes: nodes, Policy: pol, Seed: seed, Res: res}
	if p, ok := s.(*eaco.Policy); ok {
		r.Finalised, r.Undone = p.Finalised, p.Undone
		r.Records, r.FromEstimate = p.History().Records(), p.History().FromEstimate
		r.Pred = predError(p, set.Truth)
	}
	return r, nil
}

func sleeps(s policy.ColocScheduler) bool {
	if z, ok := s.(policy.IdleSleeper); ok {
		return z.SleepsIdleNodes()
	}
	return false
}

// PredError is how far EaCO's predictions were from what happened: the
// co-location factors it predicted at each join against the engine's
// truth for the same set (what the paper's Alg. 1 line 6 estimates) and
// against what its observation window measured (noise included), and the
// lengths it predicted at arrival against the completed jobs' (seconds
// alone; LengthsHistory only). Errors are mean absolute percentage errors
// over members (lengths: jobs).
type PredError struct {
	Joins       int     `json:"joins"`
	FactorMAPE  float64 `json:"factor_mape_pct"`
	Observed    int     `json:"observed_joins"`
	ObsMAPE     float64 `json:"factor_vs_observed_mape_pct"`
	Optimistic  int     `json:"optimistic_joins"`
	Lengths     int     `json:"lengths"`
	LengthMAPE  float64 `json:"length_mape_pct"`
	UndoneJoins int     `json:"undone_joins"`
}

func predError(p *eaco.Policy, truth coloc.SetFunc) PredError {
	var pe PredError
	var sumT, sumO float64
	var nT, nO int
	for _, pr := range p.Predictions {
		pe.Joins++
		if pr.Undone {
			pe.UndoneJoins++
		}
		if t, ok := truth(pr.Keys); ok && len(pr.Predicted) == len(t) {
			opt := false
			for i := range t {
				sumT += math.Abs(pr.Predicted[i]-t[i]) / t[i]
				nT++
				opt = opt || pr.Predicted[i] > t[i]*(1+1e-9)
			}
			if opt {
				pe.Optimistic++
			}
		}
		if pr.Observed != nil {
			pe.Observed++
			for i := range pr.Observed {
				sumO += math.Abs(pr.Predicted[i]-pr.Observed[i]) / pr.Observed[i]
				nO++
			}
		}
	}
	if nT > 0 {
		pe.FactorMAPE = 100 * sumT / float64(nT)
	}
	if nO > 0 {
		pe.ObsMAPE = 100 * sumO / float64(nO)
	}
	var sumL float64
	for _, l := range p.Lengths() {
		sumL += math.Abs(l.PredictedS-l.ActualS) / l.ActualS
		pe.Lengths++
	}
	if pe.Lengths > 0 {
		pe.LengthMAPE = 100 * sumL / float64(pe.Lengths)
	}
	return pe
}
