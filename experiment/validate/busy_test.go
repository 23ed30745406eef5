package validate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/hw"
)

// zeusPoint is a Zeus-like P100 point at power limit lim.
func zeusPoint(workload string, line int, lim, w float64) Point {
	return Point{File: "z.csv", Line: line, GPU: "P100", Workload: workload, Knob: "power limit W", KnobValue: lim, Watts: w}
}

// TestBusyByHand: three P100 workloads at the top limit (250 W): a at 100
// and 120 W (mean 110), b at 200 W, c at 60 W; a's 90 W at 150 W is not
// the default setting and is left out.
func TestBusyByHand(t *testing.T) {
	pts := []Point{zeusPoint("a", 2, 250, 100), zeusPoint("a", 3, 250, 120), zeusPoint("a", 4, 150, 90),
		zeusPoint("b", 5, 250, 200), zeusPoint("c", 6, 250, 60)}
	got, unc, err := busyScore(hw.Default(), pts)
	if err != nil || len(unc) != 0 {
		t.Fatalf("err %v, uncovered %v", err, unc)
	}
	// Held out: a by mean(b, c) = (200+60)/2 = 130; b by mean(a, c) =
	// (110+60)/2 = 85; c by mean(a, b) = (110+200)/2 = 155.
	want := map[int]float64{2: 130, 3: 130, 5: 85, 6: 155}
	if len(got) != len(want) {
		t.Fatalf("%d points scored, want %d", len(got), len(want))
	}
	for _, s := range got {
		if w, ok := want[s.Line]; !ok || math.Abs(s.predicted-w) > 1e-12 {
			t.Errorf("line %d: predicted %v, want %v", s.Line, s.predicted, w)
		}
	}
	fit, err := FitBusy(hw.Default(), pts)
	if err != nil {
		t.Fatal(err)
	}
	// All three: (110+200+60)/3 = 123.33 W; share (123.33-25)/(250-25).
	f := fit.Groups[0]
	if f.Group != "P100" || f.Workloads != 3 || f.Points != 4 || math.Abs(f.BusyW-370.0/3) > 1e-12 || math.Abs(f.Share-(370.0/3-25)/225) > 1e-12 {
		t.Errorf("fit %+v", f)
	}
	// Above the TDP: capped, and said so. A100 at 500 and 450 W -> mean
	// 475 W, busy 400 W (the A100's TDP), share 1.
	a := []Point{{File: "p.csv", Line: 2, GPU: "A100-SXM", Workload: "x", Watts: 500}, {File: "p.csv", Line: 3, GPU: "A100-SXM", Workload: "y", Watts: 450}}
	fit, _ = FitBusy(hw.Default(), append(a, pts...))
	if g := fit.Groups[0]; g.Group != "A100" || g.MeasuredW != 475 || g.BusyW != 400 || !g.Capped || g.Share != 1 {
		t.Errorf("A100 %+v", g)
	}
	// The pooled share is the mean of the groups' shares; held out by
	// group, P100 is predicted with the A100's share alone: 25 + 1*225.
	if want := (1 + (370.0/3-25)/225) / 2; math.Abs(fit.Share-want) > 1e-12 {
		t.Errorf("pooled share %v, want %v", fit.Share, want)
	}
	pooled, _, _ := busyPooledScore(hw.Default(), append(a, pts...))
	for _, s := range pooled {
		if s.GPU == "P100" && s.predicted != 250 {
			t.Errorf("P100 held out by group: %v, want 250", s.predicted)
		}
	}
}

// TestCatalogBusyIsTheStudys: the embedded catalog's busy_w are the
// study's fit on the shared traces (to the 0.1 W they are written to):
// measured groups their mean, the other models idle + pooled share x
// (TDP - idle).
func TestCatalogBusyIsTheStudys(t *testing.T) {
	full := filepath.Join("..", "..", DefaultTraces)
	if _, err := os.Stat(full); err != nil {
		t.Skipf("no shared traces at %s", full)
	}
	cat := hw.Default()
	res, err := Measure(full, cat)
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]bool{}
	for _, f := range res.Busy.Groups {
		for _, name := range f.Catalog {
			measured[name] = true
			g, _ := cat.GPU(name)
			if math.Abs(float64(g.BusyW)-f.BusyW) > 0.051 {
				t.Errorf("%s: catalog busy_w %v, study %v", name, g.BusyW, f.BusyW)
			}
		}
	}
	for _, g := range cat.GPUs {
		if measured[g.Name] {
			continue
		}
		want := float64(g.IdleW) + res.Busy.Share*float64(g.TDPW-g.IdleW)
		if math.Abs(float64(g.BusyW)-want) > 0.051 || !strings.HasPrefix(g.BusySource, "pooled") {
			t.Errorf("%s: catalog busy_w %v (%q), want the pooled %v", g.Name, g.BusyW, g.BusySource, want)
		}
	}
}
