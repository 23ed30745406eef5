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
	// Gaussian elimination with partial pivoting.
	for c := 0; c < p; c++ {
		piv := c
		for r := c + 1; r < p; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if math.Abs(a[piv][c]) < 1e-300 {
			return nil, fmt.Errorf("fit: singular normal equations at column %d", c)
		}
		a[c], a[piv] = a[piv], a[c]
		for r := 0; r < p; r++ {
			if r == c {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= p; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	l := &Linear{Intercept: a[0][p] / a[0][0], Coef: make([]float64, p-1)}
	for i := 1; i < p; i++ {
		l.Coef[i-1] = a[i][p] / a[i][i]
	}
	return l, nil
}
