// Package fgd implements Fragmentation Gradient Descent (Weng et al., "Beware
// of Fragmentation", USENIX ATC'23), as used by the PWR paper (pwr-fgd
// Sections II and IV-A): a task goes where the expected GPU fragmentation of
// the node, measured against a target workload, grows the least.
package fgd

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "fgd"

// Args configures FGD.
type Args struct {
	// PopularityThreshold keeps the most popular task classes until they
	// cover this percentage of the workload's tasks (FGD simulator: 95).
	PopularityThreshold int `yaml:"popularity_threshold"`
	// IncludeCPUTasks counts CPU-only tasks in the target workload (FGD simulator: true).
	IncludeCPUTasks bool `yaml:"include_cpu_tasks"`
}

// Default returns the FGD simulator's settings.
func (Args) Default() Args { return Args{PopularityThreshold: 95, IncludeCPUTasks: true} }

// Validate names every bad field.
func (a Args) Validate() error {
	if a.PopularityThreshold <= 0 || a.PopularityThreshold > 100 {
		return fmt.Errorf("fgd.popularity_threshold: %d, want 1..100", a.PopularityThreshold)
	}
	return nil
}

// Class is one task class of the target workload with its popularity.
type Class struct {
	CPUMilli   int64
	GPUMilli   int64
	GPUCount   int
	Spec       []string
	spec       string
	Popularity float64
}

// The seven ways a node can look to a task class (FGD Section 3).
const (
	q1LackBoth = iota
	q2LackGPU
	q3Satisfied
	q4LackCPU
	xlSatisfied
	xrLackCPU
	noAccess
	numFragTypes
)

// Workload is FGD's target workload: the task classes and their popularity.
type Workload struct {
	Classes []Class
	// MIG is the workload of the tasks asking for MIG instances, over
	// their profiles (NewMIGWorkload): the fragmentation of a node in MIG
	// mode is measured with it, that of any other node with Classes,
	// which leave MIG tasks out (they cannot use a time-sliced GPU).
	MIG    MIGWorkload
	models map[string]uint16
	memo   map[stateKey]float64
}

// NewWorkload derives the target workload from a task population the way the
// FGD simulator does: tasks are grouped by (CPU, GPU milli, GPU count, GPU
// model constraint) (memory is ignored), classes sorted by count and then by
// those fields in decreasing order, the most popular kept until they cover
// the threshold, and popularities renormalised to sum to 1.
func NewWorkload(tasks []job.Task, a Args) (*Workload, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	type key struct {
		cpu, milli int64
		count      int
		spec       string
	}
	counts := map[key]float64{}
	specs := map[key][]string{}
	var total float64
	var migs []string
	for i := range tasks {
		t := &tasks[i]
		if t.MIG() {
			migs = append(migs, t.MIGProfile)
			continue
		}
		if !a.IncludeCPUTasks && t.GPUCount == 0 {
			continue
		}
		k := key{t.CPUMilli, t.GPUMilli, t.GPUCount, t.SpecString()}
		counts[k]++
		specs[k] = t.GPUSpec
		total++
	}
	var mw MIGWorkload
	if len(migs) > 0 {
		mw = NewMIGWorkload(migs)
	}
	if total == 0 && len(migs) == 0 {
		return nil, fmt.Errorf("fgd: empty target workload")
	}
	cls := make([]Class, 0, len(counts))
	for k, c := range counts {
		cls = append(cls, Class{CPUMilli: k.cpu, GPUMilli: k.milli, GPUCount: k.count, Spec: specs[k], spec: k.spec, Popularity: c})
	}
	// Decreasing count; ties by decreasing (cpu, gpu milli, gpu count, spec).
	sort.Slice(cls, func(i, j int) bool {
		a, b := cls[i], cls[j]
		if a.Popularity != b.Popularity {
			return a.Popularity > b.Popularity
		}
		if a.CPUMilli != b.CPUMilli {
			return a.CPUMilli > b.CPUMilli
		}
		if a.GPUMilli != b.GPUMilli {
			return a.GPUMilli > b.GPUMilli
		}
		if a.GPUCount != b.GPUCount {
			return a.GPUCount > b.GPUCount
		}
		return a.spec > b.spec
	})
	expected := float64(a.PopularityThreshold) * total / 100.0
	var cum float64
	i := 0
	for cum < expected && i < len(cls) {
		n := cls[i].Popularity
		cum += n
		cls[i].Popularity = cls[i].Popularity / total
		i++
	}
	if i < len(cls) {
		cls = cls[:i]
		for j := range cls {
			cls[j].Popularity /= cum / total
		}
	}
	return &Workload{Classes: cls, MIG: mw, models: map[string]uint16{}, memo: map[stateKey]float64{}}, nil
}

func accessible(nodeModel string, spec []string) bool {
	if len(spec) == 0 {
		return true
	}
	if nodeModel == "" {
		return false
	}
	return slices.Contains(spec, nodeModel)
}

// Frag is the FGD fragmentation of a node state: the expected milli-GPU that
// a task drawn from the workload cannot use (sum over all cases but Q3, with
// the GPUs too small for the class counted inside Q3).
func (w *Workload) Frag(model string, cpuFree int64, gpuFree []int64) float64 {
	var left int64
	for _, g := range gpuFree {
		left += g
	}
	var data [numFragTypes]float64
	for ci := range w.Classes {
		c := &w.Classes[ci]
		typ := classify(model, cpuFree, gpuFree, c)
		if typ == q3Satisfied {
			var fragMilli int64
			for _, g := range gpuFree {
				if g < c.GPUMilli {
					fragMilli += g
				}
			}
			data[q2LackGPU] += c.Popularity * float64(fragMilli)
			data[q3Satisfied] += c.Popularity * float64(left-fragMilli)
		} else {
			data[typ] += c.Popularity * float64(left)
		}
	}
	var out float64
	for i := 0; i < numFragTypes; i++ {
		if i != q3Satisfied {
			out += data[i]
		}
	}
	return out
}

