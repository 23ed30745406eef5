// Package pwr implements PWR (Lettich et al., pwr-fgd Section IV,
// Algorithm 1): a task goes to the feasible node whose estimated power
// (eqs. 1-3) grows the least.
package pwr

import (
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// Name is the policy's registry name.
const Name = "pwr"

// Args configures PWR (it has no parameters; the power model comes from Deps).
type Args struct{}

// Default returns the defaults.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (Args) Validate() error { return nil }

// Policy is the PWR scorer.
type Policy struct{ model power.Model }

var (
	_ policy.StateScorer      = (*Policy)(nil)
	_ policy.TaskReader       = (*Policy)(nil)
	_ policy.Scorer           = (*Policy)(nil)
	_ policy.MinMaxNormalizer = (*Policy)(nil)
	_ policy.GPUSelector      = (*Policy)(nil)
)

// New builds PWR; deps.Power defaults to the PWR estimated power model.
func New(_ Args, deps policy.Deps) (*Policy, error) {
	m := deps.Power
	if m == nil {
		m = power.PWR{}
	}
	return &Policy{model: m}, nil
}

// Score implements policy.Scorer: minus the power increase in watts,
// truncated to an integer (the public PWR plugin's score before
// normalisation). A shared task takes the GPU that adds the least power.
func (p *Policy) Score(t *job.Task, n *cluster.Node) int64 {
	s, _ := p.best(t, n)
	return s
}

// Normalize implements policy.Normalizer: min-max onto 0..100 over the
// feasible nodes, 100 for all when all are equal (the PWR plugin's NormalizeScore).
func (p *Policy) Normalize(scores []int64) { policy.MinMaxNormalize(scores, p.NormalizeEqual()) }

// NormalizeEqual implements policy.MinMaxNormalizer.
func (*Policy) NormalizeEqual() int64 { return policy.MaxScore }

// SelectGPUs implements policy.GPUSelector.
func (p *Policy) SelectGPUs(t *job.Task, n *cluster.Node) []int {
	_, g := p.best(t, n)
	return g
}

func (p *Policy) best(t *job.Task, n *cluster.Node) (int64, []int) {
	if t.MIG() {
		// The MIG-aware reading (mig.go): the instance adds its compute
		// slices' share of the dynamic range on any GPU with room, so
		// the GPU is the default rule's (cluster.FirstMIG).
		g, _, ok := cluster.FirstMIG(&t.Demand, n)
		if !ok {
			return 0, nil
		}
		gpus := []int{g}
		return -int64(power.Increase(p.model, n, &t.Demand, gpus)), gpus
	}
	if !t.Shared() {
		var gpus []int
		if t.GPUCount > 0 {
			gpus = cluster.FirstIdleGPUs(n, t.GPUCount)
		}
		return -int64(power.Increase(p.model, n, &t.Demand, gpus)), gpus
	}
	score, gpu := int64(0), -1
	one := []int{0}
	for i, f := range n.GPUFree {
		if f < t.GPUMilli {
			continue
		}
		one[0] = i
		s := -int64(power.Increase(p.model, n, &t.Demand, one))
		if gpu < 0 || s > score {
			score, gpu = s, i
		}
	}
	if gpu < 0 {
		return 0, nil
	}
	return score, []int{gpu}
}

// StateOnly implements policy.StateScorer: the score reads the node's
// models, capacities and allocations only.
func (*Policy) StateOnly() {}

// TaskReads implements policy.TaskReader: the score and the GPUs chosen
// read the task's demand only, so a Placer caches them per demand.
func (*Policy) TaskReads() policy.TaskFields { return policy.ReadsDemand }
