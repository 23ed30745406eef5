package pwr

import (
	"strings"
	"testing"
)

// curve builds points of one policy at ratios 0.1, 0.2, ... from values.
func curve(policy string, f func(r float64) CurvePoint) []CurvePoint {
	var out []CurvePoint
	for i := 1; i <= 10; i++ {
		r := float64(i) / 10
		c := f(r)
		c.Policy, c.Ratio = policy, r
		out = append(out, c)
	}
	return out
}

// Each kind of check holds just inside its paper number and tolerance and
// fails just outside, and its text carries the margin with its sign.
func TestClaimBoundaries(t *testing.T) {
	saving := func(v float64) []CurvePoint {
		var cs []CurvePoint
		for _, p := range combos {
			cs = append(cs, curve(p, func(r float64) CurvePoint { return CurvePoint{SavingVsFGD: v, GRAR: 1} })...)
		}
		return cs
	}
	c := minSavingClaim(combos, 0.13, 0.80, "")
	for _, tc := range []struct {
		v      float64
		holds  bool
		margin string
	}{{0.1301, true, "margin +0.01 pp"}, {0.1299, false, "margin -0.01 pp"}} {
		v := c.Measure(saving(tc.v))
		ok := c.Check.Holds(v)
		if ok != tc.holds || !strings.HasSuffix(c.Format(v), tc.margin) {
			t.Errorf("saving %v: holds %v %q, want %v and %q", tc.v, ok, c.Format(v), tc.holds, tc.margin)
		}
	}
	gap := func(g float64) []CurvePoint {
		cs := curve("FGD", func(float64) CurvePoint { return CurvePoint{GRAR: 1} })
		for _, p := range combos {
			cs = append(cs, curve(p, func(r float64) CurvePoint { return CurvePoint{GRAR: 1 - g} })...)
		}
		return cs
	}
	g := gapClaim("", "", "FGD", combos, 0.9, 1, 0.02, 0.01)
	for _, tc := range []struct {
		g     float64
		holds bool
	}{{0.0101, true}, {0.0299, true}, {0.0301, false}, {0.0099, false}} {
		if ok := g.Check.Holds(g.Measure(gap(tc.g))); ok != tc.holds {
			t.Errorf("GRAR gap %v: holds %v, want %v", tc.g, ok, tc.holds)
		}
	}
	drop := func(at float64) []CurvePoint {
		return curve("FGD", func(r float64) CurvePoint {
			if r >= at-1e-9 {
				return CurvePoint{GRAR: 0.99}
			}
			return CurvePoint{GRAR: 1}
		})
	}
	d := dropClaim("", "", "", 0.85, 0.91)
	for _, tc := range []struct {
		at    float64
		holds bool
	}{{0.8, false}, {0.9, true}, {1.0, false}} {
		if ok := d.Check.Holds(d.Measure(drop(tc.at))); ok != tc.holds {
			t.Errorf("first drop at %v: holds %v, want %v", tc.at, ok, tc.holds)
		}
	}
	// Traces the paper does not evaluate get no claims; every other named
	// trace gets its family's.
	for _, tr := range []string{"cpu050", "gpushare20", "gpuspec05"} {
		if n := len(Claims(tr)); n != 0 {
			t.Errorf("%s: %d claims, want none", tr, n)
		}
	}
	for _, tr := range []string{"default", "gpushare40", "gpushare60", "gpushare80", "gpushare100", "multigpu20", "multigpu30", "multigpu40", "multigpu50", "gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33"} {
		if len(Claims(tr)) == 0 {
			t.Errorf("%s: no claims", tr)
		}
	}
}
