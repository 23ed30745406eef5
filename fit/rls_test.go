package fit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRLSExact: noiseless observations of y = 3 x0 - 2 x1 + 5 (x2 = 1)
// give back the coefficients; with delta large the prior barely biases
// them.
func TestRLSExact(t *testing.T) {
	r, err := NewRLS(3, 1e8, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		x := []float64{rng.Float64() * 10, rng.Float64() * 4, 1}
		if err := r.Update(x, 3*x[0]-2*x[1]+5); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []float64{3, -2, 5} {
		if math.Abs(r.Theta[i]-want) > 1e-5 {
			t.Errorf("theta[%d] = %v, want %v", i, r.Theta[i], want)
		}
	}
	if r.N != 50 {
		t.Errorf("N = %d, want 50", r.N)
	}
}

// TestRLSMatchesBatch: on noisy data RLS with a vague prior ends where
// batch least squares (FitLinear) does.
func TestRLSMatchesBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	r, _ := NewRLS(3, 1e9, 1)
	var d Dataset
	for range 200 {
		x0, x1 := rng.Float64()*5, rng.Float64()*2
		y := 1.5*x0 + 0.7*x1 + 20 + rng.NormFloat64()
		if err := r.Update([]float64{x0, x1, 1}, y); err != nil {
			t.Fatal(err)
		}
		d.X, d.Y = append(d.X, []float64{x0, x1}), append(d.Y, y)
	}
	l, err := FitLinear(d)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{l.Coef[0], l.Coef[1], l.Intercept}
	for i := range want {
		if math.Abs(r.Theta[i]-want[i]) > 1e-4 {
			t.Errorf("theta[%d] = %v, batch %v", i, r.Theta[i], want[i])
		}
	}
}

// TestRLSForgetting: with lambda < 1 the estimate follows a change of the
// true slope (2 then 4) and ends near the new one; without forgetting it
// stays between.
func TestRLSForgetting(t *testing.T) {
	run := func(lambda float64) float64 {
		r, _ := NewRLS(1, 1e6, lambda)
		for i := range 400 {
			slope := 2.0
			if i >= 200 {
				slope = 4
			}
			x := float64(i%7 + 1)
			_ = r.Update([]float64{x}, slope*x)
		}
		return r.Theta[0]
	}
	if got := run(0.9); math.Abs(got-4) > 1e-3 {
		t.Errorf("lambda 0.9: slope %v, want 4", got)
	}
	if got := run(1); got > 3.9 || got < 2.1 {
		t.Errorf("lambda 1: slope %v, want between the two (no forgetting)", got)
	}
}

func TestRLSErrors(t *testing.T) {
	for _, c := range []struct {
		n             int
		delta, lambda float64
	}{{0, 1, 1}, {2, 0, 1}, {2, 1, 0}, {2, 1, 1.5}, {2, math.Inf(1), 1}} {
		if _, err := NewRLS(c.n, c.delta, c.lambda); err == nil {
			t.Errorf("NewRLS(%d, %v, %v): no error", c.n, c.delta, c.lambda)
		}
	}
	r, _ := NewRLS(2, 1, 1)
	if r.Update([]float64{1}, 1) == nil || r.Update([]float64{1, math.NaN()}, 1) == nil || r.Update([]float64{1, 1}, math.Inf(1)) == nil {
		t.Error("bad observations accepted")
	}
}
