package tasks

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/report"
)

// Distribution lines run to the largest value of any: FGD's tasks never
// waited (one point, share 1 at 0 s) and would draw no line; PWR's waited
// up to 120 s. FGD's line then runs from 0 to 120 s at 1. The y range
// starts a little below PWR's lowest share, 0.98 - 0.02 x 0.02 = 0.9796,
// and ends a little above 1, 1 + 0.04 x 0.02 = 1.0008, so that FGD's line
// is inside the frame.
func TestDistributionLinesAreDrawn(t *testing.T) {
	lines := []report.Series{cdfSeries("FGD", []float64{0, 0, 0}), cdfSeries("PWR", append(make([]float64, 49), 120))}
	extendCDFs(lines)
	want := []report.Series{{Name: "FGD", X: []float64{0, 120}, Y: []float64{1, 1}}, {Name: "PWR", X: []float64{0, 120}, Y: []float64{0.98, 1}}}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("extendCDFs (-want +got):\n%s", diff)
	}
	lo, hi := cdfRange(lines)
	if math.Abs(lo-0.9796) > 1e-12 || math.Abs(hi-1.0008) > 1e-12 {
		t.Errorf("cdfRange = %v, %v; want 0.9796, 1.0008", lo, hi)
	}
	// Every system without a wait: the lines run from 0 to 1 s.
	lines = []report.Series{cdfSeries("a", []float64{0}), cdfSeries("b", []float64{0, 0})}
	extendCDFs(lines)
	for _, l := range lines {
		if len(l.X) != 2 || l.X[1] != 1 {
			t.Errorf("%s: %v, want a line from 0 to 1 s", l.Name, l.X)
		}
	}
}
