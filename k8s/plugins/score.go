package plugins

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/dotprod"
	"github.com/wattsched/wattsched/policy/gpuclustering"
	"github.com/wattsched/wattsched/policy/gpupacking"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
)

// Score plugin names.
const (
	PWRName           = "PWR"
	FGDName           = "FGD"
	BestFitName       = "BestFit"
	DotProdName       = "DotProd"
	GpuPackingName    = "GpuPacking"
	GpuClusteringName = "GpuClustering"
)

// Score wraps one core scorer: PreScore computes the raw scores of the
// feasible nodes one after another (the core scorers are not safe for
// concurrent use), Score returns them, and NormalizeScore applies the
// scorer's own normalisation over the feasible nodes, as the core Placer
// does. A profile's weighted sum of these plugins is the core Placer's
// weighted sum.
type Score struct {
	name   string
	scorer policy.Scorer
	s      *shared
	key    fwk.StateKey
	// explain (argument explain: true) makes PreBind write the pod's
	// ExplainAnnotation; h is the handle it patches the pod through.
	explain bool
	h       framework.Handle
}

var (
	_ framework.PreScorePlugin = (*Score)(nil)
	_ framework.ScorePlugin    = (*Score)(nil)
)

type rawScores map[string]int64

func (r rawScores) Clone() fwk.StateData { return r }

// Name implements framework.Plugin.
func (p *Score) Name() string { return p.name }

// PreScore scores every feasible node.
func (p *Score) PreScore(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	cd := demand(state, pod)
	if cd.err != nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, cd.err.Error())
	}
	out := make(rawScores, len(nodes))
	for _, ni := range nodes {
		n, err := p.s.node(ni)
		if err != nil {
			return fwk.AsStatus(err)
		}
		out[ni.Node().Name] = p.scorer.Score(&cd.task, n)
	}
	state.Write(p.key, out)
	return nil
}

// Score returns PreScore's raw score.
func (p *Score) Score(_ context.Context, state fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	d, err := state.Read(p.key)
	if err != nil {
		return 0, fwk.AsStatus(fmt.Errorf("%s: no PreScore state: %w", p.name, err))
	}
	v, ok := d.(rawScores)[ni.Node().Name]
	if !ok {
		return 0, fwk.AsStatus(fmt.Errorf("%s: node %s was not pre-scored", p.name, ni.Node().Name))
	}
	return v, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (p *Score) ScoreExtensions() framework.ScoreExtensions { return p }

// NormalizeScore applies the core scorer's normalisation, if it has one.
func (p *Score) NormalizeScore(_ context.Context, state fwk.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *fwk.Status {
	nz, ok := p.scorer.(policy.Normalizer)
	if !ok {
		p.keepNormalised(state, scores)
		return nil
	}
	v := make([]int64, len(scores))
	for i := range scores {
		v[i] = scores[i].Score
	}
	nz.Normalize(v)
	for i := range scores {
		scores[i].Score = v[i]
	}
	p.keepNormalised(state, scores)
	return nil
}

func newScore(name string, h framework.Handle, sc policy.Scorer, explain bool) *Score {
	return &Score{name: name, scorer: sc, s: sharedState(h), key: fwk.StateKey("wattsched.io/score/" + name), explain: explain, h: h}
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
func NewPWR(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
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

// NewFGD is the FGD score plugin's factory; its arguments are WorkloadArgs
// and explain (ScoreArgs).
func NewFGD(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
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
	return func(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
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
