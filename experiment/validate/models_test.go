package validate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wattsched/wattsched/hw"
)

// curve returns a Perseus-like curve: n frequencies from 855 MHz in 15 MHz
// steps, power w(u) at u = f/f_max, rows from line 2 in ascending order.
func curve(file, series string, n int, w func(u float64) float64) []Point {
	var out []Point
	fmax := float64(855 + 15*(n-1))
	for i := range n {
		f := float64(855 + 15*i)
		out = append(out, Point{Source: "test", File: file, Line: i + 2, GPU: "A40", Workload: "w", Series: series,
			Knob: "frequency MHz", KnobValue: f, Watts: w(f / fmax)})
	}
	return out
}

func TestProfiled(t *testing.T) {
	// 38 frequencies, 8 profiled: 37-i*37/7 for i = 0..7 (integer
	// division: 0, 5, 10, 15, 21, 26, 31, 37): 37, 32, 27, 22, 16, 11, 6, 0.
	want := []int{0, 6, 11, 16, 22, 27, 32, 37}
	if got := profiled(38, 8); !slices.Equal(got, want) {
		t.Errorf("profiled(38, 8) = %v, want %v", got, want)
	}
}

// TestDVFSRecoversItsForm: a curve that is exactly the model's form (a
// line below u0, a cubic at and above it, u0 the 5th profiled frequency,
// 1185 of 1410 MHz) is predicted exactly at every held-out frequency, and
// only held-out frequencies are scored.
func TestDVFSRecoversItsForm(t *testing.T) {
	form := func(u float64) float64 {
		if u < 1185.0/1410 {
			return 60 + 150*u
		}
		return 400*u*u*u - 300*u*u + 200*u - 40
	}
	pts := curve("f.csv", "stage 0 forward", 38, form)
	got, unc, err := dvfsScore(nil, pts)
	if err != nil || len(unc) != 0 {
		t.Fatalf("err %v, uncovered %v", err, unc)
	}
	if len(got) != 38-8 {
		t.Fatalf("%d points scored, want the 30 not profiled", len(got))
	}
	train := profiled(38, 8)
	for _, s := range got {
		if slices.Contains(train, s.Line-2) {
			t.Errorf("profiled frequency %v MHz scored: the fit has seen it", s.KnobValue)
		}
		if math.Abs(s.predicted-s.Watts) > 1e-6 {
			t.Errorf("%v MHz: predicted %v W, measured %v W", s.KnobValue, s.predicted, s.Watts)
		}
	}
}

// TestDVFSBreakpoint: flat power below u0 and a quadratic rise above it
// (u0 the 4th of the 8 profiled frequencies of 60) cannot be one cubic over
// the whole range; the fit finds the breakpoint and predicts the held-out
// points exactly.
func TestDVFSBreakpoint(t *testing.T) {
	u0 := float64(855+15*profiled(60, 8)[3]) / 1740
	form := func(u float64) float64 {
		if u < u0 {
			return 100
		}
		return 100 + 2000*(u-u0)*(u-u0) + 50*(u-u0)
	}
	got, _, err := dvfsScore(nil, curve("f.csv", "s", 60, form))
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for _, s := range got {
		worst = math.Max(worst, math.Abs(s.predicted-s.Watts))
	}
	if worst > 1e-6 {
		t.Errorf("worst held-out error %v W, want 0 (flat then a quadratic rise is the form)", worst)
	}
	// One cubic through all the profiled points (no breakpoint) misses.
	u := []float64{}
	w := []float64{}
	for _, i := range profiled(60, 8) {
		f := float64(855+15*i) / float64(855+15*59)
		u, w = append(u, f), append(w, form(f))
	}
	if _, sse, _ := lsq(u, w, 3); sse < 1 {
		t.Errorf("a single cubic fits with SSE %v: the case does not need a breakpoint", sse)
	}
}

