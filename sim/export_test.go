package sim

import "github.com/wattsched/wattsched/policy"

// RunColocChecked is RunColoc recomputing every node's power after each
// event and failing where the engine's kept power differs.
func RunColocChecked(jobs []policy.ColocJob, s policy.ColocScheduler, o ColocOptions) (*ColocResult, error) {
	return runColoc(jobs, s, o, true)
}
