package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Half95 is Student's t(0.975, n-1) * sd / sqrt(n): for 3 seeds t is
// 4.3027, so sd 1 gives 4.3027/sqrt(3) = 2.4841; one seed has none.
func TestHalf95(t *testing.T) {
	if got := Half95(1, 3); math.Abs(got-2.4841) > 1e-4 {
		t.Errorf("Half95(1, 3) = %v, want 2.4841", got)
	}
	if !math.IsNaN(Half95(1, 1)) {
		t.Error("one seed has an interval")
	}
	if got, want := Half95(2, 5), CI95([]float64{1, 2, 3, 4, 5}).Hi-CI95([]float64{1, 2, 3, 4, 5}).Mean; math.Abs(got*math.Sqrt(2.5)/2-float64(want)) > 1e-9 {
		t.Errorf("Half95 disagrees with CI95: %v vs %v", got*math.Sqrt(2.5)/2, want)
	}
}

// TotalsBars prints each bar's mean over its seeds: (1+2+3)/3 = 2.00 and
// (10+10)/2 = 10.00.
func TestTotalsBars(t *testing.T) {
	svg, err := TotalsBars("t", []string{"A", "B"}, []TotalsPanel{{Label: "energy (kWh)", Format: "%.2f", PerSeed: [][]float64{{1, 2, 3}, {10, 10}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">2.00</text>", ">10.00</text>", ">energy (kWh)</text>"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("bars lack %q", want)
		}
	}
}

// Totals groups runs by name in first-seen order: A's runs 1 and 3 give
// panel 0 the values {1, 3}, B's run 2 gives {2}.
func TestTotalsGroupsByName(t *testing.T) {
	tot := NewTotals(TotalsPanel{Label: "energy (kWh)", Format: "%.1f"}, TotalsPanel{Label: "cost (USD)", Format: "%.2f"})
	tot.Add("A", 1, 10)
	tot.Add("B", 2, 20)
	tot.Add("A", 3, 30)
	if diff := cmp.Diff([]string{"A", "B"}, tot.Names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	want := [][][]float64{{{1, 3}, {2}}, {{10, 30}, {20}}}
	for k, p := range tot.Panels {
		if diff := cmp.Diff(want[k], p.PerSeed); diff != "" {
			t.Errorf("panel %d (-want +got):\n%s", k, diff)
		}
	}
	if svg, err := NewTotals(TotalsPanel{Label: "x"}).SVG("empty"); svg != nil || err != nil {
		t.Errorf("empty: %d bytes, %v; want nothing", len(svg), err)
	}
}

// The 3-seed case: power-down energy 433, 796 and 1,777 kWh over
// three seeds, mean 1,002, sd 695.28. Student's t on the values gives
// 1002 ± 4.3027 x 695.28 / sqrt(3) = 1002 ± 1727.2 = [-725.2, 2729.2],
// below zero; on the log scale 1002 x exp(∓1727.2/1002) = 1002 x
// exp(∓1.7237) = [178.76, 5616.5]: positive, holding the mean.
func TestPositiveCI95(t *testing.T) {
	xs := []float64{433, 796, 1777}
	if c := CI95(xs); !(float64(c.Lo) < 0) || math.Abs(float64(c.Lo)+725.17) > 0.01 {
		t.Errorf("CI95 = %+v: want the issue's [-725.2, 2729.2]", c)
	}
	c := PositiveCI95(xs)
	if c.N != 3 || math.Abs(float64(c.Mean)-1002) > 1e-9 || math.Abs(float64(c.Lo)-178.758) > 0.01 || math.Abs(float64(c.Hi)-5616.54) > 0.01 {
		t.Errorf("PositiveCI95 = %+v, want 1002 [178.76, 5616.54]", c)
	}
	if !(c.Lo > 0 && c.Lo < c.Mean && c.Mean < c.Hi) {
		t.Errorf("PositiveCI95 = %+v: want 0 < lo < mean < hi", c)
	}
	// Seeds that agree: close to the t-interval. 100, 101, 102: sd 1,
	// t-half 2.4841; log scale 101 x exp(∓2.4841/101) = [98.546, 103.515]
	// against the t-interval's [98.516, 103.484].
	c = PositiveCI95([]float64{100, 101, 102})
	if math.Abs(float64(c.Lo)-98.546) > 0.001 || math.Abs(float64(c.Hi)-103.515) > 0.001 {
		t.Errorf("PositiveCI95(100, 101, 102) = %+v, want [98.546, 103.515]", c)
	}
	// Every seed zero (no wait at all): [0, 0], not NaN.
	if c := PositiveCI95([]float64{0, 0, 0}); c.Mean != 0 || c.Lo != 0 || c.Hi != 0 {
		t.Errorf("PositiveCI95(0, 0, 0) = %+v, want 0 [0, 0]", c)
	}
	// One seed: no interval.
	if c := PositiveCI95([]float64{5}); !math.IsNaN(float64(c.Lo)) {
		t.Errorf("PositiveCI95(5) = %+v, want no interval", c)
	}
}

// Paired relative differences of 0.05, 0.2 and 0.31 times the reference
// (-95%, -80%, -69%): Student's t on the differences gives -81.3% ±
// 32.4 = [-113.8%, -48.9%], past -100% (the issue's "-81.3% [-113.5%,
// -49.2%]" is such a case). On the log ratios: mean log -1.9255, sd 0.9935,
// half 4.3027 x 0.9935 / sqrt(3) = 2.4681; exp(-1.9255) - 1 = -85.4%,
// exp(-1.9255 ∓ 2.4681) - 1 = [-98.63%, +55.36%]: never below -100%.
func TestRatioCI95(t *testing.T) {
	xs, base := []float64{5, 20, 31}, []float64{100, 100, 100}
	c := RatioCI95(xs, base)
	if math.Abs(float64(c.Mean)+0.85419) > 1e-5 || math.Abs(float64(c.Lo)+0.98631) > 1e-5 || math.Abs(float64(c.Hi)-0.55355) > 1e-5 {
		t.Errorf("RatioCI95 = %+v, want -0.85419 [-0.98631, +0.55355]", c)
	}
	if !(c.Lo > -1) {
		t.Errorf("RatioCI95 lower bound %v passes -100%%", c.Lo)
	}
	// Equal runs: no difference, no spread.
	if c := RatioCI95([]float64{3, 4}, []float64{3, 4}); c.Mean != 0 || c.Lo != 0 || c.Hi != 0 {
		t.Errorf("RatioCI95 of equal runs = %+v, want 0 [0, 0]", c)
	}
	// A zero reference has no ratio.
	if c := RatioCI95([]float64{1, 2}, []float64{0, 2}); !math.IsNaN(float64(c.Mean)) {
		t.Errorf("RatioCI95 over a zero reference = %+v, want NaN", c)
	}
}

// Fewer than five seeds say why their intervals are wide: for 3 seeds
// t(0.975, 2) = 4.30, 2.2 times 1.96.
func TestFewSeedsNote(t *testing.T) {
	if got := FewSeedsNote(3); !strings.Contains(got, "4.30 for 3 seeds") || !strings.Contains(got, "2.2x") {
		t.Errorf("FewSeedsNote(3) = %q", got)
	}
	for _, n := range []int{1, 5, 10} {
		if got := FewSeedsNote(n); got != "" {
			t.Errorf("FewSeedsNote(%d) = %q, want none", n, got)
		}
	}
}
