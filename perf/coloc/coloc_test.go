package coloc

import (
	"math"
	"slices"
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

// PaperTolerancePts is how far (percentage points) a figure predicted for
// the paper's own jobs may be from the paper's (the claims' tolerance).
const PaperTolerancePts = 5.0

// TestPaperSets runs the paper's four CNNs in every set of 2-4 on one
// node under the interference calibrated to the paper (PaperInterference)
// and asserts the paper's figures within PaperTolerancePts:
//   - average JCT increase: 2-3 jobs 3-7.8% (Sec. 6.1), 4 jobs 19% (Sec. 6.1);
//   - the largest energy saving of a set: 44% (abstract; Sec. 3 A, Fig. 1(a):
//     "30-44 percent across various job combinations"); not calibrated:
//     eq. 5 fitted to Tables 1-2 gives the power. The lower end (30%) and
//     the four jobs' 42% (Sec. 6.1) are only logged here: the linear eq. 5
//     fit puts a node at 96.7-100% GPU utilisation at about 2.45-2.5 kW
//     where the paper's 42% implies about 2.2 kW, so they miss; the study's
//     claims table reports them (docs/reproduce-eaco.md);
//   - node GPU utilisation (Sec. 3 B, Fig. 2): 48% with one job (VGG-16,
//     the only Table 2 row near 48%), 96.7% with all four; 55.2% and 67%
//     with 2 and 3 jobs, whose members the paper does not name: some set of
//     that size with VGG-16 must come within the tolerance.
//
// Gavel's measured pairs (placeholders left out) are then shown to be
// more pessimistic: every set they give a value for slows down by more
// than the paper's upper end for its size plus the tolerance.
func TestPaperSets(t *testing.T) {
	c, p, tp := setup(t)
	m, err := NewPaperInterference(c)
	if err != nil {
		t.Fatal(err)
	}
	rows := PaperSets(c, p, m.Factors, PaperKey)
	if len(rows) != 11 { // C(4,2)+C(4,3)+C(4,4)
		t.Fatalf("rows = %d, want 11", len(rows))
	}
	near := func(got, lo, hi float64) bool { return got >= lo-PaperTolerancePts && got <= hi+PaperTolerancePts }
	bestUtil := map[int]float64{}
	best := math.Inf(-1)
	for _, r := range rows {
		n := len(r.Jobs)
		t.Logf("%-34s JCT %+6.1f%%  energy saving %5.1f%%  GPU util %5.1f%%", r.Name(), r.JCTIncreasePct, r.EnergySavingPct, r.GPUUtilPct)
		jlo, jhi := c.Sets.JCTIncreaseMinPct, c.Sets.JCTIncrease23MaxPct
		if n == 4 {
			jlo, jhi = c.Sets.JCTIncrease4Pct, c.Sets.JCTIncrease4Pct
		}
		if !near(r.JCTIncreasePct, jlo, jhi) {
			t.Errorf("%s: JCT increase %.1f%%, paper %.1f-%.1f%% (tolerance %.0f points)", r.Name(), r.JCTIncreasePct, jlo, jhi, PaperTolerancePts)
		}
		best = math.Max(best, r.EnergySavingPct)
		if slices.Contains(r.Jobs, "VGG-16") {
			want := c.Sets.GPUUtilByJobs[n-1]
			if d, ok := bestUtil[n]; !ok || math.Abs(r.GPUUtilPct-want) < math.Abs(d-want) {
				bestUtil[n] = r.GPUUtilPct
			}
		}
	}
	if math.Abs(best-c.Sets.EnergySavingMaxPct) > PaperTolerancePts {
		t.Errorf("largest energy saving %.1f%%, paper %.0f%% (tolerance %.0f points)", best, c.Sets.EnergySavingMaxPct, PaperTolerancePts)
	}
	vgg, _ := c.Model("VGG-16")
	bestUtil[1] = vgg.GPUAvgPct
	for n := 1; n <= 4; n++ {
		want := c.Sets.GPUUtilByJobs[n-1]
		t.Logf("Fig. 2, %d job(s): GPU util %.1f%% (paper %.1f%%)", n, bestUtil[n], want)
		if math.Abs(bestUtil[n]-want) > PaperTolerancePts {
			t.Errorf("Fig. 2, %d job(s): GPU util %.1f%%, paper %.1f%% (tolerance %.0f points)", n, bestUtil[n], want, PaperTolerancePts)
		}
	}
	clean, err := WithoutPlaceholders(tp)
	if err != nil {
		t.Fatal(err)
	}
	gavelRows := PaperSets(c, p, PairRule(MeasuredFactors(clean, clean.Pairs).Pair), GavelKey)
	// AlexNet and ResNet-18 are played by ResNet-18 at batch 16 and 32, a
	// placeholder pair: the 4 sets holding both have no value.
	if len(gavelRows) != 7 {
		t.Errorf("Gavel pairs: %d sets, want 7 (11 less the 4 with a placeholder pair)", len(gavelRows))
	}
	for _, r := range gavelRows {
		t.Logf("Gavel pairs: %-34s JCT %+6.1f%%  energy saving %5.1f%%", r.Name(), r.JCTIncreasePct, r.EnergySavingPct)
		if !(r.JCTIncreasePct > r.PaperJCTPct+PaperTolerancePts) {
			t.Errorf("Gavel pairs: %s JCT %+.1f%%, want more pessimistic than the paper's %.1f%% by over %.0f points", r.Name(), r.JCTIncreasePct, r.PaperJCTPct, PaperTolerancePts)
		}
	}
}

// TestPaperInterference checks the calibration's arithmetic.
func TestPaperInterference(t *testing.T) {
	c, err := PaperCalibration()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewPaperInterference(c)
	if err != nil {
		t.Fatal(err)
	}
	k := func(n string) gavel.Key { return PaperKey(n) }
	cases := []struct {
		name string
		set  []gavel.Key
		want float64 // every member's factor
		ok   bool
	}{
		{"alone", []gavel.Key{k("VGG-16")}, 1, true},
		// 2 jobs: 1/1.03.
		{"pair", []gavel.Key{k("AlexNet"), k("VGG-16")}, 1 / 1.03, true},
		// 3 jobs, U = 11.17+36.61+48.01 = 95.79 <= 100: 1/1.078.
		{"triple under 100%", []gavel.Key{k("ResNet-18"), k("ResNet-50"), k("VGG-16")}, 1 / 1.078, true},
		// 4 jobs, U = 100.53: overhead 1.19/1.0053, total 1.19.
		{"the paper's four", []gavel.Key{k("AlexNet"), k("ResNet-18"), k("ResNet-50"), k("VGG-16")}, 1 / 1.19, true},
		// 3 x VGG-16: U = 144.03: 1/(1.078 x 1.4403).
		{"oversubscribed triple", []gavel.Key{k("VGG-16"), k("VGG-16"), k("VGG-16")}, 1 / (1.078 * 1.4403), true},
		{"five jobs: never measured", []gavel.Key{k("AlexNet"), k("AlexNet"), k("AlexNet"), k("AlexNet"), k("AlexNet")}, 0, false},
		// Gavel types borrow Table 2 rows: Transformer as VGG-16 (48.01) twice, U = 96.02.
		{"Gavel types", []gavel.Key{{Type: "Transformer (batch size 64)", Scale: 1}, {Type: "CycleGAN", Scale: 1}}, 1 / 1.03, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := m.Factors(tc.set)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			for _, x := range f {
				if math.Abs(x-tc.want) > 1e-4 {
					t.Errorf("factors %v, want %v each", f, tc.want)
				}
			}
		})
	}
}

