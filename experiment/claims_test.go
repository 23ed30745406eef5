package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/report"
)

// TestClaimsHoldLeadsTableAndReport: every reproduction's claims table is
// led by "N of M claims hold", which report.html shows before its notes.
func TestClaimsHoldLeadsTableAndReport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		holds []bool
		want  string
	}{
		{"none", nil, "0 of 0 claims hold"},
		{"all", []bool{true, true}, "2 of 2 claims hold"},
		// yes, NO, yes: two of three.
		{"some", []bool{true, false, true}, "2 of 3 claims hold"},
		{"no claim holds", []bool{false}, "0 of 1 claims hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cr []ClaimResult
			for _, h := range tc.holds {
				cr = append(cr, ClaimResult{What: "x", Holds: h})
			}
			if got := ClaimsHold(cr); got != tc.want {
				t.Fatalf("ClaimsHold = %q, want %q", got, tc.want)
			}
			tab := ClaimsTable(cr)
			if tab.Lead != tc.want {
				t.Fatalf("ClaimsTable.Lead = %q, want %q", tab.Lead, tc.want)
			}
			dir := t.TempDir()
			r := &Results{Title: "t", Notes: []string{"a note"}, Tables: []report.Table{tab}}
			if err := r.Write(dir); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			html := string(b)
			lead, note := strings.Index(html, tc.want), strings.Index(html, "a note")
			if lead < 0 || note < 0 || lead > note {
				t.Fatalf("report.html: %q at %d, the first note at %d; want the count before the notes", tc.want, lead, note)
			}
		})
	}
}
