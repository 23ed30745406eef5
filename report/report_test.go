package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSVGAndHTMLAreSelfContainedAndDeterministic(t *testing.T) {
	lp := LinePlot{Title: "t", XLabel: "x", YLabel: "y", Series: []Series{
		{Name: "a", X: []float64{0, 0.5, 1}, Y: []float64{0, 1, math.NaN()}},
		{Name: "b", X: []float64{0, 1}, Y: []float64{1, 2}},
	}, XMin: 0, XMax: 1}
	a, err := lp.SVG()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := lp.SVG()
	if !bytes.Equal(a, b) {
		t.Fatal("same plot rendered twice differs")
	}
	if !bytes.Contains(a, []byte("<svg")) || bytes.Contains(a, []byte("http://fonts")) {
		t.Fatal("not a self-contained SVG")
	}
	page := Page{Title: "r <1>", Tables: []Table{{Title: "T", Head: []string{"h"}, Rows: [][]string{{"<b>"}}}}, Figures: []Figure{{Caption: "c", SVG: a}}}
	h, err := page.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), "&lt;b&gt;") || !strings.Contains(string(h), "<svg") {
		t.Fatal("HTML must escape table text and inline the SVG")
	}
}

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.csv")
	if err := WriteFile(p, CSV([][]string{{"a", "b"}, {"1", F(math.NaN())}})); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "a,b\n1,\n" {
		t.Errorf("file = %q", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files left, want 1 (no temporaries)", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), nil); err == nil {
		t.Error("writing into a missing directory must fail")
	}
}

// Exact keeps every unit of a megawatt figure (F's six digits round
// 1,234,567.25 W to 1.23457e+06) and reads back to the same float.
func TestExact(t *testing.T) {
	for _, v := range []float64{1234567.25, 864412.3456789, 0.1, 0} {
		s := Exact(v)
		got, err := strconv.ParseFloat(s, 64)
		if err != nil || got != v {
			t.Errorf("Exact(%v) = %q reads back as %v, %v", v, s, got, err)
		}
	}
	if Exact(1234567.25) != "1234567.25" || F(1234567.25) != "1.23457e+06" {
		t.Errorf("Exact %q, F %q", Exact(1234567.25), F(1234567.25))
	}
	if Exact(math.NaN()) != "" {
		t.Error("NaN not empty")
	}
}

// Extreme but finite values never make SVG panic: a constant series at
// any magnitude (where gonum's widening of an empty range by ±1 is lost
// to rounding from about 1e16), huge spans, and NaN or infinite points
// (left out) all give an SVG, except a span beyond float64 (an error
// naming the plot, as gonum's tick search would not end).
func TestLinePlotExtremeValues(t *testing.T) {
	cases := map[string][]float64{
		"constant 1e18":   {1e18, 1e18, 1e18},
		"constant -1e30":  {-1e30, -1e30, -1e30},
		"constant 1e300":  {1e300, 1e300, 1e300},
		"span 1e308":      {-1e308, 0, 1e308},
		"infinite points": {math.Inf(1), 1, math.Inf(-1)},
		"max float":       {math.MaxFloat64, math.MaxFloat64, math.MaxFloat64},
		"smallest":        {5e-324, 5e-324, 5e-324},
	}
	for name, y := range cases {
		t.Run(name, func(t *testing.T) {
			for _, steps := range []bool{false, true} {
				svg, err := LinePlot{Title: name, Steps: steps, Series: []Series{{Name: "a", X: []float64{0, 1, 2}, Y: y}}}.SVG()
				if wantErr := name == "span 1e308"; wantErr != (err != nil) {
					t.Fatalf("steps %v: error %v, want one: %v", steps, err, wantErr)
				}
				if err != nil {
					if !strings.Contains(err.Error(), `plot "`+name+`"`) {
						t.Errorf("steps %v: error %v does not name the plot", steps, err)
					}
					continue
				}
				if !bytes.Contains(svg, []byte("<svg")) {
					t.Errorf("steps %v: not an SVG: %.80s", steps, svg)
				}
			}
		})
	}
}

// FuzzLinePlotSVG: a plot of any finite or non-finite values gives an SVG
// or an error naming the plot, never a panic.
func FuzzLinePlotSVG(f *testing.F) {
	f.Add(0.0, 1.0, 1e18, 1e18, false)
	f.Add(-1e308, 1e308, 1.0, 2.0, true)
	f.Add(math.MaxFloat64, math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64, false)
	f.Add(5e-324, 5e-324, 0.0, 0.0, true)
	f.Fuzz(func(t *testing.T, x0, x1, y0, y1 float64, steps bool) {
		_, err := LinePlot{Title: "fuzz", Steps: steps, Series: []Series{{Name: "a", X: []float64{x0, x1}, Y: []float64{y0, y1}}}}.SVG()
		if err != nil && !strings.Contains(err.Error(), `plot "fuzz"`) {
			t.Fatalf("error %v does not name the plot", err)
		}
	})
}
