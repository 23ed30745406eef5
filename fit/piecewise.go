package fit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Piecewise is a continuous piecewise-linear function of x in [0, 1]
// through (Knots[i], Values[i]); Knots runs from 0 to 1.
type Piecewise struct {
	Knots  []float64
	Values []float64
}

// At evaluates p at x (clamped to [0, 1]).
func (p *Piecewise) At(x float64) float64 {
	x = math.Min(1, math.Max(0, x))
	for i := 1; i < len(p.Knots); i++ {
		if x <= p.Knots[i] {
			a, b := p.Knots[i-1], p.Knots[i]
			return p.Values[i-1] + (x-a)/(b-a)*(p.Values[i]-p.Values[i-1])
		}
	}
	return p.Values[len(p.Values)-1]
}

// FitPiecewise fits a piecewise-linear function of x in [0, 1] to y by
// least squares (gonum's QR solve), with breakpoints at 0, the inner
// knots (strictly increasing, in (0, 1)), and 1. With no inner knots it
// is the straight line through (0, Values[0]) and (1, Values[1]). Each
// segment needs a sample inside it or at its ends, else the values are
// not determined and it is an error.
func FitPiecewise(x, y []float64, inner []float64) (*Piecewise, error) {
	if len(x) != len(y) {
		return nil, fmt.Errorf("fit piecewise: %d x values, %d y values", len(x), len(y))
	}
	knots := append(append([]float64{0}, inner...), 1)
	for i := 1; i < len(knots); i++ {
		if !(knots[i] > knots[i-1]) {
			return nil, fmt.Errorf("fit piecewise: knots %v: want strictly increasing inside (0, 1)", inner)
		}
	}
	k := len(knots)
	if len(x) < k {
		return nil, fmt.Errorf("fit piecewise: %d samples for %d values", len(x), k)
	}
	// Hat basis: sample j's row has weights on the two knots around x[j].
	a := mat.NewDense(len(x), k, nil)
	b := mat.NewVecDense(len(y), nil)
	support := make([]float64, k)
	for j, xv := range x {
		if math.IsNaN(xv) || math.IsNaN(y[j]) || math.IsInf(y[j], 0) || xv < 0 || xv > 1 {
			return nil, fmt.Errorf("fit piecewise: sample %d: x %v, y %v: want x in [0, 1] and finite y", j, xv, y[j])
		}
		i := 1
		for i < k-1 && xv > knots[i] {
			i++
		}
		w := (xv - knots[i-1]) / (knots[i] - knots[i-1])
		a.Set(j, i-1, 1-w)
		a.Set(j, i, w)
		support[i-1] += 1 - w
		support[i] += w
		b.SetVec(j, y[j])
	}
	for i, s := range support {
		if s < 1e-9 {
			return nil, fmt.Errorf("fit piecewise: no sample near x = %g: its value is not determined", knots[i])
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var sol mat.VecDense
	if err := qr.SolveVecTo(&sol, false, b); err != nil {
		return nil, fmt.Errorf("fit piecewise: %w", err)
	}
	p := &Piecewise{Knots: knots, Values: make([]float64, k)}
	for i := range p.Values {
		p.Values[i] = sol.AtVec(i)
	}
	return p, nil
}

// RMSE is the root mean squared error of pred against actual.
func RMSE(pred, actual []float64) float64 {
	var s float64
	for i := range pred {
		d := pred[i] - actual[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(pred)))
}
