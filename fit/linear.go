package fit

import (
	"fmt"
	"math"
)

// Linear is y = Intercept + Coef . x, fitted by least squares.
type Linear struct {
	Intercept float64
	Coef      []float64
}

// Predict implements Regressor.
func (l *Linear) Predict(x []float64) float64 {
	y := l.Intercept
	for i, c := range l.Coef {
		y += c * x[i]
	}
	return y
}

// FitLinear solves the normal equations with a tiny ridge term (1e-9 of the
// diagonal's scale) so that collinear features do not break the solve.
func FitLinear(d Dataset) (*Linear, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	p := len(d.X[0]) + 1
	a := make([][]float64, p)
	for i := range a {
		a[i] = make([]float64, p+1)
	}
	row := make([]float64, p)
	for k, x := range d.X {
		row[0] = 1
		copy(row[1:], x)
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				a[i][j] += row[i] * row[j]
			}
			a[i][p] += row[i] * d.Y[k]
		}
	}
	var scale float64
	for i := 0; i < p; i++ {
		scale = math.Max(scale, a[i][i])
	}
	for i := 1; i < p; i++ {
		a[i][i] += 1e-9 * math.Max(scale, 1)
	}
	x, ok := solve(a)
	if !ok {
		return nil, fmt.Errorf("fit: singular normal equations")
	}
	return &Linear{Intercept: x[0], Coef: x[1:]}, nil
}