// TestDVFSOrderAndBadInput: shuffled rows give the same predictions; a
// curve too short is listed, not dropped; a frequency measured twice is an
// error naming file, line and field.
func TestDVFSOrderAndBadInput(t *testing.T) {
	pts := curve("f.csv", "s", 40, func(u float64) float64 { return 50 + 300*u*u })
	a, _, _ := dvfsScore(nil, pts)
	sh := slices.Clone(pts)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
	b, _, _ := dvfsScore(nil, sh)
	if !slices.Equal(a, b) {
		t.Error("predictions depend on row order")
	}
	_, unc, err := dvfsScore(nil, curve("short.csv", "s", 9, func(u float64) float64 { return 100 * u }))
	if err != nil || len(unc) != 1 || !strings.Contains(unc[0], "short.csv s has 9 frequencies") {
		t.Errorf("short curve: err %v, uncovered %v", err, unc)
	}
	dup := append(slices.Clone(pts), pts[5])
	dup[len(dup)-1].Line = 99
	_, _, err = dvfsScore(nil, dup)
	if err == nil || !strings.Contains(err.Error(), "f.csv line 99 field frequency") {
		t.Errorf("duplicate frequency: error %v", err)
	}
}

// TestVariation: devices whose mean power is known; the held-out half is
// compared with the quantiles of the normal fitted on the other half,
// computed here with gonum's normal quantile.
func TestVariation(t *testing.T) {
	var pts []Point
	line := 2
	for d := range 60 {
		id := fmt.Sprintf("GPU-%02d", d)
		// Two runs per device, mean 250 + 1.5*d (d*d%17 shuffles the
		// level away from the id order).
		m := 250 + 1.5*float64(d*d%17) + 0.1*float64(d)
		for _, x := range []float64{m - 2, m + 2} {
			pts = append(pts, Point{File: "g.csv", Line: line, GPU: "V100-Longhorn", Workload: "sgemm", Device: id, Watts: x})
			line++
		}
	}
	got, unc, err := variationScore(nil, pts)
	if err != nil || len(unc) != 0 {
		t.Fatalf("err %v, uncovered %v", err, unc)
	}
	var fitMeans, testMeans []float64
	for d := range 60 {
		m := 250 + 1.5*float64(d*d%17) + 0.1*float64(d)
		if half(fmt.Sprintf("GPU-%02d", d)) == 0 {
			fitMeans = append(fitMeans, m)
		} else {
			testMeans = append(testMeans, m)
		}
	}
	if len(got) != len(testMeans) || len(fitMeans) < minDevices {
		t.Fatalf("%d scored, %d held out, %d fitted", len(got), len(testMeans), len(fitMeans))
	}
	var mean, ss float64
	for _, x := range fitMeans {
		mean += x
	}
	mean /= float64(len(fitMeans))
	for _, x := range fitMeans {
		ss += (x - mean) * (x - mean)
	}
	norm := distuv.Normal{Mu: mean, Sigma: math.Sqrt(ss / float64(len(fitMeans)-1))}
	slices.Sort(testMeans)
	for i, s := range got {
		want := norm.Quantile((float64(i) + 0.5) / float64(len(testMeans)))
		if math.Abs(s.Watts-testMeans[i]) > 1e-9 || math.Abs(s.predicted-want) > 1e-9 {
			t.Errorf("rank %d: measured %v predicted %v, want %v and %v", i, s.Watts, s.predicted, testMeans[i], want)
		}
	}
	// Row order changes nothing.
	rev := slices.Clone(pts)
	slices.Reverse(rev)
	for i := range rev {
		rev[i].Line = len(rev) + 1 - i
	}
	b, _, _ := variationScore(nil, rev)
	for i := range got {
		if got[i].Watts != b[i].Watts || got[i].predicted != b[i].predicted {
			t.Fatalf("rank %d differs with rows reversed", i)
		}
	}
}

// TestModelsOnTestTraces: the three-row test curves are too short for the
// DVFS fit and too few devices for the variation check; both say so.
func TestModelsOnTestTraces(t *testing.T) {
	res, err := Measure(testTraces, hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{DVFS + " on A40: perseus-sosp24-dvfs/stage_profile/bloom+a40_bf16.csv stage 0 forward has 2 frequencies",
		Variation + " on V100-Longhorn: sgemm has"} {
		if !slices.ContainsFunc(res.Uncovered, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("uncovered does not say %q:\n%s", w, strings.Join(res.Uncovered, "\n"))
		}
	}
}
