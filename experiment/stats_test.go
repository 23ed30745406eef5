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
