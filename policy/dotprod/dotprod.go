// Package dotprod implements the dot-product packing heuristic of Tetris
// (Grandl et al., SIGCOMM'14) as the FGD simulator configures it for the
// PWR/FGD comparisons ("merge" GPU dimension, "max" normalisation): the node
// whose free resources align least with the task's demand wins.
package dotprod

import (
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "dotprod"

// Args configures DotProd (no parameters).
type Args struct{}

// Default returns the defaults.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (Args) Validate() error { return nil }

// Policy is the DotProd scorer.
type Policy struct{}

var (
	_ policy.StateScorer = Policy{}
	_ policy.TaskReader  = Policy{}
)

// New builds DotProd.
func New(Args, policy.Deps) (Policy, error) { return Policy{}, nil }

// Score implements policy.Scorer: 100 x (1 - (free.demand)/2) over the
// vectors (CPU/128 vCPU, GPU/8 GPUs), truncated.
func (Policy) Score(t *job.Task, n *cluster.Node) int64 {
	node := [2]float64{float64(n.FreeCPUMilli) / policy.MaxSpecCPUMilli, float64(n.FreeGPUMilli()) / policy.MaxSpecGPUMilli}
	task := [2]float64{float64(t.CPUMilli) / policy.MaxSpecCPUMilli, float64(t.TotalGPUMilli()) / policy.MaxSpecGPUMilli}
	dot := (node[0]*task[0] + node[1]*task[1]) / 2
	return int64(float64(policy.MaxScore) * (1 - dot))
}

// StateOnly implements policy.StateScorer: the score reads the node's
// models, capacities and allocations only.
func (Policy) StateOnly() {}

// TaskReads implements policy.TaskReader: the score and the GPUs chosen
// read the task's demand only, so a Placer caches them per demand.
func (Policy) TaskReads() policy.TaskFields { return policy.ReadsDemand }
