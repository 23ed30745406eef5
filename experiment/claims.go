package experiment

import (
	"fmt"
	"math"
	"strconv"

	"github.com/wattsched/wattsched/report"
)

// Kind is how a claim's measured value is compared with the paper's figure.
type Kind string

// The kinds of check. Every check is strict where it is an ordering: a tie
// never holds "X above Y" or "X below Y".
const (
	// Within holds for Lo <= v <= Hi: the paper's figure with a stated
	// tolerance (or a range the paper gives).
	Within Kind = "within"
	// Above holds for v > Lo: a floor, or an ordering "X beats Y" measured
	// as a difference with Lo = 0.
	Above Kind = "above"
	// Below holds for v < Hi: a ceiling, or an ordering measured as a
	// difference with Hi = 0.
	Below Kind = "below"
)

// Check is a claim's test as data: the comparison and its bounds. One
// function (Holds) decides every claim of every reproduction, so that a
// test can feed any check figures just outside its bounds and see it fail
// (Falsify).
type Check struct {
	Kind Kind `json:"kind"`
	Lo   Num  `json:"lo"`
	Hi   Num  `json:"hi"`
}

// Band is the check "want within +-tol".
func Band(want, tol float64) Check { return Between(want-tol, want+tol) }

// Between is the check lo <= v <= hi.
func Between(lo, hi float64) Check { return Check{Kind: Within, Lo: Num(lo), Hi: Num(hi)} }

// Over is the check v > lo (an ordering when lo is 0).
func Over(lo float64) Check { return Check{Kind: Above, Lo: Num(lo), Hi: Num(math.Inf(1))} }

// Under is the check v < hi (an ordering when hi is 0).
func Under(hi float64) Check { return Check{Kind: Below, Lo: Num(math.Inf(-1)), Hi: Num(hi)} }

// Holds says whether v passes the check; NaN never does.
func (c Check) Holds(v float64) bool {
	lo, hi := float64(c.Lo), float64(c.Hi)
	switch c.Kind {
	case Within:
		return v >= lo && v <= hi
	case Above:
		return v > lo
	case Below:
		return v < hi
	}
	return false
}

// Margin is how far inside the check v lies (negative: how far it misses).
func (c Check) Margin(v float64) float64 {
	lo, hi := float64(c.Lo), float64(c.Hi)
	switch c.Kind {
	case Within:
		return math.Min(v-lo, hi-v)
	case Above:
		return v - lo
	case Below:
		return hi - v
	}
	return math.NaN()
}

// Valid says why a check could never fail (or never hold): an unknown
// kind, an infinite or NaN bound it tests, or an empty band.
func (c Check) Valid() error {
	lo, hi := float64(c.Lo), float64(c.Hi)
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch c.Kind {
	case Within:
		if !finite(lo) || !finite(hi) || lo > hi {
			return fmt.Errorf("check within [%v, %v]: want finite bounds, lo <= hi", lo, hi)
		}
	case Above:
		if !finite(lo) {
			return fmt.Errorf("check above %v: want a finite bound", lo)
		}
	case Below:
		if !finite(hi) {
			return fmt.Errorf("check below %v: want a finite bound", hi)
		}
	default:
		return fmt.Errorf("check of unknown kind %q", c.Kind)
	}
	return nil
}

// Outside are figures just outside the check, each of which must fail it:
// a step past each bound it tests, the bound itself for a strict one (a
// tie), and NaN (no figure).
func (c Check) Outside() []float64 {
	step := func(x float64) float64 { return 1e-9 * math.Max(1, math.Abs(x)) }
	lo, hi := float64(c.Lo), float64(c.Hi)
	out := []float64{math.NaN()}
	switch c.Kind {
	case Within:
		out = append(out, lo-step(lo), hi+step(hi))
	case Above:
		out = append(out, lo, lo-step(lo))
	case Below:
		out = append(out, hi, hi+step(hi))
	}
	return out
}

// Describe writes the check as the claims table shows it beside the
// paper's figure, with f formatting the bounds.
func (c Check) Describe(f func(float64) string) string {
	switch c.Kind {
	case Within:
		return f(float64(c.Lo)) + " to " + f(float64(c.Hi))
	case Above:
		return "> " + f(float64(c.Lo))
	case Below:
		return "< " + f(float64(c.Hi))
	}
	return string(c.Kind)
}

// Claim is one quantitative statement of a paper, checked on a study's
// results R: Measure gives the figure, Check decides it.
type Claim[R any] struct {
	What    string // the paper's statement
	Where   string // section and figure
	Paper   string // the paper's figure
	Check   Check
	Measure func(r R) float64
	Format  func(v float64) string
}

