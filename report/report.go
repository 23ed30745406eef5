// Package report writes results: CSV and JSON files written atomically, SVG
// line plots drawn with gonum/plot, and a self-contained HTML page.
package report

import (
	"bytes"
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

	"gonum.org/v1/plot"
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
}

// LinePlot describes a plot.
type LinePlot struct {
	Title, XLabel, YLabel string
	Series                []Series
	XMin, XMax            float64 // zero values: automatic
	YMin, YMax            float64
	// LegendLeft and LegendBottom place the legend (default: top right).
	LegendLeft, LegendBottom bool
	// Steps draws each series as a step function: a value holds until the
	// next point (power between events, an empirical distribution).
	Steps bool
}

var palette = []color.Color{
	color.RGBA{0, 0, 0, 255}, color.RGBA{214, 39, 40, 255}, color.RGBA{255, 127, 14, 255},
	color.RGBA{44, 160, 44, 255}, color.RGBA{31, 119, 180, 255}, color.RGBA{148, 103, 189, 255},
	color.RGBA{140, 86, 75, 255}, color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255},
	color.RGBA{188, 189, 34, 255},
}

// SVG renders the plot as SVG (fonts embedded by gonum, no external URLs).
func (lp LinePlot) SVG() ([]byte, error) {
	p := plot.New()
	p.Title.Text = lp.Title
	p.X.Label.Text = lp.XLabel
	p.Y.Label.Text = lp.YLabel
	p.Add(plotter.NewGrid())
	for i, s := range lp.Series {
		pts := make(plotter.XYs, 0, len(s.X))
		for k := range s.X {
			if math.IsNaN(s.Y[k]) {
				continue
			}
			if lp.XMax > lp.XMin && (s.X[k] < lp.XMin || s.X[k] > lp.XMax) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[k], Y: s.Y[k]})
		}
		if len(pts) == 0 {
			continue
		}
		if lp.Steps {
			pts = steps(pts)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		if i >= len(palette) {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		p.Add(l)
		p.Legend.Add(s.Name, l)
	}
	p.Legend.Top = !lp.LegendBottom
	p.Legend.Left = lp.LegendLeft
	if lp.XMax > lp.XMin {
		p.X.Min, p.X.Max = lp.XMin, lp.XMax
	}
	if lp.YMax > lp.YMin {
		p.Y.Min, p.Y.Max = lp.YMin, lp.YMax
	}
	c := vgsvg.New(8*vg.Inch, 5*vg.Inch)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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
	Title    string
	Notes    []string
	Tables   []Table
	Figures  []Figure
	Footnote string
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

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}figure{margin:1.5em 0}</style></head>
<body><h1>{{.Title}}</h1>{{range .Tables}}{{if .Lead}}<p><strong>{{.Lead}}</strong></p>{{end}}{{end}}{{range .Notes}}<p>{{.}}</p>{{end}}
{{range .Tables}}<h2>{{.Title}}</h2>{{if .Lead}}<p><strong>{{.Lead}}</strong></p>{{end}}<table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}
{{range .Figures}}<figure>{{.Inline}}<figcaption>{{.Caption}}</figcaption></figure>{{end}}
<p><small>{{.Footnote}}</small></p></body></html>
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
	if err := pageTmpl.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