// TestPlaceholders: Gavel's V100 table has 14 pairs whose co-located rates
// equal the isolated ones; they are left out, nothing else.
func TestPlaceholders(t *testing.T) {
	_, _, tp := setup(t)
	ph := Placeholders(tp)
	for _, x := range ph {
		t.Logf("placeholder: %s + %s", x.A, x.B)
	}
	if len(ph) != 14 || len(tp.Pairs) != 351 {
		t.Fatalf("%d placeholders of %d pairs, want 14 of 351", len(ph), len(tp.Pairs))
	}
	clean, err := WithoutPlaceholders(tp)
	if err != nil {
		t.Fatal(err)
	}
	if len(clean.Pairs) != 337 || len(Placeholders(clean)) != 0 {
		t.Errorf("clean table: %d pairs, %d placeholders; want 337, 0", len(clean.Pairs), len(Placeholders(clean)))
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

// TestProfiledAndLearning: the profiled prior is the paper's JCT increase
// by set size whatever the jobs; it equals the engine's model while the
// members' utilisation sums to at most 100% and is optimistic above; a
// learning history predicts unseen sets by the prior and seen sets by the
// mean of their observations.
func TestProfiledAndLearning(t *testing.T) {
	c, err := PaperCalibration()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewPaperInterference(c)
	if err != nil {
		t.Fatal(err)
	}
	k := func(n string) gavel.Key { return PaperKey(n) }
	under := []gavel.Key{k("AlexNet"), k("VGG-16")}            // U = 52.73: both 1/1.03
	over := []gavel.Key{k("VGG-16"), k("VGG-16"), k("VGG-16")} // U = 144.03
	for _, set := range [][]gavel.Key{under, over} {
		p, _ := m.Profiled(set)
		f, _ := m.Factors(set)
		want := 1 / (1 + []float64{0, 0, 0.03, 0.078, 0.19}[len(set)])
		if math.Abs(p[0]-want) > 1e-12 {
			t.Errorf("profiled %d jobs: %v, want %v", len(set), p[0], want)
		}
		if len(set) == 2 && p[0] != f[0] {
			t.Errorf("under 100%%: profiled %v, model %v: want equal", p[0], f[0])
		}
		if len(set) == 3 && !(p[0] > f[0]*1.4) { // 1/1.078 against 1/(1.078 x 1.4403)
			t.Errorf("oversubscribed: profiled %v, model %v: want the prior 1.44x optimistic", p[0], f[0])
		}
	}
	h := NewLearningHistory(m.Profiled)
	if f := h.Predict(over); math.Abs(f[0]-1/1.078) > 1e-12 || h.FromModel != 1 {
		t.Fatalf("unseen set: %v (from model %d), want the prior 1/1.078", f, h.FromModel)
	}
	h.Record(over, []float64{0.6, 0.6, 0.6})
	h.Record(over, []float64{0.7, 0.5, 0.7})
	// Mean of the two observations per (sorted) member: 0.65, 0.55, 0.65.
	if f := h.Predict(over); math.Abs(f[0]-0.65) > 1e-12 || math.Abs(f[1]-0.55) > 1e-12 || h.Observations != 2 {
		t.Errorf("seen set: %v after %d observations, want [0.65 0.55 0.65] after 2", f, h.Observations)
	}
	// A plain history keeps the latest observation.
	g := NewModelHistory(m.Factors)
	g.Record(under, []float64{0.9, 0.9})
	g.Record(under, []float64{0.8, 0.8})
	if f := g.Predict(under); f[0] != 0.8 {
		t.Errorf("model history: %v, want the latest 0.8", f)
	}
}
