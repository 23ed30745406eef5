// Package report writes results: CSV and JSON files written atomically, SVG
// line plots drawn with gonum/plot, and a self-contained HTML page.
package report

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// WriteFile writes data to path atomically (temporary file, then rename).
func WriteFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteFiles writes each named file into dir with WriteFile, in name order.
// Every file is rendered before the call, so a failure leaves earlier files
// complete and no file half-written.
func WriteFiles(dir string, files map[string][]byte) error {
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if err := WriteFile(filepath.Join(dir, n), files[n]); err != nil {
			return fmt.Errorf("write %s: %w", n, err)
		}
	}
	return nil
}

// CSV renders rows (the first is the header).
func CSV(rows [][]string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.WriteAll(rows)
	return b.Bytes()
}

// JSON renders v indented, with a trailing newline.
func JSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// F formats a float for CSV: shortest round-trip form, empty for NaN.
func F(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return fmt.Sprintf("%.6g", v)
}

// Exact formats v with the fewest digits that read back as exactly v
// ("" for NaN and infinities): for values whose size makes six significant
// digits lose units, e.g. watts of a megawatt cluster.
func Exact(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Series is one line of a plot.
type Series struct {
	Name string
	X, Y []float64
	// Lo and Hi, when set (as long as X), bound a band drawn shaded
	// around the line in its colour: a 95% interval over seeds, say.
	// Points where either bound is NaN or infinite are left out of it.
	Lo, Hi []float64
}

// LinePlot describes a plot. The legend of a plot with more than one
// series is drawn in a column right of the data area, never over it, or
// under the plot when its labels are too long for that column. Series
// with the same points are drawn once, labelled with every name ("A = B"),
// so that no curve hides behind another unnamed.
type LinePlot struct {
	Title, XLabel, YLabel string
	Series                []Series
	XMin, XMax            float64 // zero values: automatic
	YMin, YMax            float64
	// Steps draws each series as a step function: a value holds until the
	// next point (power between events, an empirical distribution).
	Steps bool
	// LogX draws the x axis on a log scale (points with x <= 0 are left
	// out): for quantities that span decades, completion times say.
	LogX bool
}

// sameSeries reports whether a and b have the same points and bands.
func sameSeries(a, b Series) bool {
	return slices.Equal(a.X, b.X) && slices.Equal(a.Y, b.Y) && slices.Equal(a.Lo, b.Lo) && slices.Equal(a.Hi, b.Hi)
}

// mergeSame folds each series into the first earlier one with the same
// points, whose name then lists both ("A = B"), keeping the order of
// first appearance.
func mergeSame(ss []Series) []Series {
	var out []Series
	for _, s := range ss {
		i := slices.IndexFunc(out, func(o Series) bool { return sameSeries(o, s) })
		if i < 0 || len(s.X) == 0 {
			out = append(out, s)
			continue
		}
		out[i].Name += " = " + s.Name
	}
	return out
}

// Palette is the colour of the i-th series or bar (Palette[i%9]): the
// eight colours of Okabe and Ito's colour-blind-safe set, in an order
// that keeps the pale yellow last, and a dark grey as the ninth. Series
// past the ninth repeat the colours dashed.
var Palette = []color.RGBA{
	{0, 0, 0, 255},       // black
	{230, 159, 0, 255},   // orange
	{0, 114, 178, 255},   // blue
	{0, 158, 115, 255},   // bluish green
	{213, 94, 0, 255},    // vermillion
	{86, 180, 233, 255},  // sky blue
	{204, 121, 167, 255}, // reddish purple
	{240, 228, 66, 255},  // yellow
	{102, 102, 102, 255}, // dark grey
}

// FontFamily is the CSS font-family of report.html and of the text in
// every plot: the plots are laid out with the Liberation Sans metrics
// (metric-compatible with Arial and Helvetica, the fallbacks), and the
// page embeds Liberation Sans Regular, so the two always match.
const FontFamily = `'Liberation Sans', Arial, Helvetica, sans-serif`

// sans is the plots' typeface (gonum's Liberation collection).
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot is a plot with the page's font on every text.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 13)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 12)
		a.Tick.Label.Font = font.From(sans, 11)
	}
	p.Legend.TextStyle.Font = font.From(sans, 11)
	return p
}

func seriesColor(i int) color.RGBA { return Palette[i%len(Palette)] }

// band is a translucent fill of c.
func band(c color.RGBA) color.NRGBA { return color.NRGBA{c.R, c.G, c.B, 56} }

