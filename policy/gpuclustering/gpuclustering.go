// Package gpuclustering implements GPU clustering (Xiao et al., Gandiva,
// OSDI'18) as the FGD simulator scores it: tasks with the same GPU request
// kind (shared, 1, 2, 4 or 8 whole GPUs) are packed on the same nodes.
package gpuclustering

import (
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "gpuclustering"

// Args configures GpuClustering (no parameters).
type Args struct{}

// Default returns the defaults.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (Args) Validate() error { return nil }

// Policy is the GpuClustering scorer.
type Policy struct{}

var (
	_ policy.StateScorer = Policy{}
	_ policy.TaskReader  = Policy{}
)

// New builds GpuClustering.
func New(Args, policy.Deps) (Policy, error) { return Policy{}, nil }

// Score implements policy.Scorer. With u = 25 x (8000 - free GPU milli) / 8000
// (integer arithmetic): a node whose only GPU task kind is the task's scores
// u + 75; a node with that kind among others u + 50; a node without GPU tasks
// u + 25; a node with other kinds only u. CPU-only tasks score 0.
func (Policy) Score(t *job.Task, n *cluster.Node) int64 {
	if t.GPUCount == 0 {
		return policy.MinScore
	}
	k := t.GPUCount
	if t.Shared() {
		k = 0
	}
	kinds := 0
	for _, c := range n.Affinity {
		if c > 0 {
			kinds++
		}
	}
	u := policy.MaxScore / 4 * (policy.MaxSpecGPUMilli - n.FreeGPUMilli()) / policy.MaxSpecGPUMilli
	switch {
	case n.Affinity[k] > 0 && kinds == 1:
		return u + policy.MaxScore*3/4
	case n.Affinity[k] > 0:
		return u + policy.MaxScore*2/4
	case kinds == 0:
		return u + policy.MaxScore/4
	}
	return u
}

// StateOnly implements policy.StateScorer: the score reads the node's
// models, capacities and allocations only.
func (Policy) StateOnly() {}

// TaskReads implements policy.TaskReader: the score and the GPUs chosen
// read the task's demand only, so a Placer caches them per demand.
func (Policy) TaskReads() policy.TaskFields { return policy.ReadsDemand }
