package experiment

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/report"
)

// The skeleton every study's results share: the title and footnote carry
// the name and version, summary.json is the summary's JSON, and notes,
// stand-ins and the grid line land in the order they are added: a
// scenario's description first and its stand-ins last, the stand-ins
// printed before the tables and the grid line after them.
func TestResultsSkeleton(t *testing.T) {
	res, err := NewResults("x-study", "v1.2", struct {
		A int `json:"a"`
	}{7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Title != "wattsched: x-study" || res.Footnote != "wattsched v1.2" {
		t.Errorf("title %q, footnote %q", res.Title, res.Footnote)
	}
	if got := string(res.Files["summary.json"]); !strings.Contains(got, `"a": 7`) {
		t.Errorf("summary.json %q lacks the summary", got)
	}
	res.AddNotes("a scenario")
	res.AddGrid("ERCOT 2023")
	res.AddStandIns([]string{"s1", "s2"})
	if diff := cmp.Diff([]string{"a scenario", "Cost and carbon: ERCOT 2023", "s1", "s2"}, res.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"stand-in: s1", "stand-in: s2", ""}, res.Head); diff != "" {
		t.Errorf("head (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cost and carbon: ERCOT 2023", ""}, res.Tail); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}
	// No stand-ins still prints the blank line that separates the head.
	none := &Results{}
	none.AddStandIns(nil)
	if diff := cmp.Diff([]string{""}, none.Head); diff != "" {
		t.Errorf("head without stand-ins (-want +got):\n%s", diff)
	}
	if _, err := NewResults("x", "v", func() {}); err == nil {
		t.Error("a summary that is not JSON gave no error")
	}
}

type failingPlot struct{}

func (failingPlot) SVG() ([]byte, error) { return nil, errors.New("no data") }

// Draw keeps the plots' order, files and captions, and names the file of a
// plot it cannot draw.
func TestDraw(t *testing.T) {
	lp := report.LinePlot{Title: "t", XLabel: "x", YLabel: "y", Series: []report.Series{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}}}
	figs, err := Draw(Plot{File: "one.svg", Caption: "first", Plot: lp}, Plot{File: "two.svg", Caption: "second", Plot: lp})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].File != "one.svg" || figs[1].Caption != "second" || !strings.Contains(string(figs[0].SVG), "<svg") {
		t.Errorf("figures %+v", figs)
	}
	_, err = Draw(Plot{File: "one.svg", Plot: lp}, Plot{File: "bad.svg", Plot: failingPlot{}})
	if err == nil || err.Error() != "plot bad.svg: no data" {
		t.Errorf("error %v, want it to name bad.svg", err)
	}
}

func TestHeld(t *testing.T) {
	cr := []ClaimResult{{Holds: true}, {Holds: false}, {Holds: true}}
	if n := Held(cr); n != 2 {
		t.Errorf("Held = %d, want 2", n)
	}
	if got := ClaimsHold(cr); got != "2 of 3 claims hold" {
		t.Errorf("ClaimsHold = %q", got)
	}
}
