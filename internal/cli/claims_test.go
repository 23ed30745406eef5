package cli

import (
	"encoding/json"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/powerflow"
	"github.com/wattsched/wattsched/experiment/pwr"
	"github.com/wattsched/wattsched/experiment/vahrm"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// TestEveryClaimCanFail enumerates every claim of every reproduction and
// requires each to be decided by its check (experiment.Judge) and to say
// "no" on figures just outside its tolerance, on a tie where it is an
// ordering, and on no figure (experiment.Falsify). A check that cannot be
// made to fail is a failure. Here: PWR's claims of every openb trace and
// PowerFlow's and VAHRM's constructors on an empty reproduction; TestGolden
// does the same (claimsCanFail) on the claims every golden run writes to
// summary.json: the quick reproductions of PowerFlow, VAHRM, EaCO and
// CE-DLA.
func TestEveryClaimCanFail(t *testing.T) {
	var all []experiment.ClaimResult
	for _, tr := range alibaba2023.Traces() {
		all = append(all, experiment.Evaluate(pwr.Claims(tr), nil)...)
	}
	all = append(all, powerflow.Claims(&powerflow.Reproduction{})...)
	all = append(all, vahrm.Claims(&vahrm.Reproduction{})...)
	if len(all) < 40 {
		t.Fatalf("%d claims enumerated, want every constructor's", len(all))
	}
	for _, c := range all {
		if err := experiment.Falsify(c); err != nil {
			t.Error(err)
		}
	}
}

// claimsCanFail checks every claim a run wrote to summary.json (its
// "paper_claims", if any) with experiment.Falsify.
func claimsCanFail(t *testing.T, summary []byte) {
	t.Helper()
	for _, err := range claimErrors(summary) {
		t.Error(err)
	}
}

func claimErrors(summary []byte) []error {
	if len(summary) == 0 {
		return nil // no summary.json
	}
	var s struct {
		Claims []experiment.ClaimResult `json:"paper_claims"`
	}
	if err := json.Unmarshal(summary, &s); err != nil {
		return []error{err}
	}
	var errs []error
	for _, c := range s.Claims {
		if err := experiment.Falsify(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// A summary.json claim whose verdict no check made, or whose check cannot
// fail, is caught; one judged by a sound check is not.
func TestClaimErrorsFromSummary(t *testing.T) {
	for _, tc := range []struct {
		json string
		errs int
	}{
		{`{"paper_claims":[{"claim":"hard-coded","holds":true,"value":1}]}`, 1},
		{`{"paper_claims":[{"claim":"no bound","holds":true,"value":1,"check":{"kind":"above","lo":null,"hi":null}}]}`, 1},
		{`{"paper_claims":[{"claim":"sound","holds":true,"value":1,"check":{"kind":"above","lo":0,"hi":null}}]}`, 0},
		{`{"paper_claims":[{"claim":"nothing measured","holds":false,"value":null,"check":{"kind":"below","lo":null,"hi":2}}]}`, 0},
		{`{"runs":[]}`, 0},
	} {
		if got := claimErrors([]byte(tc.json)); len(got) != tc.errs {
			t.Errorf("%s: %v, want %d error(s)", tc.json, got, tc.errs)
		}
	}
}
