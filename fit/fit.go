// Package fit fits the models wattsched's policies learn from measurements:
// seeded CART regression trees and random forests, least-squares linear
// regression, and TSMVA's two-stage variation-aware model (Yoshida et al.,
// VAHRM paper Section IV). Every model reports its error on held-out data.
package fit

import (
	"errors"
	"fmt"
	"math"
)

// Regressor predicts a value from a feature vector.
type Regressor interface {
	Predict(x []float64) float64
}

// Dataset is a feature matrix with targets.
type Dataset struct {
	X [][]float64
	Y []float64
}

// Check validates shapes.
func (d Dataset) Check() error {
	if len(d.X) == 0 {
		return errors.New("fit: empty dataset")
	}
	if len(d.X) != len(d.Y) {
		return fmt.Errorf("fit: %d rows but %d targets", len(d.X), len(d.Y))
	}
	w := len(d.X[0])
	for i, r := range d.X {
		if len(r) != w {
			return fmt.Errorf("fit: row %d has %d features, want %d", i, len(r), w)
		}
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("fit: row %d feature %d is %v", i, j, v)
			}
		}
		if math.IsNaN(d.Y[i]) || math.IsInf(d.Y[i], 0) {
			return fmt.Errorf("fit: target %d is %v", i, d.Y[i])
		}
	}
	return nil
}

// MAPE is the mean absolute percentage error of pred against actual, in
// percent; actual values of zero are skipped.
func MAPE(pred, actual []float64) float64 {
	var s float64
	n := 0
	for i := range actual {
		if actual[i] == 0 {
			continue
		}
		s += math.Abs((pred[i] - actual[i]) / actual[i])
		n++
	}
	if n == 0 {
		return math.NaN()
	}
	return 100 * s / float64(n)
}

// PredictAll applies r to every row.
func PredictAll(r Regressor, X [][]float64) []float64 {
	out := make([]float64, len(X))
	for i, x := range X {
		out[i] = r.Predict(x)
	}
	return out
}
