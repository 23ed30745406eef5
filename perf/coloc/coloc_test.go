package coloc

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/trace/gavel"
)

func setup(t *testing.T) (*Calibration, Power, *gavel.Throughputs) {
	t.Helper()
	c, err := PaperCalibration()
	if err != nil {
		t.Fatal(err)
	}
	p, res, err := FitPower(c, 30, 300, 30, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("eq. 5 fit: %-9s measured %5.0f W model %5.0f W (%+.1f%%)", r.Model, r.MeasuredW, r.ModelW, 100*(r.ModelW/r.MeasuredW-1))
		if math.Abs(r.ModelW/r.MeasuredW-1) > 0.15 {
			t.Errorf("%s: model %.0f W vs Table 1 %.0f W: more than 15%% off", r.Model, r.ModelW, r.MeasuredW)
		}
	}
	tp, err := gavel.V100()
	if err != nil {
		t.Fatal(err)
	}
	return c, p, tp
}

func TestPowerFit(t *testing.T) {
	_, p, _ := setup(t)
	// CPU slope of Fig. 2: (1*6.6 + 2*12.4 + 3*18.8 + 4*24.5) / (1+4+9+16) = 185.8/30.
	if math.Abs(p.CPUPerJobPct-185.8/30) > 1e-9 {
		t.Errorf("cpu per job = %v, want 6.193", p.CPUPerJobPct)
	}
	if p.GPU(150) != p.GPU(100) || p.GPU(0) != 30 {
		t.Errorf("GPU power not capped or idle wrong")
	}
}

func TestRule(t *testing.T) {
	f := func(a, b gavel.Key) (float64, bool) {
		return map[string]float64{"AB": 0.8, "BA": 0.5, "AC": 0.9, "CA": 1, "BC": 0.7, "CB": 0.6}[a.Type+b.Type], true
	}
	A, B, C := gavel.Key{Type: "A", Scale: 1}, gavel.Key{Type: "B", Scale: 1}, gavel.Key{Type: "C", Scale: 1}
	got, ok := SetFactors(f, []gavel.Key{A, B, C})
	// A: 0.8*0.9; B: 0.5*0.7; C: 1*0.6.
	want := []float64{0.72, 0.35, 0.6}
	for i := range want {
		if !ok || math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("factors = %v, want %v", got, want)
		}
	}
}

// TestHeldOut checks the estimator on pairs it never saw: it must beat
// guessing the median factor.
func TestHeldOut(t *testing.T) {
	_, _, tp := setup(t)
	train, held := Split(tp, 5)
	if len(held) == 0 || len(train)+len(held) != len(tp.Pairs) {
		t.Fatalf("split %d + %d of %d", len(train), len(held), len(tp.Pairs))
	}
	ft := Fit(MeasuredFactors(tp, train))
	e := Evaluate(ft, tp, held)
	t.Logf("held-out pairs %d: MAPE %.1f%% (median guess %.1f%%), MAE %.3f", e.Pairs, e.MAPEPct, e.MedianMAPEPct, e.MAEFactor)
	if !(e.MAPEPct < e.MedianMAPEPct) {
		t.Errorf("fitted MAPE %.1f%% does not beat the median guess %.1f%%", e.MAPEPct, e.MedianMAPEPct)
	}
	h := NewHistory(MeasuredFactors(tp, train), ft)
	p := held[0]
	got := h.Predict([]gavel.Key{p.A, p.B})
	if h.FromEstimate != 1 {
		t.Errorf("held-out pair not estimated")
	}
	h.Record([]gavel.Key{p.A, p.B}, []float64{0.5, 0.25})
	again := h.Predict([]gavel.Key{p.B, p.A})
	if again[0] != 0.25 || again[1] != 0.5 || h.FromRecord != 1 {
		t.Errorf("record not used in order: %v (estimate was %v)", again, got)
	}
}

func TestPaperSets(t *testing.T) {
	c, p, tp := setup(t)
	rows := PaperSets(c, p, MeasuredFactors(tp, tp.Pairs).Pair)
	if len(rows) != 11 { // C(4,2)+C(4,3)+C(4,4)
		t.Fatalf("rows = %d, want 11", len(rows))
	}
	for _, r := range rows {
		t.Logf("%-34s JCT %+6.1f%% (paper <= %.1f%%)  energy saving %5.1f%% (paper <= %.0f%%)", r.Name(), r.JCTIncreasePct, r.PaperJCTPct, r.EnergySavingPct, r.PaperEnergyPct)
		if r.JCTIncreasePct < 0 {
			t.Errorf("%s: co-location made jobs faster", r.Name())
		}
	}
}

// TestCrossValidate: on every fold the fitted estimator beats the median
// guess, and the folds cover every eligible pair once.
func TestCrossValidate(t *testing.T) {
	_, _, tp := setup(t)
	folds := CrossValidate(tp, 5)
	total := 0
	for i, e := range folds {
		t.Logf("fold %d: %d pairs, MAPE %.1f%% (median guess %.1f%%)", i, e.Pairs, e.MAPEPct, e.MedianMAPEPct)
		if !(e.MAPEPct < e.MedianMAPEPct) {
			t.Errorf("fold %d: MAPE %.1f%% does not beat %.1f%%", i, e.MAPEPct, e.MedianMAPEPct)
		}
		total += e.Pairs
	}
	_, held := Split(tp, 1)
	if total != len(held) {
		t.Errorf("folds hold %d pairs, want %d", total, len(held))
	}
}
