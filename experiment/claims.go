package experiment

import (
	"fmt"
	"math"
	"strconv"

	"github.com/wattsched/wattsched/report"
)

// Claim is one quantitative statement of a paper, checked on a study's
// results R.
type Claim[R any] struct {
	What    string // the paper's statement
	Where   string // section and figure
	Paper   string // the paper's figure
	Measure func(r R) (value float64, holds bool)
	Format  func(v float64) string
}

// ClaimResult is a claim with the measured value.
type ClaimResult struct {
	What     string `json:"claim"`
	Where    string `json:"where"`
	Paper    string `json:"paper"`
	Measured string `json:"measured"`
	Holds    bool   `json:"holds"`
	Value    Num    `json:"value"`
}

// Evaluate measures each claim on r.
func Evaluate[R any](cl []Claim[R], r R) []ClaimResult {
	out := make([]ClaimResult, 0, len(cl))
	for _, c := range cl {
		v, ok := c.Measure(r)
		out = append(out, ClaimResult{What: c.What, Where: c.Where, Paper: c.Paper, Measured: c.Format(v), Holds: ok, Value: Num(v)})
	}
	return out
}

// Held is the number of claims that hold.
func Held(cr []ClaimResult) int {
	n := 0
	for _, c := range cr {
		if c.Holds {
			n++
		}
	}
	return n
}

// ClaimsHold is the line every reproduction prints at the top of its
// claims table and of its report: "N of M claims hold".
func ClaimsHold(cr []ClaimResult) string {
	return fmt.Sprintf("%d of %d claims hold", Held(cr), len(cr))
}

// ClaimsTable renders claim results, led by ClaimsHold (printed under the
// title and at the top of the report, see report.Table.Lead).
func ClaimsTable(cr []ClaimResult) report.Table {
	t := report.Table{Title: "Paper claims vs measured", Lead: ClaimsHold(cr), Head: []string{"claim", "where", "paper", "measured", "holds"}}
	for _, c := range cr {
		h := "yes"
		if !c.Holds {
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