// SVG renders the plot as SVG (text in Liberation Sans, with FontFamily's
// fallbacks; no external URLs).
// Points with a NaN or infinite coordinate are left out; an axis whose
// points span no range at a magnitude where gonum's own widening by ±1 is
// lost to rounding (a constant series of 1e18, say) is widened by 1%
// around its value. A panic while drawing, which
// such extremes could still cause, is returned as an error naming the
// plot: a plot never crashes a run.
func (lp LinePlot) SVG() (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("plot %q: cannot draw: %v", lp.Title, r)
		}
	}()
	p := newPlot(lp.Title)
	p.X.Label.Text = lp.XLabel
	p.Y.Label.Text = lp.YLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = distinctTicks{}, distinctTicks{}
	if lp.LogX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, distinctTicks{plot.LogTicks{Prec: -1}}
	}
	p.Add(plotter.NewGrid())
	inRange := func(x float64) bool {
		return (!lp.LogX || x > 0) && (!(lp.XMax > lp.XMin) || (x >= lp.XMin && x <= lp.XMax))
	}
	var lines []plot.Plotter
	for i, s := range mergeSame(lp.Series) {
		pts := make(plotter.XYs, 0, len(s.X))
		for k := range s.X {
			if !finite(s.X[k]) || !finite(s.Y[k]) || !inRange(s.X[k]) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[k], Y: s.Y[k]})
		}
		if len(pts) == 0 {
			continue
		}
		if len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X) {
			var lo, hi plotter.XYs
			for k := range s.X {
				if finite(s.X[k]) && finite(s.Lo[k]) && finite(s.Hi[k]) && inRange(s.X[k]) {
					lo = append(lo, plotter.XY{X: s.X[k], Y: s.Lo[k]})
					hi = append(hi, plotter.XY{X: s.X[k], Y: s.Hi[k]})
				}
			}
			if len(lo) > 1 {
				if lp.Steps {
					lo, hi = steps(lo), steps(hi)
				}
				ring := slices.Clone(hi)
				for k := len(lo) - 1; k >= 0; k-- {
					ring = append(ring, lo[k])
				}
				pg, err := plotter.NewPolygon(ring)
				if err != nil {
					return nil, err
				}
				pg.Color = band(seriesColor(i))
				pg.LineStyle.Width = 0
				p.Add(pg)
			}
		}
		if lp.Steps {
			pts = steps(pts)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = seriesColor(i)
		l.Width = vg.Points(1.75)
		if i >= len(Palette) {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(2.5)}
		}
		lines = append(lines, l)
		p.Legend.Add(s.Name, l)
	}
	p.Add(lines...) // lines over every band
	if lp.XMax > lp.XMin {
		p.X.Min, p.X.Max = lp.XMin, lp.XMax
	}
	if lp.YMax > lp.YMin {
		p.Y.Min, p.Y.Max = lp.YMin, lp.YMax
	}
	p.X.Min, p.X.Max = widen(p.X.Min, p.X.Max)
	p.Y.Min, p.Y.Max = widen(p.Y.Min, p.Y.Max)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		// gonum's tick search does not end on a span beyond float64.
		if finite(a.Min) && finite(a.Max) && !finite(a.Max-a.Min) {
			return nil, fmt.Errorf("plot %q: axis %q spans %g to %g, beyond what float64 can divide into ticks", lp.Title, a.Label.Text, a.Min, a.Max)
		}
	}
	return render(p, len(lines) > 1)
}

// render draws p on an 8 x 5 inch SVG canvas; withLegend puts its legend
// in a column right of the plot, top-aligned with the data area, or, when
// that column would take more than a third of the width, under the plot
// on a canvas made as much taller, so that no label is cut.
func render(p *plot.Plot, withLegend bool) ([]byte, error) {
	if withLegend {
		p.Legend.Left, p.Legend.Top = true, true
		p.Legend.Padding = vg.Points(2)
		probe := draw.New(vgsvg.New(8*vg.Inch, 5*vg.Inch))
		r := p.Legend.Rectangle(probe)
		w := (r.Max.X-r.Min.X)*1.15 + vg.Points(12) // slack for a fallback font
		if w > probe.Max.X/3 {
			return renderLegendBelow(p, w, r.Max.Y-r.Min.Y)
		}
		c := vgsvg.New(8*vg.Inch, 5*vg.Inch)
		dc := draw.New(c)
		col := draw.Crop(dc, dc.Max.X-w, 0, 0, 0)
		plotArea := draw.Crop(dc, 0, -w, 0, 0)
		legend := p.Legend
		p.Legend = plot.NewLegend() // drawn beside, not inside
		p.Draw(plotArea)
		da := p.DataCanvas(plotArea)
		col.Max.Y = da.Max.Y
		col.Min.X += vg.Points(8)
		legend.Draw(col)
		return svgBytes(c)
	}
	c := vgsvg.New(8*vg.Inch, 5*vg.Inch)
	p.Legend = plot.NewLegend()
	p.Draw(draw.New(c))
	return svgBytes(c)
}

