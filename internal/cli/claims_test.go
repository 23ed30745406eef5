package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
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
// made to fail is a failure of this test. The claims come from: PWR's
// claims of every openb trace; PowerFlow's and VAHRM's constructors on an
// empty reproduction; and the claims of the quick reproductions of
// PowerFlow, EaCO and CE-DLA as their golden summary.json records them
// (TestGolden keeps those equal to what the code prints).
func TestEveryClaimCanFail(t *testing.T) {
	var all []experiment.ClaimResult
	for _, tr := range alibaba2023.Traces() {
		all = append(all, experiment.Evaluate(pwr.Claims(tr), nil)...)
	}
	all = append(all, powerflow.Claims(&powerflow.Reproduction{})...)
	all = append(all, vahrm.Claims(&vahrm.Reproduction{})...)
	for _, c := range []string{"powerflow-quick", "eaco-quick", "cedla-quick"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", c, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Claims []experiment.ClaimResult `json:"paper_claims"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if len(s.Claims) == 0 {
			t.Errorf("%s: no claims in summary.json", c)
		}
		all = append(all, s.Claims...)
	}
	if len(all) < 50 {
		t.Fatalf("%d claims enumerated, want every reproduction's", len(all))
	}
	for _, c := range all {
		if err := experiment.Falsify(c); err != nil {
			t.Error(err)
		}
	}
}
