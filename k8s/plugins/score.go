package plugins

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/dotprod"
	"github.com/wattsched/wattsched/policy/energy"
	"github.com/wattsched/wattsched/policy/gpuclustering"
	"github.com/wattsched/wattsched/policy/gpupacking"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
)

// Score plugin names.
const (
	PWRName           = "PWR"
	EnergyName        = "Energy"
	FGDName           = "FGD"
	BestFitName       = "BestFit"
	DotProdName       = "DotProd"
	GpuPackingName    = "GpuPacking"
	GpuClusteringName = "GpuClustering"
)

// Score wraps one core scorer: PreScore computes the raw score of each
// state the feasible nodes are in (nodes in one state, such as the empty
// nodes of one shape, share a score; see stateKey) one after another (the
// core scorers are not safe for concurrent use), Score returns the
// node's, and NormalizeScore applies the scorer's own normalisation over
// the feasible nodes, as the core Placer does. A profile's weighted sum
// of these plugins is the core Placer's weighted sum.
//
// The per-state scores live in the plugin, stamped with the cycle that
// computed them, and are reused from cycle to cycle without allocating:
// kube-scheduler runs one scheduling cycle at a time per profile, and
// PreScore writes them before the framework calls Score (in parallel,
// reading only).
type Score struct {
	name   string
	scorer policy.Scorer
	s      *shared
	key    fwk.StateKey
	// explain (argument explain: true) makes PreBind write the pod's
	// ExplainAnnotation; h is the handle it patches the pod through.
	explain bool
	h       fwk.Handle

	// cycle numbers PreScore calls; stamp[id] == cycle when val[id] is
	// this cycle's score of state id.
	cycle uint64
	stamp []uint64
	val   []int64
	// norm is NormalizeScore's buffer.
	norm []int64
	// last are the normalised scores of cycle lastCycle, read at the
	// GPU plugin's Reserve for the metrics (metrics.go).
	last      fwk.NodeScoreList
	lastCycle uint64
	// mu serialises the scorer outside PreScore (Score's fallback).
	mu sync.Mutex
}

var (
	_ fwk.PreScorePlugin = (*Score)(nil)
	_ fwk.ScorePlugin    = (*Score)(nil)
)

// rawScores are the raw scores by node name, kept for explain only.
type rawScores map[string]int64

func (r rawScores) Clone() fwk.StateData { return r }

// scoreCycle marks a cycle's PreScore in the CycleState.
type scoreCycle struct {
	cycle uint64
	raw   rawScores // explain only
}

func (c *scoreCycle) Clone() fwk.StateData { return c }

// Name implements fwk.Plugin.
func (p *Score) Name() string { return p.name }

// PreScore scores every state the feasible nodes are in.
func (p *Score) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	cd := demand(state, pod)
	if cd.err != nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, cd.err.Error())
	}
	p.cycle++
	c := &scoreCycle{cycle: p.cycle}
	if p.explain {
		c.raw = make(rawScores, len(nodes))
	}
	if k := p.s.numStates(); len(p.stamp) < k {
		p.stamp = append(p.stamp, make([]uint64, k-len(p.stamp))...)
		p.val = append(p.val, make([]int64, k-len(p.val))...)
	}
	for _, ni := range nodes {
		e, err := p.s.entry(ni)
		if err == nil {
			err = e.err
		}
		if err != nil {
			return fwk.AsStatus(err)
		}
		id := int(e.state)
		if id >= len(p.stamp) { // a state interned since numStates
			p.stamp = append(p.stamp, make([]uint64, id+1-len(p.stamp))...)
			p.val = append(p.val, make([]int64, id+1-len(p.val))...)
		}
		if p.stamp[id] != p.cycle {
			p.val[id], p.stamp[id] = p.scorer.Score(&cd.task, e.n), p.cycle
		}
		if c.raw != nil {
			c.raw[ni.Node().Name] = p.val[id]
		}
	}
	state.Write(p.key, c)
	return nil
}

// Score returns the raw score PreScore computed for the node's state.
func (p *Score) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	d, err := state.Read(p.key)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("%s: no PreScore state: %w", p.name, err))
	}
	c := d.(*scoreCycle)
	e, err := p.s.entry(ni)
	if err == nil {
		err = e.err
	}
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	if id := int(e.state); c.cycle == p.cycle && id < len(p.stamp) && p.stamp[id] == c.cycle {
		return p.val[id], nil
	}
	// Not pre-scored (a node PreScore was not given): score it here.
	cd := demand(state, pod)
	if cd.err != nil {
		return 0, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, cd.err.Error())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.scorer.Score(&cd.task, e.n), nil
}

// ScoreExtensions implements fwk.ScorePlugin.
func (p *Score) ScoreExtensions() fwk.ScoreExtensions { return p }

// NormalizeScore applies the core scorer's normalisation, if it has one.
func (p *Score) NormalizeScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	nz, ok := p.scorer.(policy.Normalizer)
	if !ok {
		p.keepNormalised(state, scores)
		p.keepScores(scores)
		return nil
	}
	v := p.norm[:0]
	for i := range scores {
		v = append(v, scores[i].Score)
	}
	p.norm = v
	nz.Normalize(v)
	for i := range scores {
		scores[i].Score = v[i]
	}
	p.keepNormalised(state, scores)
	p.keepScores(scores)
	return nil
}