// renderLegendBelow draws p with its legend (w wide, h high) in one
// column under it, left-aligned with the data area: on an 8 x 5 inch
// area, made wider when the legend needs more (the page scales the SVG to
// its width), and as much taller as the legend.
func renderLegendBelow(p *plot.Plot, w, h vg.Length) ([]byte, error) {
	lh := h*1.1 + vg.Points(10)
	width := max(8*vg.Inch, w+vg.Inch) // an inch for the y axis left of the legend
	c := vgsvg.New(width, 5*vg.Inch+lh)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())                        // the legend's strip too, not only the plot's
	plotArea := draw.Crop(dc, 0, -vg.Points(12), lh, 0) // room for the last x tick's label
	legend := p.Legend
	p.Legend = plot.NewLegend()
	p.Draw(plotArea)
	da := p.DataCanvas(plotArea)
	col := draw.Crop(dc, 0, 0, 0, -(5*vg.Inch + vg.Points(2)))
	col.Min.X = da.Min.X
	legend.Draw(col)
	return svgBytes(c)
}

// svgBytes writes c, with FontFamily's fallbacks.
func svgBytes(c *vgsvg.Canvas) ([]byte, error) {
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return withFallbacks(b.Bytes()), nil
}

// distinctTicks are the ticks of its Ticker (gonum's defaults when nil)
// with their labels written with as many decimals as it takes for no two
// labelled ticks to read the same (gonum labels 1, 1.02 and 1.04 all "1").
type distinctTicks struct{ plot.Ticker }

// Ticks implements plot.Ticker.
func (d distinctTicks) Ticks(lo, hi float64) []plot.Tick {
	var tk plot.Ticker = plot.DefaultTicks{}
	if d.Ticker != nil {
		tk = d.Ticker
	}
	return distinctLabels(tk.Ticks(lo, hi), func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) })
}

// distinctLabels relabels ts, when two of its labels are equal, with
// format(value, prec) for the least prec (up to 12) that tells them apart.
func distinctLabels(ts []plot.Tick, format func(v float64, prec int) string) []plot.Tick {
	if !dupLabels(ts) {
		return ts
	}
	for prec := 0; prec <= 12; prec++ {
		out := slices.Clone(ts)
		for i := range out {
			if out[i].Label != "" {
				out[i].Label = format(out[i].Value, prec)
			}
		}
		if !dupLabels(out) {
			return out
		}
	}
	return ts
}

// dupLabels reports whether two labelled ticks read the same.
func dupLabels(ts []plot.Tick) bool {
	seen := map[string]bool{}
	for _, t := range ts {
		if t.Label == "" {
			continue
		}
		if seen[t.Label] {
			return true
		}
		seen[t.Label] = true
	}
	return false
}

// compactTicks are gonum's default ticks with at most three labelled
// values, written short (250k, 1.5M), so that the narrow axes of a
// BarPlot's panels never run their labels together.
type compactTicks struct{}

// Ticks implements plot.Ticker.
func (compactTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	var major []int
	for i, t := range ts {
		if t.Label != "" {
			major = append(major, i)
		}
	}
	step := (len(major) + 2) / 3
	for k, i := range major {
		if k%step != 0 {
			ts[i].Label = ""
			continue
		}
		ts[i].Label = compact(ts[i].Value)
	}
	return distinctLabels(ts, func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) })
}

// compact writes v with a k (thousand) or M (million) suffix.
func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// withFallbacks names FontFamily's fallbacks after the Liberation Sans
// that gonum writes, for an SVG opened on its own.
func withFallbacks(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:"+FontFamily+";"))
}

// Bar is one bar of a BarPanel: a value and, where known, its interval
// (Lo and Hi NaN: none).
type Bar struct {
	Value, Lo, Hi float64
}

// BarPanel is one quantity of a BarPlot, one bar per name.
type BarPanel struct {
	// Label names the quantity and its one unit ("energy (kWh)").
	Label string
	Bars  []Bar
	// Format prints each bar's value beside it ("%.1f").
	Format string
}

