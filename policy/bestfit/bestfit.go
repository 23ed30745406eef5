// Package bestfit implements BestFit (Hadary et al., Protean, OSDI'20) as
// the FGD simulator scores it: the node with the least free CPU and GPU left
// after placement wins.
package bestfit

import (
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "bestfit"

// Args configures BestFit (no parameters).
type Args struct{}

// Default returns the defaults.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (Args) Validate() error { return nil }

// Policy is the BestFit scorer.
type Policy struct{}

var (
	_ policy.StateScorer      = Policy{}
	_ policy.TaskReader       = Policy{}
	_ policy.Scorer           = Policy{}
	_ policy.MinMaxNormalizer = Policy{}
)

// New builds BestFit.
func New(Args, policy.Deps) (Policy, error) { return Policy{}, nil }

// Score implements policy.Scorer: 100 x (1 - (0.5 x free CPU after / 128 vCPU
// + 0.5 x free GPU after / 8 GPUs)), truncated.
func (Policy) Score(t *job.Task, n *cluster.Node) int64 {
	cpu := float64(n.FreeCPUMilli-t.CPUMilli) / policy.MaxSpecCPUMilli * 0.5
	gpu := float64(n.FreeGPUMilli()-t.TotalGPUMilli()) / policy.MaxSpecGPUMilli * 0.5
	return int64((1.0 - (cpu + gpu)) * float64(policy.MaxScore))
}

// Normalize implements policy.Normalizer: min-max onto 0..100, all 0 when equal
// (the FGD simulator's shared NormalizeScore).
func (p Policy) Normalize(s []int64) { policy.MinMaxNormalize(s, p.NormalizeEqual()) }

// NormalizeEqual implements policy.MinMaxNormalizer.
func (Policy) NormalizeEqual() int64 { return policy.MinScore }

// StateOnly implements policy.StateScorer: the score reads the node's
// models, capacities and allocations only.
func (Policy) StateOnly() {}

// TaskReads implements policy.TaskReader: the score and the GPUs chosen
// read the task's demand only, so a Placer caches them per demand.
func (Policy) TaskReads() policy.TaskFields { return policy.ReadsDemand }
