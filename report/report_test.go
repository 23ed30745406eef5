package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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

// The palette has nine colours, pairwise apart (Euclidean distance in RGB
// over 60: the closest pair, orange and vermillion, is about 67 apart; the
// Okabe-Ito hues were chosen to stay apart under colour blindness too).
func TestPaletteNineDistinct(t *testing.T) {
	if len(Palette) != 9 {
		t.Fatalf("%d colours, want 9", len(Palette))
	}
	for i, a := range Palette {
		for j, b := range Palette[:i] {
			dr, dg, db := float64(a.R)-float64(b.R), float64(a.G)-float64(b.G), float64(a.B)-float64(b.B)
			if d := math.Sqrt(dr*dr + dg*dg + db*db); d < 60 {
				t.Errorf("colours %d and %d are %.0f apart", j, i, d)
			}
		}
	}
}

var svgText = regexp.MustCompile(`<text x="([-0-9.e]+)"[^>]*>([^<]*)</text>`)

// textX maps each text of an SVG to its x position.
func textX(t *testing.T, svg []byte) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range svgText.FindAllSubmatch(svg, -1) {
		x, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		out[string(m[2])] = x
	}
	return out
}

// A legend sits right of the data area: every legend entry starts right
// of the x axis' last tick label (at the data area's right edge); the
// text is in the page's font with its fallbacks; a band adds a filled
// path per series.
func TestLinePlotLegendOutsideFontAndBands(t *testing.T) {
	lp := LinePlot{Title: "t", XLabel: "x (s)", YLabel: "y (kW)", XMin: 0, XMax: 10, Series: []Series{
		{Name: "alpha", X: []float64{0, 10}, Y: []float64{0, 10}},
		{Name: "beta", X: []float64{0, 10}, Y: []float64{10, 0}},
	}}
	plain, err := lp.SVG()
	if err != nil {
		t.Fatal(err)
	}
	xs := textX(t, plain)
	if xs["alpha"] <= xs["10"] || xs["beta"] <= xs["10"] {
		t.Errorf("legend at x %v, %v; the x axis ends at %v", xs["alpha"], xs["beta"], xs["10"])
	}
	if !bytes.Contains(plain, []byte("font-family:"+FontFamily+";")) {
		t.Error("plot text is not in FontFamily")
	}
	lp.Series[0].Lo, lp.Series[0].Hi = []float64{-1, 9}, []float64{1, 11}
	banded, err := lp.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(banded, []byte("fill-opacity:0.2")) || bytes.Contains(plain, []byte("fill-opacity:0.2")) {
		t.Error("the band is not drawn as a translucent fill (or one is drawn without a band)")
	}
}

// A bar plot prints each name once and each value in its panel's format
// (cents for money); a panel whose bars do not match the names is an
// error naming the plot.
func TestBarPlot(t *testing.T) {
	bp := BarPlot{Title: "totals", Names: []string{"FGD", "PWR"}, Panels: []BarPanel{
		{Label: "energy (kWh)", Format: "%.1f", Bars: []Bar{{10, 9, 11}, {8, math.NaN(), math.NaN()}}},
		{Label: "cost (USD)", Format: "%.2f", Bars: []Bar{{1.234, 1.2, 1.3}, {1.1, 1, 1.2}}},
	}}
	svg, err := bp.SVG()
	if err != nil {
		t.Fatal(err)
	}
	xs := textX(t, svg)
	for _, s := range []string{"totals", "FGD", "PWR", "10.0", "8.0", "1.23", "1.10", "energy (kWh)", "cost (USD)"} {
		if _, ok := xs[s]; !ok {
			t.Errorf("no text %q in the bar plot", s)
		}
	}
	again, _ := bp.SVG()
	if !bytes.Equal(svg, again) {
		t.Error("same bar plot rendered twice differs")
	}
	bp.Panels[1].Bars = bp.Panels[1].Bars[:1]
	if _, err := bp.SVG(); err == nil || !strings.Contains(err.Error(), `plot "totals"`) {
		t.Errorf("mismatched panel: error %v, want one naming the plot", err)
	}
}

