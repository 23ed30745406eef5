// Package energy is an energy-per-work scorer for clusters that mix GPU
// models: a task goes to the feasible node where it needs the least
// energy, the power it adds there (PWR's estimate, pwr-fgd eqs. 1-3) times
// how long it runs on that node's GPU model (its recorded duration scaled
// by the catalog's speeds through perf.Speed, the rule every engine uses).
// Where no speed is known it scores as PWR does and says so (Notes).
// See docs/policies/energy.md.
package energy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
)

// Name is the policy's registry name.
const Name = "energy"

// Args configures the energy scorer (it has no parameters: the power model
// and the catalog come from Deps).
type Args struct{}

// Default returns the defaults.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (Args) Validate() error { return nil }

// Policy is the energy scorer. It is not safe for concurrent use (one run,
// one goroutine; the k8s plugin serialises its calls).
type Policy struct {
	model power.Model
	speed perf.Speed
	pwr   *pwr.Policy
	// notes are the distinct reasons a score fell back to PWR's.
	notes map[string]bool
}

var (
	_ policy.StateScorer      = (*Policy)(nil)
	_ policy.MinMaxNormalizer = (*Policy)(nil)
	_ policy.GPUSelector      = (*Policy)(nil)
	_ policy.TaskReader       = (*Policy)(nil)
	_ policy.Noter            = (*Policy)(nil)
)

// New builds the energy scorer; deps.Power defaults to the PWR estimated
// power model; deps.Catalog gives the GPU models' speeds and is required.
func New(a Args, deps policy.Deps) (*Policy, error) {
	if deps.Catalog == nil {
		return nil, fmt.Errorf("%s needs the hardware catalog (its GPU speeds)", Name)
	}
	m := deps.Power
	if m == nil {
		m = power.PWR{}
	}
	p, err := pwr.New(pwr.Args{}, policy.Deps{Power: m})
	if err != nil {
		return nil, err
	}
	return &Policy{model: m, speed: perf.Speed{Catalog: deps.Catalog}, pwr: p, notes: map[string]bool{}}, nil
}

// Score implements policy.Scorer: minus the energy t needs on n per
// second of its reference work, in joules (watts added x the factor by
// which n's GPU model stretches the task's duration), truncated to an
// integer. Multiplying by the task's Work would not change which node wins
// (Work is the same on every node, and the scores are min-max normalised),
// so the score does not read it. With a factor of 1 (no reference GPU, a
// CPU-only task, the reference model itself, or no speed known) the score
// is PWR's.
func (p *Policy) Score(t *job.Task, n *cluster.Node) int64 {
	gpus := p.pwr.SelectGPUs(t, n)
	if t.Shared() && gpus == nil {
		return 0 // no GPU has room: PWR's score of an infeasible shared task
	}
	inc := power.Increase(p.model, n, &t.Demand, gpus)
	return -int64(float64(inc) * p.factor(t, n))
}

// factor is perf.Speed's factor of t on n, or 1 (PWR's score) with a note
// where it has no speed to give.
func (p *Policy) factor(t *job.Task, n *cluster.Node) float64 {
	if t.GPUCount > 0 && n.GPU != nil && t.RefGPU == "" {
		p.notes["GPU pods without a reference GPU (trace.reference_gpu or a reference_gpu column): their speed on each GPU model is unknown, so they are scored as PWR scores them (the power they add)"] = true
		return 1
	}
	f, err := p.speed.Factor(t, n)
	if err != nil {
		// Factor's error names the task; the note names what is missing
		// (the catalog's error) so that it reads the same for every task.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		p.notes[fmt.Sprintf("%s pods measured on %s, on %s nodes: %v; scored there as PWR scores them (the power they add)", perf.Workload(t), t.RefGPU, n.GPU.Name, err)] = true
		return 1
	}
	return f
}

// Normalize implements policy.Normalizer: min-max onto 0..100 over the
// feasible nodes, 100 for all when all are equal (as PWR).
func (p *Policy) Normalize(scores []int64) { policy.MinMaxNormalize(scores, p.NormalizeEqual()) }

// NormalizeEqual implements policy.MinMaxNormalizer.
func (*Policy) NormalizeEqual() int64 { return policy.MaxScore }

// SelectGPUs implements policy.GPUSelector: PWR's choice (the GPUs of one
// node are of one model, so the GPU that adds the least power is also the
// one that adds the least energy).
func (p *Policy) SelectGPUs(t *job.Task, n *cluster.Node) []int { return p.pwr.SelectGPUs(t, n) }

// SelectMIG implements policy.MIGSelector: PWR's instance (pwr.SelectMIG).
func (p *Policy) SelectMIG(t *job.Task, n *cluster.Node) (gpu, start int, ok bool) {
	return p.pwr.SelectMIG(t, n)
}

// StateOnly implements policy.StateScorer: the score reads the node's
// models, capacities and allocations only.
func (*Policy) StateOnly() {}

// TaskReads implements policy.TaskReader: the demand (the power added),
// the workload class and the reference GPU (the speed factor).
func (*Policy) TaskReads() policy.TaskFields {
	return policy.ReadsDemand | policy.ReadsKind | policy.ReadsRefGPU
}

// NumNotes is the number of distinct notes so far (len(Notes()) without
// building them).
func (p *Policy) NumNotes() int { return len(p.notes) }

// Notes implements policy.Noter: why scores fell back to PWR's, sorted.
func (p *Policy) Notes() []string {
	out := make([]string, 0, len(p.notes))
	for k := range p.notes {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