// BarPlot draws horizontal bars, one row per name (top to bottom in the
// order given, each in its series colour, Palette[i]), and one panel per
// quantity side by side, each with its own axis and unit; an interval is
// drawn as an error bar and each value is printed beside its bar.
type BarPlot struct {
	Title  string
	Names  []string
	Panels []BarPanel
}

// SVG renders the bar plot, or an error naming the plot.
func (bp BarPlot) SVG() (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("plot %q: cannot draw: %v", bp.Title, r)
		}
	}()
	n := len(bp.Names)
	if n == 0 || len(bp.Panels) == 0 {
		return nil, fmt.Errorf("plot %q: no bars", bp.Title)
	}
	// Row of name i: n-1-i, so that the first name is on top.
	labels := make([]string, n)
	for i, name := range bp.Names {
		labels[n-1-i] = name
	}
	var plots []*plot.Plot
	for k, pn := range bp.Panels {
		if len(pn.Bars) != n {
			return nil, fmt.Errorf("plot %q: panel %q has %d bars for %d names", bp.Title, pn.Label, len(pn.Bars), n)
		}
		p := newPlot("")
		p.X.Label.Text = pn.Label
		p.Add(plotter.NewGrid())
		hiMax, loMin := 0.0, 0.0
		var lbl plotter.XYLabels
		var errs plotter.XYs
		var errLo, errHi []float64
		for i, b := range pn.Bars {
			v := b.Value
			if !finite(v) {
				v = 0
			}
			bc, err := plotter.NewBarChart(plotter.Values{v}, vg.Points(18))
			if err != nil {
				return nil, err
			}
			bc.Horizontal = true
			bc.XMin = float64(n - 1 - i)
			bc.Color = seriesColor(i)
			bc.LineStyle.Width = 0
			p.Add(bc)
			end := v
			if finite(b.Lo) && finite(b.Hi) {
				errs = append(errs, plotter.XY{X: v, Y: float64(n - 1 - i)})
				errLo, errHi = append(errLo, v-b.Lo), append(errHi, b.Hi-v)
				end = max(end, b.Hi)
				loMin = min(loMin, b.Lo)
			}
			hiMax = max(hiMax, end)
			loMin = min(loMin, v)
			text := "-"
			if finite(b.Value) {
				text = fmt.Sprintf(pn.Format, b.Value)
			}
			lbl.XYs = append(lbl.XYs, plotter.XY{X: end, Y: float64(n - 1 - i)})
			lbl.Labels = append(lbl.Labels, text)
		}
		if len(errs) > 0 {
			eb := &plotter.XErrorBars{XYs: errs, XErrors: make(plotter.XErrors, len(errs)), LineStyle: plotter.DefaultLineStyle, CapWidth: vg.Points(8)}
			for i := range errs {
				eb.XErrors[i] = struct{ Low, High float64 }{errLo[i], errHi[i]}
			}
			eb.LineStyle.Width = vg.Points(1.25)
			p.Add(eb)
		}
		lb, err := plotter.NewLabels(lbl)
		if err != nil {
			return nil, err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font = font.From(sans, 10)
			lb.TextStyle[i].YAlign = draw.YCenter
		}
		lb.Offset = vg.Point{X: vg.Points(4)}
		p.Add(lb)
		p.NominalY(labels...)
		if k > 0 {
			p.NominalY(make([]string, n)...)
		}
		// Room right of the longest bar for its printed value.
		span := hiMax - loMin
		if span <= 0 {
			span = 1
		}
		p.X.Min, p.X.Max = loMin, hiMax+0.3*span
		if !finite(p.X.Max - p.X.Min) {
			// gonum's tick search never ends on a range wider than
			// float64 holds (issue 40: bars near -1.2e308 and 5e307).
			return nil, fmt.Errorf("plot %q: panel %q spans %g to %g, beyond float64: cannot draw", bp.Title, pn.Label, loMin, hiMax)
		}
		p.X.Tick.Marker = compactTicks{}
		p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
		plots = append(plots, p)
	}
	h := vg.Length(max(2.2, 0.9+0.32*float64(n))) * vg.Inch
	c := vgsvg.New(8*vg.Inch, h)
	dc := draw.New(c)
	if bp.Title != "" {
		t := newPlot(bp.Title)
		th := t.Title.TextStyle.Height(bp.Title)
		dc.FillText(t.Title.TextStyle, vg.Point{X: dc.Center().X, Y: dc.Max.Y - 1.5*th}, bp.Title)
		dc = draw.Crop(dc, 0, 0, 0, -2*th-vg.Points(4))
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(14), PadTop: vg.Points(4), PadBottom: vg.Points(2), PadLeft: vg.Points(2), PadRight: vg.Points(6)}
	cs := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for k, p := range plots {
		p.Draw(cs[0][k])
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return withFallbacks(b.Bytes()), nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// widen gives an axis range [lo, hi] that gonum can divide into ticks.
// gonum widens an empty range (lo == hi) by 1 on each side, which does
// nothing at magnitudes from about 1e16, where it panics ("illegal
// range"); such a range is widened by 1% of its value instead. Any other
// range is left as it is (so plots of ordinary values are unchanged).
func widen(lo, hi float64) (float64, float64) {
	if !finite(lo) || lo != hi || (lo-1 != lo && hi+1 != hi) {
		return lo, hi
	}
	d := math.Abs(lo) * 0.01
	return lo - d, hi + d
}

// steps inserts a corner before each point: (x[i], y[i-1]).
func steps(pts plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, 2*len(pts))
	for i, p := range pts {
		if i > 0 {
			out = append(out, plotter.XY{X: p.X, Y: pts[i-1].Y})
		}
		out = append(out, p)
	}
	return out
}

