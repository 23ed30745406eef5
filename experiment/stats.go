package experiment

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/wattsched/wattsched/report"
)

// MeanCI is a mean over seeds with its two-sided 95% confidence interval
// (NaN bounds for one seed): PositiveCI95 for quantities that cannot be
// negative (energy, cost, carbon, waits, completion times, counts),
// RatioCI95 for a paired relative difference, CI95 (Student's t on the
// values themselves) for a quantity of either sign.
type MeanCI struct {
	Mean Num `json:"mean"`
	Lo   Num `json:"ci95_lo"`
	Hi   Num `json:"ci95_hi"`
	N    int `json:"n"`
}

// CI95 summarises xs with Student's t interval on the values themselves,
// mean ± t(0.975, n-1) sd/sqrt(n): for a quantity that may take either
// sign. It can cross zero, so a quantity that cannot be negative takes
// PositiveCI95.
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

// PositiveCI95 summarises xs, values of a quantity that cannot be
// negative, with the interval of their mean on the log scale: Student's t
// half-width on log(mean), whose standard error is (sd/sqrt(n))/mean (the
// delta method), so mean x exp(±t(0.975, n-1) sd/(mean sqrt(n))). It
// never reaches zero, always holds the mean, is close to CI95's where the
// spread is small beside the mean and stretches upwards where it is not
// (Positive95). A mean of zero (every value zero) gives [0, 0]; a negative
// value falls back to CI95.
func PositiveCI95(xs []float64) MeanCI {
	if slices.ContainsFunc(xs, func(x float64) bool { return x < 0 }) {
		return CI95(xs)
	}
	m := MeanCI{Mean: Num(mean(xs)), Lo: Num(math.NaN()), Hi: Num(math.NaN()), N: len(xs)}
	if len(xs) < 2 {
		return m
	}
	lo, hi := Positive95(float64(m.Mean), stat.StdDev(xs, nil), len(xs))
	m.Lo, m.Hi = Num(lo), Num(hi)
	return m
}

// Positive95 is PositiveCI95's interval from the mean m >= 0 of n seeds
// and their sample standard deviation sd: m x exp(∓Half95(sd, n)/m);
// [0, 0] for m = 0, NaN bounds for fewer than two seeds.
func Positive95(m, sd float64, n int) (lo, hi float64) {
	h := Half95(sd, n)
	switch {
	case math.IsNaN(h) || math.IsNaN(m):
		return math.NaN(), math.NaN()
	case m <= 0:
		return 0, 0
	}
	r := math.Exp(h / m)
	return m / r, m * r
}

// RatioCI95 summarises paired seeds as a relative difference: per seed
// the ratio xs[i]/base[i], the interval taken on the log of the ratios
// (Student's t over the seeds) and turned back into a relative difference,
// exp(mean log ratio ± t(0.975, n-1) sd/sqrt(n)) - 1; the mean is the
// geometric mean ratio minus 1. It can never pass -100%. NaN (mean and
// bounds) when a ratio is not positive (a zero or negative value).
func RatioCI95(xs, base []float64) MeanCI {
	n := min(len(xs), len(base))
	m := MeanCI{Mean: Num(math.NaN()), Lo: Num(math.NaN()), Hi: Num(math.NaN()), N: n}
	if n == 0 {
		return m
	}
	logs := make([]float64, n)
	for i := range n {
		r := xs[i] / base[i]
		if !(r > 0) || math.IsInf(r, 0) {
			return m
		}
		logs[i] = math.Log(r)
	}
	lm := stat.Mean(logs, nil)
	m.Mean = Num(math.Exp(lm) - 1)
	if n < 2 {
		return m
	}
	h := Half95(stat.StdDev(logs, nil), n)
	m.Lo, m.Hi = Num(math.Exp(lm-h)-1), Num(math.Exp(lm+h)-1)
	return m
}

// FewSeeds is the seed count below which results say their intervals are
// wide (FewSeedsNote).
const FewSeeds = 5

// FewSeedsNote says why intervals over n seeds are wide ("" for FewSeeds
// or more, and for one seed, which has none).
func FewSeedsNote(n int) string {
	if n < 2 || n >= FewSeeds {
		return ""
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	return fmt.Sprintf("%d seeds: the 95%% intervals are wide. With n seeds the interval spans t(0.975, n-1) standard errors each side, %.2f for %d seeds against 1.96 for many (%.1fx as wide), and the spread of so few values is itself a rough estimate; %d or more seeds narrow it (--seeds)",
		n, t, n, t/1.96, FewSeeds)
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
// Positive95 turns it into an interval that cannot reach zero.
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
// values (quantities that cannot be negative), with the 95% interval of
// that mean on the log scale (PositiveCI95) as whiskers (none with one
// seed).
func TotalsBars(title string, names []string, panels []TotalsPanel) ([]byte, error) {
	bp := report.BarPlot{Title: title, Names: names}
	for _, p := range panels {
		bp.Panels = append(bp.Panels, report.BarPanel{Label: p.Label, Format: p.Format})
		for _, xs := range p.PerSeed {
			c := PositiveCI95(xs)
			bp.Panels[len(bp.Panels)-1].Bars = append(bp.Panels[len(bp.Panels)-1].Bars, report.Bar{Value: float64(c.Mean), Lo: float64(c.Lo), Hi: float64(c.Hi)})
		}
	}
	return bp.SVG()
}
