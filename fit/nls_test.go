package fit

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/perf"
)

func TestNLSRecoversParameters(t *testing.T) {
	// y = a*exp(-b*x) + c with a=3, b=0.7, c=0.5 on x = 0..4.
	xs := []float64{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4}
	ys := make([]float64, len(xs))
	for i, x := range xs {
		ys[i] = 3*math.Exp(-0.7*x) + 0.5
	}
	p := NLS{Bounds: []Bound{{0, math.Inf(1)}, {0, 5}, {0, 2}}, Start: []float64{1, 1, 1}, M: len(xs),
		Residuals: func(v, r []float64) {
			for i, x := range xs {
				r[i] = v[0]*math.Exp(-v[1]*x) + v[2] - ys[i]
			}
		}}
	x, sse, err := p.Solve(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sse > 1e-12 || math.Abs(x[0]-3) > 1e-5 || math.Abs(x[1]-0.7) > 1e-5 || math.Abs(x[2]-0.5) > 1e-5 {
		t.Fatalf("got %v (sse %g), want [3 0.7 0.5]", x, sse)
	}
	// With c bounded to [0, 0.2] the fit must stay inside the bound.
	p.Bounds[2] = Bound{0, 0.2}
	p.Start[2] = 0.1
	x, _, err = p.Solve(3, 1)
	if err != nil || x[2] > 0.2 || x[2] < 0 {
		t.Fatalf("bounded fit %v, %v", x, err)
	}
}

func TestFitStepOnItsOwnModel(t *testing.T) {
	want := perf.StepParams{AlphaIO: 0.004, BetaIO: 0.0002, AlphaGrad: 0.01, BetaGrad: 0.0004, KappaGrad: 0.0015,
		Local: perf.SyncParams{Alpha: 0.006, Kappa: 0.001, Beta: 0.0005, Theta: 0.002},
		Node:  perf.SyncParams{Alpha: 0.02, Kappa: 0.002, Beta: 0.001, Theta: 0.005}, Gamma1: 2, Gamma2: 1.5}
	var ps []Profile
	for _, bs := range []float64{64, 128, 256} {
		for _, n := range []int{1, 2, 4, 8, 16, 32} {
			for _, f := range []float64{0.6, 0.7, 0.8, 0.9, 1} {
				c := perf.Config{GPUs: n, PerNode: min(n, 8), LocalBatch: bs / float64(n), Freq: f}
				ps = append(ps, Profile{Config: c, IterSec: want.Step(c).Iter, IterJ: 1})
			}
		}
	}
	got, err := FitStep(ps, FitOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var pred, act []float64
	for _, p := range ps {
		pred, act = append(pred, got.Step(p.Config).Iter), append(act, p.IterSec)
	}
	if m := MAPE(pred, act); m > 1 {
		t.Fatalf("MAPE %.2f%% fitting noiseless data of the model's own form, want < 1%%", m)
	}
}

func TestHoldOut(t *testing.T) {
	tr, te := HoldOut(100, 0.1, 7)
	if len(tr) != 90 || len(te) != 10 {
		t.Fatalf("split %d/%d", len(tr), len(te))
	}
	seen := map[int]bool{}
	for _, i := range append(tr, te...) {
		if seen[i] {
			t.Fatalf("index %d twice", i)
		}
		seen[i] = true
	}
}
