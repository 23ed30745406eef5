// Package gpupacking implements GPU packing (Weng et al., MLaaS in the wild,
// NSDI'22) as the FGD simulator scores it: first GPUs already in use, then
// idle GPUs on used nodes, last idle nodes, keeping whole nodes free for
// multi-GPU tasks.
package gpupacking

import (
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "gpupacking"

// Args configures GpuPacking (no parameters).
type Args struct{}

// Default returns the defaults.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (Args) Validate() error { return nil }

// Policy is the GpuPacking scorer.
type Policy struct{ idx []int }

var (
	_ policy.StateScorer = (*Policy)(nil)
	_ policy.TaskReader  = (*Policy)(nil)
)

// New builds GpuPacking.
func New(Args, policy.Deps) (*Policy, error) { return &Policy{}, nil }

// Score implements policy.Scorer. CPU-only tasks score 0 everywhere. On an
// idle node: 33 - idle GPUs (at least the idle GPU count). If the task must
// take idle GPUs on a used node: 50 - GPUs taken (at least 33). If it fits in
// GPUs already in use: 100 - (sum over those GPUs of free percent)/10 (at least 50).
func (p *Policy) Score(t *job.Task, n *cluster.Node) int64 {
	if t.GPUCount == 0 {
		return policy.MinScore
	}
	idle := n.IdleGPUs()
	if idle == n.NumGPUs() {
		return max(policy.MaxScore/3-int64(idle), int64(idle))
	}
	// Least free GPU first, stable by index.
	p.idx = p.idx[:0]
	for i := range n.GPUFree {
		p.idx = append(p.idx, i)
	}
	slices.SortStableFunc(p.idx, func(a, b int) int { return int(n.GPUFree[a] - n.GPUFree[b]) })
	need, idleUsed := t.GPUCount, 0
	var freePct int64
	for _, g := range p.idx {
		if need == 0 {
			break
		}
		if t.GPUMilli <= n.GPUFree[g] {
			need--
			freePct += n.GPUFree[g] * 100 / job.MilliPerGPU
			if n.GPUFree[g] == job.MilliPerGPU {
				idleUsed++
			}
		}
	}
	if need != 0 {
		return policy.MinScore
	}
	if idleUsed > 0 {
		return max(policy.MaxScore/2-int64(idleUsed), policy.MaxScore/3)
	}
	return max(policy.MaxScore-freePct/10, policy.MaxScore/2)
}

// StateOnly implements policy.StateScorer: the score reads the node's
// models, capacities and allocations only.
func (*Policy) StateOnly() {}

// TaskReads implements policy.TaskReader: the score and the GPUs chosen
// read the task's demand only, so a Placer caches them per demand.
func (*Policy) TaskReads() policy.TaskFields { return policy.ReadsDemand }