// ClaimResult is a claim with the measured value. A claim the run cannot
// test carries the reason in NotTestable and counts neither as held nor in
// the total.
type ClaimResult struct {
	What        string `json:"claim"`
	Where       string `json:"where"`
	Paper       string `json:"paper"`
	Measured    string `json:"measured"`
	Holds       bool   `json:"holds"`
	Value       Num    `json:"value"`
	Check       *Check `json:"check,omitempty"`
	NotTestable string `json:"not_testable,omitempty"`
}

// Judge is a claim decided by its check on the measured value v: the one
// place a verdict is made.
func Judge(what, where, paper string, c Check, v float64, measured string) ClaimResult {
	return ClaimResult{What: what, Where: where, Paper: paper, Measured: measured, Holds: c.Holds(v), Value: Num(v), Check: &c}
}

// Untestable is a claim this run cannot test, with the reason; it is
// printed as "not testable here" and counted in neither N nor M.
func Untestable(what, where, paper, why string) ClaimResult {
	return ClaimResult{What: what, Where: where, Paper: paper, Measured: why, Value: Num(math.NaN()), NotTestable: why}
}

// Falsify checks that a claim result can fail: it is either not testable
// or carries a valid check that decided it, and every figure just outside
// the check (Check.Outside) is judged "no".
func Falsify(cr ClaimResult) error {
	if cr.NotTestable != "" {
		if cr.Holds {
			return fmt.Errorf("%q: not testable here, yet holds", cr.What)
		}
		return nil
	}
	if cr.Check == nil {
		return fmt.Errorf("%q: no check (its verdict is not made by experiment.Judge)", cr.What)
	}
	c := *cr.Check
	if err := c.Valid(); err != nil {
		return fmt.Errorf("%q: %w", cr.What, err)
	}
	if got := c.Holds(float64(cr.Value)); got != cr.Holds {
		return fmt.Errorf("%q: holds %v, but its check on its value %v says %v", cr.What, cr.Holds, float64(cr.Value), got)
	}
	for _, v := range c.Outside() {
		if j := Judge(cr.What, cr.Where, cr.Paper, c, v, ""); j.Holds {
			return fmt.Errorf("%q: holds on %v, just outside its check %+v", cr.What, v, c)
		}
	}
	return nil
}

// Evaluate measures each claim on r.
func Evaluate[R any](cl []Claim[R], r R) []ClaimResult {
	out := make([]ClaimResult, 0, len(cl))
	for _, c := range cl {
		v := c.Measure(r)
		out = append(out, Judge(c.What, c.Where, c.Paper, c.Check, v, c.Format(v)))
	}
	return out
}

// Held is the number of claims that hold.
func Held(cr []ClaimResult) int {
	n := 0
	for _, c := range cr {
		if c.Holds && c.NotTestable == "" {
			n++
		}
	}
	return n
}

// Testable is the number of claims the run could test.
func Testable(cr []ClaimResult) int {
	n := 0
	for _, c := range cr {
		if c.NotTestable == "" {
			n++
		}
	}
	return n
}

// ClaimsHold is the line every reproduction prints at the top of its
// claims table and of its report: "N of M claims hold", and how many the
// run could not test, if any.
func ClaimsHold(cr []ClaimResult) string {
	s := fmt.Sprintf("%d of %d claims hold", Held(cr), Testable(cr))
	if k := len(cr) - Testable(cr); k > 0 {
		s += fmt.Sprintf(" (%d more not testable here)", k)
	}
	return s
}

// ClaimsTable renders claim results, led by ClaimsHold (printed under the
// title and at the top of the report, see report.Table.Lead).
func ClaimsTable(cr []ClaimResult) report.Table {
	t := report.Table{Title: "Paper claims vs measured", Lead: ClaimsHold(cr), Head: []string{"claim", "where", "paper", "measured", "holds"}}
	for _, c := range cr {
		h := "yes"
		switch {
		case c.NotTestable != "":
			h = "not testable here"
		case !c.Holds:
			h = "NO"
		}
		t.Rows = append(t.Rows, []string{c.What, c.Where, c.Paper, c.Measured, h})
	}
	return t
}

// Num is a float64 that encodes NaN and infinities as JSON null.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler: null is NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("number %s: %w", b, err)
	}
	*n = Num(f)
	return nil
}

// Pct formats a fraction as a percentage with one decimal.
func Pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// PctOrDash is Pct, or "-" for NaN.
func PctOrDash(n Num) string {
	if math.IsNaN(float64(n)) {
		return "-"
	}
	return Pct(float64(n))
}

// NumOrDash formats n with f, or "-" for NaN.
func NumOrDash(n Num, f string) string {
	if math.IsNaN(float64(n)) {
		return "-"
	}
	return fmt.Sprintf(f, float64(n))
}

// MeanStd is the mean and the sample standard deviation.
func MeanStd(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	if len(xs) > 1 {
		v /= float64(len(xs) - 1)
	}
	return m, math.Sqrt(v)
}
