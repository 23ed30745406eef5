package experiment

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Each kind of check holds inside its bounds and fails just outside, on
// NaN, and (strict kinds) on its bound: an ordering measured as a
// difference fails on a tie.
func TestCheckHolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Check
		in   []float64
		out  []float64
	}{
		// 4.5 +- 1.5: 3.0 and 6.0 hold, 2.99 and 6.01 do not.
		{"band", Band(4.5, 1.5), []float64{3.0, 4.5, 6.0}, []float64{2.99, 6.01, math.NaN(), math.Inf(1)}},
		{"above", Over(0), []float64{1e-12, 5}, []float64{0, -1e-12, math.NaN()}},
		{"below", Under(0.05), []float64{0.0499, -1}, []float64{0.05, 0.0501, math.NaN()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range tc.in {
				if !tc.c.Holds(v) || tc.c.Margin(v) < 0 {
					t.Errorf("%v: holds %v, margin %v; want it to hold", v, tc.c.Holds(v), tc.c.Margin(v))
				}
			}
			for _, v := range append(tc.out, tc.c.Outside()...) {
				if tc.c.Holds(v) {
					t.Errorf("%v holds", v)
				}
			}
		})
	}
}

// Falsify rejects every claim that cannot be made to fail: one without a
// check, one whose verdict its check did not give, one whose check has an
// infinite bound, a strict ordering written as "at least".
func TestFalsifyRejectsUnfalsifiableClaims(t *testing.T) {
	ok := Judge("ok", "", "", Over(0), 1, "")
	if err := Falsify(ok); err != nil {
		t.Fatalf("a sound claim: %v", err)
	}
	if err := Falsify(Untestable("u", "", "", "why")); err != nil {
		t.Fatalf("a not testable claim: %v", err)
	}
	inf := Over(math.Inf(-1))
	loose := Over(-1) // "X - Y > -1" is not "X beats Y", but it can fail: Falsify cannot see intent
	for _, tc := range []struct {
		name string
		cr   ClaimResult
		want string
	}{
		{"no check", ClaimResult{What: "x", Holds: true, Value: 1}, "no check"},
		{"verdict not the check's", ClaimResult{What: "x", Holds: true, Value: -1, Check: &loose}, "its check"},
		{"infinite bound", Judge("x", "", "", inf, 1, ""), "finite"},
		{"empty band", Judge("x", "", "", Between(2, 1), 1, ""), "lo <= hi"},
		{"unknown kind", Judge("x", "", "", Check{Kind: "at least", Lo: 0}, 1, ""), "unknown kind"},
		{"not testable yet holding", ClaimResult{What: "x", Holds: true, NotTestable: "why"}, "yet holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Falsify(tc.cr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Falsify = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// Not testable claims are listed but counted in neither N nor M.
func TestNotTestableNotCounted(t *testing.T) {
	cr := []ClaimResult{Judge("a", "", "", Over(0), 1, ""), Judge("b", "", "", Over(0), 0, ""), Untestable("c", "", "", "why")}
	if got := ClaimsHold(cr); got != "1 of 2 claims hold (1 more not testable here)" {
		t.Fatalf("ClaimsHold = %q", got)
	}
	if row := ClaimsTable(cr).Rows[2]; row[4] != "not testable here" || row[3] != "why" {
		t.Fatalf("row %q", row)
	}
}

// A claim round-trips through summary.json, NaN and infinities included,
// and is judged the same after.
func TestClaimJSONRoundTrip(t *testing.T) {
	for _, cr := range []ClaimResult{Judge("a", "", "", Under(2), math.NaN(), ""), Judge("b", "", "", Over(0.5), 0.7, ""), Judge("c", "", "", Band(1, 0.1), 1.05, "")} {
		b, err := json.Marshal(cr)
		if err != nil {
			t.Fatal(err)
		}
		var got ClaimResult
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if err := Falsify(got); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
}