func classify(model string, cpuFree int64, gpuFree []int64, c *Class) int {
	if c.GPUMilli == 0 {
		if cpuFree >= c.CPUMilli {
			return xlSatisfied
		}
		return xrLackCPU
	}
	if !accessible(model, c.Spec) {
		return noAccess
	}
	need := c.GPUCount
	fits := false
	for _, g := range gpuFree {
		if g >= c.GPUMilli {
			need--
			if need <= 0 {
				fits = true
				break
			}
		}
	}
	cpuOK := cpuFree >= c.CPUMilli
	switch {
	case fits && cpuOK:
		return q3Satisfied
	case fits:
		return q4LackCPU
	case cpuOK:
		return q2LackGPU
	}
	return q1LackBoth
}

type stateKey struct {
	model uint16
	n     uint8
	cpu   int64
	gpu   [8]int16
}

// NodeFrag is Frag for a node's current state, memoised on the state. A
// node in MIG mode has the MIG-aware reading (migNodeFrag).
func (w *Workload) NodeFrag(n *cluster.Node) float64 {
	if n.MIG != nil {
		return w.migNodeFrag(n)
	}
	return w.fragMemo(n.GPUModel, n.FreeCPUMilli, n.GPUFree)
}

func (w *Workload) fragMemo(model string, cpu int64, gpus []int64) float64 {
	if len(gpus) > 8 {
		return w.Frag(model, cpu, gpus)
	}
	m, ok := w.models[model]
	if !ok {
		m = uint16(len(w.models))
		w.models[model] = m
	}
	k := stateKey{model: m, n: uint8(len(gpus)), cpu: cpu}
	for i, g := range gpus {
		k.gpu[i] = int16(g)
	}
	// Fragmentation does not depend on GPU order: sort descending.
	s := k.gpu[:len(gpus)]
	slices.SortFunc(s, func(a, b int16) int { return int(b) - int(a) })
	if v, ok := w.memo[k]; ok {
		return v
	}
	v := w.Frag(model, cpu, gpus)
	w.memo[k] = v
	return v
}

// Policy scores nodes by the fragmentation they would gain.
type Policy struct {
	W   *Workload
	buf []int64
}

var (
	_ policy.StateScorer = (*Policy)(nil)
	_ policy.TaskReader  = (*Policy)(nil)
	_ policy.Scorer      = (*Policy)(nil)
	_ policy.GPUSelector = (*Policy)(nil)
)

// New builds FGD over the target workload in deps.Workload.
func New(a Args, deps policy.Deps) (*Policy, error) {
	w, err := NewWorkload(deps.Workload, a)
	if err != nil {
		return nil, err
	}
	return &Policy{W: w}, nil
}

func sigmoidScore(delta float64) int64 {
	return int64(1 / (1 + math.Exp(-delta/1000)) * float64(policy.MaxScore))
}

// Score implements policy.Scorer: sigmoid of the fragmentation decrease
// (in GPUs) scaled to 0..100 and truncated to an integer, as the FGD
// simulator's score plugin does. A shared task takes its best GPU.
func (p *Policy) Score(t *job.Task, n *cluster.Node) int64 {
	s, _ := p.best(t, n)
	return s
}

// SelectGPUs implements policy.GPUSelector: the GPU with the best score
// (lowest index among equal integer scores) for a shared task, the idle GPUs
// with the lowest indices for whole GPUs.
func (p *Policy) SelectGPUs(t *job.Task, n *cluster.Node) []int {
	if t.GPUCount == 0 {
		return nil
	}
	_, g := p.best(t, n)
	return g
}

func (p *Policy) best(t *job.Task, n *cluster.Node) (int64, []int) {
	if t.MIG() {
		s, g, _, ok := p.bestMIG(t, n)
		if !ok {
			return 0, nil
		}
		return s, []int{g}
	}
	old := p.W.NodeFrag(n)
	p.buf = append(p.buf[:0], n.GPUFree...)
	cpu := n.FreeCPUMilli - t.CPUMilli
	if t.Shared() {
		score, gpu := int64(0), -1
		for i, f := range n.GPUFree {
			if f < t.GPUMilli {
				continue
			}
			p.buf[i] -= t.GPUMilli
			s := sigmoidScore(old - p.W.fragMemo(n.GPUModel, cpu, p.buf))
			p.buf[i] += t.GPUMilli
			if gpu < 0 || s > score {
				score, gpu = s, i
			}
		}
		if gpu < 0 {
			return 0, nil
		}
		return score, []int{gpu}
	}
	var gpus []int
	if t.GPUCount > 0 {
		gpus = cluster.FirstIdleGPUs(n, t.GPUCount)
		for _, g := range gpus {
			p.buf[g] -= t.GPUMilli
		}
	}
	return sigmoidScore(old - p.W.fragMemo(n.GPUModel, cpu, p.buf)), gpus
}

// StateOnly implements policy.StateScorer: the score reads the node's
// models, capacities and allocations only.
func (*Policy) StateOnly() {}

// TaskReads implements policy.TaskReader: the score and the GPUs chosen
// read the task's demand only, so a Placer caches them per demand.
func (*Policy) TaskReads() policy.TaskFields { return policy.ReadsDemand }
