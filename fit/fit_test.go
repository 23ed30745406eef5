package fit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestLinearRecoversCoefficients(t *testing.T) {
	d := Dataset{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		a, b := r.Float64()*10, r.Float64()*5
		d.X = append(d.X, []float64{a, b})
		d.Y = append(d.Y, 3+2*a-0.5*b) // y = 3 + 2a - 0.5b exactly
	}
	l, err := FitLinear(d)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(l.Intercept-3) > 1e-6 || math.Abs(l.Coef[0]-2) > 1e-6 || math.Abs(l.Coef[1]+0.5) > 1e-6 {
		t.Errorf("fit %+v, want 3, [2 -0.5]", l)
	}
}

func TestTreeFitsStepFunction(t *testing.T) {
	// y = 10 for x < 5, 20 otherwise: one split at 4.5 reproduces it exactly.
	d := Dataset{}
	for x := 0; x < 10; x++ {
		y := 10.0
		if x >= 5 {
			y = 20
		}
		d.X = append(d.X, []float64{float64(x)})
		d.Y = append(d.Y, y)
	}
	tr, err := FitTree(d, nil, TreeParams{MinLeaf: 1}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ x, want float64 }{{0, 10}, {4.4, 10}, {4.6, 20}, {9, 20}} {
		if got := tr.Predict([]float64{c.x}); got != c.want {
			t.Errorf("Predict(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if len(tr.nodes) != 3 {
		t.Errorf("%d nodes, want 3 (one split)", len(tr.nodes))
	}
}

func TestForestIsSeededAndAccurate(t *testing.T) {
	d := Dataset{}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 400; i++ {
		x := r.Float64() * 6
		d.X = append(d.X, []float64{x, r.Float64()})
		d.Y = append(d.Y, 100+10*math.Sin(x))
	}
	p := ForestParams{Trees: 20, Tree: TreeParams{MinLeaf: 3, MaxFeatures: 1}, Seed: 7}
	a, _ := FitForest(d, p)
	b, _ := FitForest(d, p)
	x := []float64{2.5, 0.3}
	if a.Predict(x) != b.Predict(x) {
		t.Fatal("same seed, different forests")
	}
	if got, want := a.Predict(x), 100+10*math.Sin(2.5); math.Abs(got-want) > 1.5 {
		t.Errorf("forest(2.5) = %v, want about %v", got, want)
	}
}

func TestMAPE(t *testing.T) {
	// |110-100|/100 = 10%, |45-50|/50 = 10%, actual 0 skipped -> 10%.
	if got := MAPE([]float64{110, 45, 3}, []float64{100, 50, 0}); math.Abs(got-10) > 1e-12 {
		t.Errorf("MAPE = %v, want 10", got)
	}
}

// Devices share an application curve but each has its own offset: TSMVA
// (shared stage 1 + per-device stage 2) must beat per-device models trained
// on a handful of samples each.
func TestTwoStageBeatsPerDevice(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var train, test []Sample
	for dev := 0; dev < 30; dev++ {
		off := r.NormFloat64() * 8
		for k := 0; k < 12; k++ {
			f := r.Float64() * 10
			s := Sample{Device: fmt.Sprint(dev), App: fmt.Sprint(k % 4), Features: []float64{f}, Power: 100 + 15*f + off + r.NormFloat64()}
			if k < 9 {
				train = append(train, s)
			} else {
				test = append(test, s)
			}
		}
	}
	rf := ForestLearner(ForestParams{Trees: 15, Tree: TreeParams{MinLeaf: 2}, Seed: 1})
	ts, err := FitTwoStage(train, LinearLearner, rf)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := FitPerDevice(train, rf)
	if err != nil {
		t.Fatal(err)
	}
	var tsPred, pdPred, act []float64
	for _, s := range test {
		tsPred = append(tsPred, ts.Predict(s.Device, s.Features))
		p, _ := pd.Predict(s.Device, s.Features)
		pdPred = append(pdPred, p)
		act = append(act, s.Power)
	}
	a, b := MAPE(tsPred, act), MAPE(pdPred, act)
	if !(a < b) {
		t.Errorf("TSMVA MAPE %.2f%% not below per-device RF %.2f%%", a, b)
	}
	if _, err := pd.Predict("nope", []float64{1}); err == nil {
		t.Error("unknown device must be an error")
	}
}

func TestDatasetCheck(t *testing.T) {
	if (Dataset{X: [][]float64{{1}}, Y: []float64{math.NaN()}}).Check() == nil {
		t.Error("NaN target accepted")
	}
	if (Dataset{X: [][]float64{{1}, {1, 2}}, Y: []float64{1, 2}}).Check() == nil {
		t.Error("ragged rows accepted")
	}
}

// A piecewise-linear fit recovers the values of a noiseless piecewise
// function at its knots: y = 10 at 0, 40 at 0.5 (slope 60), 50 at 1.
func TestFitPiecewiseRecoversKnots(t *testing.T) {
	truth := &Piecewise{Knots: []float64{0, 0.5, 1}, Values: []float64{10, 40, 50}}
	var x, y []float64
	for i := 0; i <= 20; i++ {
		x = append(x, float64(i)/20)
		y = append(y, truth.At(float64(i)/20))
	}
	p, err := FitPiecewise(x, y, []float64{0.5})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range truth.Values {
		if math.Abs(p.Values[i]-want) > 1e-9 {
			t.Errorf("value %d: %v, want %v", i, p.Values[i], want)
		}
	}
	if r := RMSE(predictPiecewise(p, x), y); r > 1e-9 {
		t.Errorf("RMSE %v", r)
	}
	if _, err := FitPiecewise([]float64{0, 0.1, 0.2}, []float64{1, 2, 3}, []float64{0.5}); err == nil {
		t.Error("fitted with no sample near 1")
	}
}

func predictPiecewise(p *Piecewise, x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = p.At(v)
	}
	return out
}