// Page is a self-contained HTML report.
type Page struct {
	Title string
	// Summary is the plain-language paragraph at the top ("": none).
	Summary string
	Notes   []string
	Tables  []Table
	Figures []Figure
	// Definitions, after the figures, says what each figure of the page
	// means (nil: none).
	Definitions *Table
	Footnote    string
}

// Table is a titled table.
type Table struct {
	Title string
	// Lead, when set, is a line shown under the title, before the rows,
	// and at the top of the page (a claims table's "N of M claims hold").
	Lead string
	Head []string
	Rows [][]string
}

// Figure is an inline SVG with a caption.
type Figure struct {
	Caption string
	SVG     []byte
}

// pageFont is Liberation Sans Regular as a data: URL, embedded once in
// each page so that the page's text and the plots' text (laid out with
// its metrics) are the same font on any machine.
var pageFont = template.CSS("url(data:font/ttf;base64," + base64.StdEncoding.EncodeToString(liberationsansregular.TTF) + ")")

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Page.Title}}</title>
<style>@font-face{font-family:'Liberation Sans';font-weight:normal;font-style:normal;src:{{.Font}} format("truetype")}
body{font-family:{{.Family}};font-size:15px;line-height:1.45;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:1.6em}
p.summary{font-size:1.1em;background:#f4f7fb;border-left:4px solid #0072b2;padding:.6em 1em}
div.tw{overflow-x:auto}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;vertical-align:top}
th{background:#f3f3f3}td:first-child,th:first-child,td:nth-child(2):last-child,th:nth-child(2):last-child{text-align:left}
figure{margin:1.5em 0}figure svg{max-width:100%;height:auto}figcaption{color:#444;margin-top:.3em}</style></head>
<body><h1>{{.Page.Title}}</h1>{{range .Page.Tables}}{{if .Lead}}<p><strong>{{.Lead}}</strong></p>{{end}}{{end}}{{with .Page.Summary}}<p class="summary">{{.}}</p>{{end}}{{range .Page.Notes}}<p>{{.}}</p>{{end}}
{{range .Page.Tables}}<h2>{{.Title}}</h2>{{if .Lead}}<p><strong>{{.Lead}}</strong></p>{{end}}<div class="tw"><table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table></div>{{end}}
{{range .Page.Figures}}<figure>{{.Inline}}<figcaption>{{.Caption}}</figcaption></figure>{{end}}
{{with .Page.Definitions}}<h2>{{.Title}}</h2><table class="defs"><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}
<p><small>{{.Page.Footnote}}</small></p></body></html>
`))

// Inline returns the SVG for embedding.
func (f Figure) Inline() template.HTML {
	s := f.SVG
	if i := bytes.Index(s, []byte("<svg")); i > 0 {
		s = s[i:]
	}
	return template.HTML(s) // generated by gonum/plot, not user input
}

// HTML renders the page.
func (p Page) HTML() ([]byte, error) {
	var b bytes.Buffer
	if err := pageTmpl.Execute(&b, struct {
		Page         Page
		Font, Family template.CSS
	}{p, pageFont, template.CSS(FontFamily)}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
