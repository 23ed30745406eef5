package experiment

import (
	"context"
	"fmt"

	"github.com/wattsched/wattsched/scenario"
)

// RunTasks runs a scenario of GPU-sharing tasks: mode inflation (every
// policy over every seed, capacity curves) or replay (every policy once,
// tasks at their recorded times).
func RunTasks(_ context.Context, env *Env, s *scenario.Scenario) ([]*Results, error) {
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
		return []*Results{res}, nil
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
		return []*Results{res}, nil
	}
	return nil, fmt.Errorf("scenario %s: mode %s is not a task mode", s.Name, s.Mode)
}