// The page embeds Liberation Sans once and sets the same family as the
// plots; summary and definitions are shown.
func TestPageFontSummaryDefinitions(t *testing.T) {
	h, err := Page{Title: "r", Summary: "S <b>", Definitions: &Table{Title: "What each figure means", Head: []string{"figure", "definition"}, Rows: [][]string{{"EOPC", "power"}}}}.HTML()
	if err != nil {
		t.Fatal(err)
	}
	s := string(h)
	for _, want := range []string{"@font-face{font-family:'Liberation Sans'", "data:font/ttf;base64,", "font-family:" + FontFamily, `<p class="summary">S &lt;b&gt;</p>`, "<td>EOPC</td><td>power</td>"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(s, "@font-face"); n != 1 {
		t.Errorf("%d @font-face rules, want 1", n)
	}
}

// A bar plot whose axis would span more than float64 holds is an error
// naming the plot, at once: gonum's tick search never ended on it (issue
// 40; the fuzz input is in testdata/fuzz/FuzzBarPlotSVG).
func TestBarPlotSpanBeyondFloat64(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		_, err := BarPlot{Title: "wide", Names: []string{"a", "b"}, Panels: []BarPanel{{Label: "x (kWh)", Format: "%.2f",
			Bars: []Bar{{-1.2e308, math.NaN(), math.NaN()}, {5e307, math.NaN(), math.NaN()}}}}}.SVG()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `plot "wide": panel "x (kWh)" spans -1.2e+308 to 5e+307, beyond float64`) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("BarPlot.SVG did not return within 30 s")
	}
}

// FuzzBarPlotSVG: bars of any finite or non-finite values and intervals
// give an SVG or an error naming the plot, never a panic.
// (bounded time: the seed corpus holds the input that hung it)
func FuzzBarPlotSVG(f *testing.F) {
	f.Add(1.0, 0.5, 1.5, 2.0)
	f.Add(math.NaN(), math.Inf(1), math.Inf(-1), 0.0)
	f.Add(1e308, -1e308, 1e308, -1e308)
	f.Add(0.0, 0.0, 0.0, 0.0)
	f.Fuzz(func(t *testing.T, v, lo, hi, w float64) {
		_, err := BarPlot{Title: "fuzz", Names: []string{"a", "b"}, Panels: []BarPanel{{Label: "x (kWh)", Format: "%.2f", Bars: []Bar{{v, lo, hi}, {w, math.NaN(), math.NaN()}}}}}.SVG()
		if err != nil && !strings.Contains(err.Error(), `plot "fuzz"`) {
			t.Fatalf("error %v does not name the plot", err)
		}
	})
}

