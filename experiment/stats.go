package experiment

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wattsched/wattsched/report"
)

// MeanCI is a mean over seeds with its two-sided 95% confidence interval
// (Student's t with n-1 degrees of freedom; NaN bounds for one seed).
type MeanCI struct {
	Mean Num `json:"mean"`
	Lo   Num `json:"ci95_lo"`
	Hi   Num `json:"ci95_hi"`
	N    int `json:"n"`
}

// CI95 summarises xs.
func CI95(xs []float64) MeanCI {
	m := MeanCI{Mean: Num(mean(xs)), Lo: Num(math.NaN()), Hi: Num(math.NaN()), N: len(xs)}
	if len(xs) < 2 {
		return m
	}
	sd := stat.StdDev(xs, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(0.975)
	h := t * sd / math.Sqrt(float64(len(xs)))
	m.Lo, m.Hi = m.Mean-Num(h), m.Mean+Num(h)
	return m
}

// Format writes the mean in format f, and the interval after it in
// brackets when there is one; "-" for a NaN mean.
func (m MeanCI) Format(f string) string {
	if math.IsNaN(float64(m.Mean)) {
		return "-"
	}
	s := fmt.Sprintf(f, float64(m.Mean))
	if !math.IsNaN(float64(m.Lo)) {
		s += fmt.Sprintf(" ["+f+", "+f+"]", float64(m.Lo), float64(m.Hi))
	}
	return s
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stat.Mean(xs, nil)
}

// Half95 is the half-width of the two-sided 95% confidence interval of a
// mean over n seeds with sample standard deviation sd (Student's t with
// n-1 degrees of freedom), as CI95 computes it; NaN for fewer than two.
func Half95(sd float64, n int) float64 {
	if n < 2 {
		return math.NaN()
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return t * sd / math.Sqrt(float64(n))
}

// TotalsPanel is one quantity of TotalsBars: per name, its per-seed values.
type TotalsPanel struct {
	Label, Format string
	PerSeed       [][]float64
}

// Totals gathers runs' values by name, names in the order they first
// come, for TotalsBars: Add appends one run's value to each panel.
type Totals struct {
	Names  []string
	Panels []TotalsPanel
	idx    map[string]int
}

// NewTotals starts gathering for the given panels (their labels and
// formats; PerSeed empty).
func NewTotals(panels ...TotalsPanel) *Totals {
	return &Totals{Panels: panels, idx: map[string]int{}}
}

// Add records one run of name: values[k] joins panel k.
func (t *Totals) Add(name string, values ...float64) {
	i, ok := t.idx[name]
	if !ok {
		i = len(t.Names)
		t.idx[name] = i
		t.Names = append(t.Names, name)
		for k := range t.Panels {
			t.Panels[k].PerSeed = append(t.Panels[k].PerSeed, nil)
		}
	}
	for k, v := range values {
		t.Panels[k].PerSeed[i] = append(t.Panels[k].PerSeed[i], v)
	}
}

// SVG is TotalsBars of what was gathered (nil when nothing was).
func (t *Totals) SVG(title string) ([]byte, error) {
	if len(t.Names) == 0 {
		return nil, nil
	}
	return TotalsBars(title, t.Names, t.Panels)
}

// TotalsBars draws a bar per name and panel: the mean of its per-seed
// values, with the 95% interval of that mean (Student's t, as CI95) as
// whiskers (none with one seed).
func TotalsBars(title string, names []string, panels []TotalsPanel) ([]byte, error) {
	bp := report.BarPlot{Title: title, Names: names}
	for _, p := range panels {
		bp.Panels = append(bp.Panels, report.BarPanel{Label: p.Label, Format: p.Format})
		for _, xs := range p.PerSeed {
			c := CI95(xs)
			bp.Panels[len(bp.Panels)-1].Bars = append(bp.Panels[len(bp.Panels)-1].Bars, report.Bar{Value: float64(c.Mean), Lo: float64(c.Lo), Hi: float64(c.Hi)})
		}
	}
	return bp.SVG()
}
