package fit

import (
	"fmt"
	"math"
)

// RLS is recursive least squares: the coefficients theta of y = theta . x,
// updated one observation at a time (CE-DLA fits its power models with it,
// cedla eqs. 6-9). P is the inverse-information matrix, started at
// delta x I; Lambda is the forgetting factor (1: none).
type RLS struct {
	Theta  []float64
	P      [][]float64
	Lambda float64
	// N counts the observations taken.
	N int
}

// NewRLS starts an estimator of n coefficients at zero with P = delta x I
// (large delta: little trust in the start) and forgetting factor lambda
// in (0, 1].
func NewRLS(n int, delta, lambda float64) (*RLS, error) {
	if n < 1 {
		return nil, fmt.Errorf("fit: RLS with %d coefficients", n)
	}
	if !(delta > 0) || math.IsInf(delta, 0) {
		return nil, fmt.Errorf("fit: RLS delta %v, want a finite number > 0", delta)
	}
	if !(lambda > 0 && lambda <= 1) {
		return nil, fmt.Errorf("fit: RLS forgetting factor %v, want (0, 1]", lambda)
	}
	p := make([][]float64, n)
	for i := range p {
		p[i] = make([]float64, n)
		p[i][i] = delta
	}
	return &RLS{Theta: make([]float64, n), P: p, Lambda: lambda}, nil
}

// Update takes one observation (x, y):
// k = P x / (lambda + x' P x); theta += k (y - theta . x);
// P = (P - k x' P) / lambda.
func (r *RLS) Update(x []float64, y float64) error {
	n := len(r.Theta)
	if len(x) != n {
		return fmt.Errorf("fit: RLS observation with %d features, want %d", len(x), n)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("fit: RLS feature %d is %v", i, v)
		}
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("fit: RLS target is %v", y)
	}
	px := make([]float64, n)
	for i := range n {
		for j := range n {
			px[i] += r.P[i][j] * x[j]
		}
	}
	den := r.Lambda
	for i := range n {
		den += x[i] * px[i]
	}
	k := make([]float64, n)
	for i := range n {
		k[i] = px[i] / den
	}
	e := y - r.Predict(x)
	for i := range n {
		r.Theta[i] += k[i] * e
	}
	// x' P (a row) equals (P x)' because P stays symmetric.
	for i := range n {
		for j := range n {
			r.P[i][j] = (r.P[i][j] - k[i]*px[j]) / r.Lambda
		}
	}
	// Keep P symmetric against rounding.
	for i := range n {
		for j := i + 1; j < n; j++ {
			m := (r.P[i][j] + r.P[j][i]) / 2
			r.P[i][j], r.P[j][i] = m, m
		}
	}
	r.N++
	return nil
}

// Predict returns theta . x.
func (r *RLS) Predict(x []float64) float64 {
	var y float64
	for i, c := range r.Theta {
		y += c * x[i]
	}
	return y
}