// svgTexts are the texts of an SVG's <text> elements.
func svgTexts(svg []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllSubmatch(svg, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// A y range of 1 to 1.0478 (EaCO's runtime against FIFO): gonum labels its
// ticks 1, 1 and 1; ours must all differ (1.00, 1.02, 1.04).
func TestLinePlotTickLabelsDiffer(t *testing.T) {
	for _, ys := range [][]float64{{1, 1.0478}, {0.9999, 1.0001}, {1e6, 1.0004e6}} {
		svg, err := LinePlot{Title: "runtime", XLabel: "nodes", YLabel: "runtime / FIFO", XMin: 20, XMax: 72,
			Series: []Series{{Name: "EaCO", X: []float64{28, 64}, Y: ys}, {Name: "FIFO", X: []float64{28, 64}, Y: []float64{ys[0], ys[0]}}}}.SVG()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, s := range svgTexts(svg) {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				continue // title, labels, legend
			}
			if seen[s] {
				t.Errorf("y %v: tick label %q appears twice (labels %q)", ys, s, svgTexts(svg))
			}
			seen[s] = true
		}
	}
	// The bar plots' compact ticks too: 1,000,000 to 1,000,400 all read
	// "1M" at four digits.
	bp := BarPlot{Names: []string{"a", "b"}, Panels: []BarPanel{{Label: "x", Format: "%.0f", Bars: []Bar{{Value: 1e6, Lo: 1e6, Hi: 1e6}, {Value: 1.0004e6, Lo: 1.0004e6, Hi: 1.0004e6}}}}}
	ts := compactTicks{}.Ticks(1e6, 1.0004e6)
	seen := map[string]bool{}
	for _, tk := range ts {
		if tk.Label != "" && seen[tk.Label] {
			t.Errorf("bar tick label %q twice: %v", tk.Label, ts)
		}
		seen[tk.Label] = true
	}
	if _, err := bp.SVG(); err != nil {
		t.Fatal(err)
	}
}

// Six long labels (compare's "policy / setting") do not fit the legend
// column (a third of the width): the legend goes under the plot, the
// canvas grows by its height, and every label is written. Two series
// with the same points are one curve labelled with both names.
func TestLinePlotLongLegendBelowAndSameCurves(t *testing.T) {
	names := []string{"FGD / as configured", "PWR / as configured", "0.1*PWR+0.9*FGD / as configured", "BestFit / as configured", "FGD / power-down (automatic)", "PWR / power-down 5 min"}
	var ss []Series
	for i, n := range names {
		ss = append(ss, Series{Name: n, X: []float64{1, 10, 100}, Y: []float64{float64(i) / 10, 0.8, 1}})
	}
	height := regexp.MustCompile(`<svg width="576pt" height="([0-9.]+)pt"`)
	svg, err := LinePlot{Title: "t", XLabel: "wait (s)", YLabel: "share", Series: ss, Steps: true}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, n := range names {
		if !slices.Contains(texts, n) {
			t.Errorf("legend label %q not written (texts %q)", n, texts)
		}
	}
	if m := height.FindSubmatch(svg); m == nil || string(m[1]) == "360" {
		t.Errorf("canvas height %q: want more than 5 in (360 pt) with the legend below", m)
	}
	// Short labels keep the column right of the plot, on 8 x 5 in.
	svg, _ = LinePlot{Title: "t", XLabel: "x", YLabel: "y", Series: []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{0, 1}}, {Name: "b", X: []float64{0, 1}, Y: []float64{1, 0}}}}.SVG()
	if m := height.FindSubmatch(svg); m == nil || string(m[1]) != "360" {
		t.Errorf("canvas height %q with two short labels, want 360 pt", m)
	}
	// PWR and the mix draw the same curve: one line, labelled with both.
	same := []Series{{Name: "FGD", X: []float64{0, 5}, Y: []float64{0.9, 1}}, {Name: "PWR", X: []float64{0, 3}, Y: []float64{0.5, 1}}, {Name: "mix", X: []float64{0, 3}, Y: []float64{0.5, 1}}}
	svg, _ = LinePlot{Title: "t", XLabel: "x", YLabel: "y", Series: same}.SVG()
	if texts := svgTexts(svg); !slices.Contains(texts, "PWR = mix") || !slices.Contains(texts, "FGD") {
		t.Errorf("texts %q: want the legend labels FGD and \"PWR = mix\"", texts)
	}
}

// A log x axis leaves out x <= 0 and labels decades.
func TestLinePlotLogX(t *testing.T) {
	svg, err := LinePlot{Title: "JCT", XLabel: "JCT (s)", YLabel: "share", LogX: true, Steps: true,
		Series: []Series{{Name: "a", X: []float64{0, 10, 1000, 1e5}, Y: []float64{0.1, 0.2, 0.6, 1}}}}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(svg)
	for _, want := range []string{"10", "1000", "100000"} {
		if !slices.Contains(texts, want) {
			t.Errorf("texts %q: want the decade label %s", texts, want)
		}
	}
}
