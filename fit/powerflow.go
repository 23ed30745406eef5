package fit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/power"
)

// Profile is one profiling measurement of a training job: its
// configuration, step time and GPU energy per iteration (all GPUs).
type Profile struct {
	Config  perf.Config
	IterSec float64
	IterJ   float64
}

// StepParamNames name the parameters of FitStep's vector, in order.
var stepNames = []string{"alpha_io", "beta_io", "alpha_grad", "beta_grad", "kappa_grad",
	"alpha_local", "kappa_local", "beta_local", "theta_local",
	"alpha_node", "kappa_node", "beta_node", "theta_node", "gamma1", "gamma2"}

func stepFromVec(x []float64) perf.StepParams {
	return perf.StepParams{AlphaIO: x[0], BetaIO: x[1], AlphaGrad: x[2], BetaGrad: x[3], KappaGrad: x[4],
		Local:  perf.SyncParams{Alpha: x[5], Kappa: x[6], Beta: x[7], Theta: x[8]},
		Node:   perf.SyncParams{Alpha: x[9], Kappa: x[10], Beta: x[11], Theta: x[12]},
		Gamma1: x[13], Gamma2: x[14]}
}

// FitOptions set the solver effort.
type FitOptions struct {
	Starts  int // starting points per solve (default 3)
	MaxIter int // iterations per start (default 200)
	Seed    uint64
}

func (o FitOptions) starts() int {
	if o.Starts <= 0 {
		return 3
	}
	return o.Starts
}

// FitStep fits PowerFlow's step-time model (eqs. 1-5) to profiles by
// bounded nonlinear least squares on relative errors: every parameter
// non-negative, gamma1 and gamma2 in [1, 10].
func FitStep(ps []Profile, o FitOptions) (perf.StepParams, error) {
	if len(ps) == 0 {
		return perf.StepParams{}, errors.New("fit: no profiles")
	}
	var t1, bs1 float64
	for _, p := range ps {
		if p.IterSec <= 0 || p.Config.GPUs < 1 || p.Config.LocalBatch <= 0 || p.Config.Freq <= 0 {
			return perf.StepParams{}, fmt.Errorf("fit: bad profile %+v", p)
		}
		t1, bs1 = math.Max(t1, p.IterSec/float64(p.Config.GPUs)), math.Max(bs1, p.Config.LocalBatch)
	}
	inf := math.Inf(1)
	b := make([]Bound, len(stepNames))
	for i := range b {
		b[i] = Bound{0, inf}
	}
	b[13], b[14] = Bound{1, 10}, Bound{1, 10}
	start := []float64{0.05 * t1, 0.01 * t1 / bs1, 0.05 * t1, 0.1 * t1 / bs1, 0.7 * t1 / bs1,
		0.02 * t1, 0.002 * t1, 0.002 * t1, 0.02 * t1, 0.05 * t1, 0.005 * t1, 0.005 * t1, 0.05 * t1, 2, 1.5}
	prob := NLS{Bounds: b, Start: start, M: len(ps), MaxIter: o.MaxIter, Residuals: func(x, r []float64) {
		sp := stepFromVec(x)
		for i, p := range ps {
			r[i] = sp.Step(p.Config).Iter/p.IterSec - 1
		}
	}}
	x, _, err := prob.Solve(o.starts(), o.Seed)
	if err != nil {
		return perf.StepParams{}, err
	}
	return stepFromVec(x), nil
}

func energyFromVec(u0 float64, x []float64) power.DVFSParams {
	return power.DVFSParams{U0: u0,
		KappaGrad: power.Piecewise{Low: [2]float64{x[0], x[1]}, High: [4]float64{x[2], x[3], x[4], x[5]}},
		GradLow:   power.BatchTerm{Alpha: x[6], Theta: x[7], Beta: x[8]},
		GradHigh:  power.BatchTerm{Alpha: x[9], Theta: x[10], Beta: x[11]},
		Sync:      power.Piecewise{Low: [2]float64{x[12], x[13]}, High: [4]float64{x[14], x[15], x[16], x[17]}},
		StaticLow: x[18], StaticHigh: x[19]}
}

// FitEnergy fits PowerFlow's energy model (eqs. 6-15) to profiles, given
// the fitted step model that splits each step into T_grad, T_sync and
// T_iter. The breakpoint f0 is chosen from breakpoints (normalised
// frequencies) by the lowest residual; the other parameters by bounded
// nonlinear least squares on relative errors.
func FitEnergy(ps []Profile, step perf.StepParams, breakpoints []float64, o FitOptions) (power.DVFSParams, error) {
	if len(ps) == 0 || len(breakpoints) == 0 {
		return power.DVFSParams{}, errors.New("fit: no profiles or no breakpoints")
	}
	type part struct{ grad, sync, iter float64 }
	parts := make([]part, len(ps))
	var pmax float64
	for i, p := range ps {
		if p.IterJ <= 0 {
			return power.DVFSParams{}, fmt.Errorf("fit: bad profile %+v", p)
		}
		s := step.Step(p.Config)
		parts[i] = part{s.Grad, s.Sync, s.Iter}
		pmax = math.Max(pmax, p.IterJ/p.IterSec/float64(p.Config.GPUs))
	}
	c := 4 * pmax
	b := []Bound{{-c, c}, {-c, c}, {-c, c}, {-c, c}, {-c, c}, {-c, c},
		{0, 10}, {0, 1000}, {-10, 10}, {0, 10}, {0, 1000}, {-10, 10},
		{-c, c}, {-c, c}, {-c, c}, {-c, c}, {-c, c}, {-c, c},
		{0, pmax}, {0, pmax}}
	start := []float64{0.5 * pmax, 0.2 * pmax, 0, 0, 0.6 * pmax, 0.1 * pmax,
		0.01, 1, 1, 0.01, 1, 1,
		0.2 * pmax, 0.05 * pmax, 0, 0, 0.2 * pmax, 0.05 * pmax,
		0.2 * pmax, 0.2 * pmax}
	var best power.DVFSParams
	bestSSE := math.Inf(1)
	for bi, u0 := range breakpoints {
		prob := NLS{Bounds: b, Start: start, M: len(ps), MaxIter: o.MaxIter, Residuals: func(x, r []float64) {
			ep := energyFromVec(u0, x)
			for i, p := range ps {
				c := p.Config
				r[i] = ep.IterJoules(c.GPUs, c.LocalBatch, c.Freq, parts[i].grad, parts[i].sync, parts[i].iter)/p.IterJ - 1
			}
		}}
		x, sse, err := prob.Solve(o.starts(), o.Seed+uint64(bi))
		if err != nil {
			continue
		}
		if sse < bestSSE {
			best, bestSSE = energyFromVec(u0, x), sse
		}
	}
	if math.IsInf(bestSSE, 1) {
		return power.DVFSParams{}, errors.New("fit: energy model: no breakpoint gave a solution")
	}
	return best, nil
}

// HoldOut splits n items into a training and a test set, the test set
// holding frac of them (at least one), chosen by a seeded shuffle.
func HoldOut(n int, frac float64, seed uint64) (train, test []int) {
	idx := rand.New(rand.NewPCG(seed, 0x686f6c64)).Perm(n)
	k := max(1, int(math.Round(frac*float64(n))))
	if k >= n {
		k = n - 1
	}
	test, train = idx[:k], idx[k:]
	return train, test
}
