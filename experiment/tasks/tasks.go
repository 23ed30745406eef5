// Package tasks runs the scenarios of GPU-sharing tasks, the job model of
// the task engine (sim/tasks.go): modes inflation (capacity curves) and
// replay (a trace replayed with measured or modelled power), `wattsched
// compare` (policies crossed with variants and seeds, with intervals and
// equivalence verdicts), the FGD simulator's compat mode, the checks made
// before such a run and their memory estimates. The PWR study
// (experiment/pwr) runs its inflations here.
package tasks

import (
	"context"
	"fmt"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/scenario"
)

// RunTasks runs a scenario of GPU-sharing tasks: mode inflation (every
// policy over every seed, capacity curves) or replay (every policy once,
// tasks at their recorded times).
func RunTasks(_ context.Context, env *experiment.Env, s *scenario.Scenario) ([]*experiment.Results, error) {
	in, err := LoadInputs(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	switch s.Mode {
	case scenario.Inflation:
		env.Notef("%s: %d policies x %d seeds on %s", s.Name, len(s.Policies), s.Seeds, in.Source)
		r, err := RunInflation(env, s, in)
		if err != nil {
			return nil, err
		}
		res, err := InflationResults(env.Version, r, nil)
		if err != nil {
			return nil, err
		}
		return []*experiment.Results{res}, nil
	case scenario.Replay:
		env.Notef("%s: replaying %d tasks under %d policies on %s", s.Name, len(in.Pods), len(s.Policies), in.Source)
		runs, err := RunReplay(env, s, in)
		if err != nil {
			return nil, err
		}
		res, err := ReplayResults(env.Version, s, in, runs)
		if err != nil {
			return nil, err
		}
		return []*experiment.Results{res}, nil
	}
	return nil, fmt.Errorf("scenario %s: mode %s is not a task mode", s.Name, s.Mode)
}