func newScore(name string, h fwk.Handle, sc policy.Scorer, explain bool) *Score {
	p := &Score{name: name, scorer: sc, s: sharedState(h), key: fwk.StateKey("wattsched.io/score/" + name), explain: explain, h: h}
	p.s.mu.Lock()
	p.s.scorers = append(p.s.scorers, p)
	p.s.mu.Unlock()
	chosenScore.WithLabelValues(name, profileName(h)) // from zero, as zeroPlaced
	return p
}

// scoreArgs decodes the arguments of a score plugin other than FGD
// (ScoreArgs), strictly.
func scoreArgs(name string, obj runtime.Object) (ScoreArgs, error) {
	var a ScoreArgs
	if err := decode(obj, &a); err != nil {
		return a, fmt.Errorf("%s args: %w", name, err)
	}
	return a, nil
}

// NewPWR is the PWR score plugin's factory (pwr-fgd Algorithm 1, with the
// PWR estimated power model).
func NewPWR(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	a, err := scoreArgs(PWRName, obj)
	if err != nil {
		return nil, err
	}
	p, err := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}})
	if err != nil {
		return nil, err
	}
	return newScore(PWRName, h, p, a.Explain), nil
}

// NewEnergy is the energy score plugin's factory (docs/policies/energy.md):
// the core energy scorer with the PWR power model and the profile's
// hardware catalog (the WattschedGPU plugin's catalogFile and
// extraCatalogFile), reading a pod's workload class and reference GPU
// from its wattsched.io/workload and wattsched.io/reference-gpu
// annotations. Its GPUs are PWR's: pair it with gpuSelector: pwr.
func NewEnergy(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	a, err := scoreArgs(EnergyName, obj)
	if err != nil {
		return nil, err
	}
	s := sharedState(h)
	e := &energyScorer{s: s}
	if _, err := e.policy(); err != nil {
		return nil, err
	}
	return newScore(EnergyName, h, e, a.Explain), nil
}

// energyScorer is the core energy scorer built on the profile's catalog
// as it is when scoring (the WattschedGPU plugin may replace it after this
// plugin was built); it logs each of the scorer's notes (where it fell
// back to PWR's score) once.
type energyScorer struct {
	s      *shared
	cat    *hw.Catalog
	p      *energy.Policy
	logged int
}

var (
	_ policy.MinMaxNormalizer = (*energyScorer)(nil)
	_ policy.TaskReader       = (*energyScorer)(nil)
)

func (e *energyScorer) policy() (*energy.Policy, error) {
	e.s.mu.RLock()
	c := e.s.cat
	e.s.mu.RUnlock()
	if c != e.cat || e.p == nil {
		p, err := energy.New(energy.Args{}, policy.Deps{Catalog: c, Power: power.PWR{}})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnergyName, err)
		}
		e.cat, e.p, e.logged = c, p, 0
	}
	return e.p, nil
}

// Score implements policy.Scorer with the core energy scorer.
func (e *energyScorer) Score(t *job.Task, n *cluster.Node) int64 {
	p, err := e.policy()
	if err != nil { // New fails only without a catalog; the profile always has one
		return 0
	}
	v := p.Score(t, n)
	if p.NumNotes() > e.logged {
		notes := p.Notes()
		for _, note := range notes {
			klog.InfoS("energy score falls back to PWR's", "plugin", EnergyName, "note", note)
		}
		e.logged = len(notes)
	}
	return v
}

// Normalize implements policy.Normalizer as the core scorer does.
func (e *energyScorer) Normalize(scores []int64) {
	policy.MinMaxNormalize(scores, e.NormalizeEqual())
}

// NormalizeEqual implements policy.MinMaxNormalizer.
func (*energyScorer) NormalizeEqual() int64 { return policy.MaxScore }

// TaskReads implements policy.TaskReader as the core scorer does.
func (*energyScorer) TaskReads() policy.TaskFields {
	return (*energy.Policy)(nil).TaskReads()
}

// NewFGD is the FGD score plugin's factory; its arguments are WorkloadArgs
// and explain (ScoreArgs).
func NewFGD(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var a fgdArgs
	if err := decode(obj, &a); err != nil {
		return nil, fmt.Errorf("%s args: %w", FGDName, err)
	}
	p, err := a.build()
	if err != nil {
		return nil, fmt.Errorf("%s args: %w", FGDName, err)
	}
	return newScore(FGDName, h, p, a.Explain), nil
}

func simple[P policy.Scorer](name string, mk func() (P, error)) frameworkruntime.PluginFactory {
	return func(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		a, err := scoreArgs(name, obj)
		if err != nil {
			return nil, err
		}
		p, err := mk()
		if err != nil {
			return nil, err
		}
		return newScore(name, h, p, a.Explain), nil
	}
}

// Factories of the baseline score plugins.
var (
	NewBestFit    = simple(BestFitName, func() (bestfit.Policy, error) { return bestfit.New(bestfit.Args{}, policy.Deps{}) })
	NewDotProd    = simple(DotProdName, func() (dotprod.Policy, error) { return dotprod.New(dotprod.Args{}, policy.Deps{}) })
	NewGpuPacking = simple(GpuPackingName, func() (*gpupacking.Policy, error) {
		return gpupacking.New(gpupacking.Args{}, policy.Deps{})
	})
	NewGpuClustering = simple(GpuClusteringName, func() (gpuclustering.Policy, error) {
		return gpuclustering.New(gpuclustering.Args{}, policy.Deps{})
	})
)
