package coloc

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/trace/bloxpal"
)

// TestBloxPalNormalisation is the evidence for what norm_speed.csv's
// speeds are normalised to: every row of a job alone equals its
// raw_single.csv speed over the fastest configuration of the same model
// and GPU count, to the two decimals the file writes (Bert-Base 6,6 on 2
// GPUs: 0.75 / 1.45 = 0.517, written 0.52).
func TestBloxPalNormalisation(t *testing.T) {
	d, err := bloxpal.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	iso := BloxPalIsolated(d.Singles)
	n, worst := 0, 0.0
	for _, r := range d.Rows {
		if !r.Alone {
			continue
		}
		v, ok := iso[r.A]
		if !ok {
			t.Errorf("line %d: %v has no isolated row", r.Line, r.A)
			continue
		}
		worst = math.Max(worst, math.Abs(v-r.SpeedA))
		if math.Abs(v-r.SpeedA) > 0.005+1e-9 {
			t.Errorf("line %d: %v written %.2f, raw over best %.4f", r.Line, r.A, r.SpeedA, v)
		}
		n++
	}
	t.Logf("%d job-alone rows, largest difference from raw/best %.4f", n, worst)
	if n != 32 {
		t.Errorf("%d job-alone rows checked, want 32", n)
	}
}

// TestBloxPalTable: the pair rows that become factors, and a few factors
// by hand.
func TestBloxPalTable(t *testing.T) {
	d, err := bloxpal.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := NewBloxPalTable(d)
	if err != nil {
		t.Fatal(err)
	}
	// 168 pair rows: 16 with zero speeds (GPT2-Medium TP24/DP24 and GPT2-XL
	// TP24/DP24, 4 co-tenants each), 60 more GPT2-family rows at global
	// batch 256 without an isolated row (GPT2 28, GPT2-Medium 16, GPT2-XL
	// 16); used: 40 CNN pairs (10 per GPU count) + Bert-Base 28 + Bert-Large
	// 24 = 92.
	if tab.Rows != 168 || tab.NotRun != 16 || tab.NoReference != 60 || tab.Used != 92 {
		t.Errorf("rows %d, not run %d, no reference %d, used %d", tab.Rows, tab.NotRun, tab.NoReference, tab.Used)
	}
	var got []float64
	for _, p := range tab.Table.Pairs {
		ca, cb := tab.Config[p.A], tab.Config[p.B]
		switch {
		case ca.Model == "vgg19" && cb.Model == "resnet50" && ca.GPUs == 1:
			got = append(got, p.RateA, p.RateB) // 0.8 and 0.41: the CNNs' reference is their own speed
		case ca.Model == "DCGAN" && cb.Model == "DCGAN" && ca.GPUs == 1:
			got = append(got, p.RateA) // (0.69 + 0.71) / 2
		case ca.Model == "Bert-Large" && ca.Strategy == "6,6,6,6" && cb.Model == "vgg19":
			got = append(got, p.RateA) // 0.35 / (0.65 / 1.29)
		}
	}
	want := []float64{0.8, 0.41, 0.70, 0.35 / (0.65 / 1.29)}
	if len(got) != len(want) {
		t.Fatalf("factors %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("factor %d = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestBloxPalHeldOut fits the pair estimator's form to blox-pal's own
// pairs and checks it on held-out ones: it must beat guessing the median
// factor, as it does on Gavel (TestHeldOut). It also logs how the
// Gavel-built model does on the blox-pal pairs of models Gavel has.
func TestBloxPalHeldOut(t *testing.T) {
	_, _, tp := setup(t)
	train, _ := Split(tp, 5)
	known := MeasuredFactors(tp, train)
	d, err := bloxpal.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	c, err := CheckBloxPal(d, NewHistory(known, Fit(known)), 5)
	if err != nil {
		t.Fatal(err)
	}
	// Fit must not depend on map order (keys of one type on several GPU
	// counts once tied in its sort): every repeat gives identical bits.
	for i := 0; i < 5; i++ {
		again, err := CheckBloxPal(d, NewHistory(known, Fit(known)), 5)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("repeat %d differs (-first +repeat):\n%s", i, diff)
		}
	}
	e := c.HeldOut
	t.Logf("blox-pal: %d pairs used, %d held out: MAPE %.1f%% (median guess %.1f%%), MAE %.3f", c.Pairs, e.Pairs, e.MAPEPct, e.MedianMAPEPct, e.MAEFactor)
	if !(e.MAPEPct < e.MedianMAPEPct) {
		t.Errorf("blox-pal held-out MAPE %.1f%% does not beat the median guess %.1f%%", e.MAPEPct, e.MedianMAPEPct)
	}
	for i, f := range c.Folds {
		t.Logf("blox-pal fold %d: %d pairs, MAPE %.1f%% (median guess %.1f%%)", i, f.Pairs, f.MAPEPct, f.MedianMAPEPct)
		if !(f.MAPEPct < f.MedianMAPEPct) {
			t.Errorf("blox-pal fold %d: MAPE %.1f%% does not beat %.1f%%", i, f.MAPEPct, f.MedianMAPEPct)
		}
	}
	for _, g := range c.Gavel {
		t.Logf("Gavel model vs blox-pal: %s next to %s: measured %.3f, Gavel model %.3f (%s next to %s, stand-in %v)", g.Job, g.With, g.Measured, g.Predicted, g.GavelJob, g.GavelWith, g.StandIn)
	}
	t.Logf("Gavel model on blox-pal: same model MAPE %.1f%%, with the VGG stand-in %.1f%%", c.GavelMAPEPct, c.StandInMAPEPct)
	// resnet50 and vgg19 pairs on 1, 2, 4 and 8 GPUs: per GPU count one
	// resnet50 self pair (1 value), one vgg19 self pair (1) and the mixed
	// pair (2 values) = 4 x 4 = 16, 4 of them without a stand-in.
	same := 0
	for _, g := range c.Gavel {
		if !g.StandIn {
			same++
		}
	}
	if len(c.Gavel) != 16 || same != 4 {
		t.Errorf("%d comparisons (%d same-model), want 16 (4)", len(c.Gavel), same)
	}
}
