package experiment

import (
	"fmt"

	"github.com/wattsched/wattsched/report"
)

// NewResults starts the results that every study and scenario run writes:
// report.html titled "wattsched: "+title with the footnote "wattsched
// "+version, and summary.json, summary as indented JSON (report.JSON). The
// caller adds its notes, stand-ins, tables, figures, files and listing.
func NewResults(title, version string, summary any) (*Results, error) {
	js, err := report.JSON(summary)
	if err != nil {
		return nil, err
	}
	return &Results{Title: "wattsched: " + title, Footnote: "wattsched " + version, Files: map[string][]byte{"summary.json": js}}, nil
}

// AddNotes appends notes to report.html's, after those already there.
func (r *Results) AddNotes(notes ...string) {
	r.Notes = append(r.Notes, notes...)
}

// AddModelBand says how far the power model that priced the energy
// figures could be off (docs/power-models.md): a note in report.html and
// the line "power model: band" and a blank line printed after the tables.
func (r *Results) AddModelBand(band string) {
	r.Notes = append(r.Notes, "Power model: "+band)
	r.Tail = append(r.Tail, "power model: "+band, "")
}

// AddStandIns names what stands in for data that is not public: printed
// first, a "stand-in:" line each and a blank line (StandInLines), and
// listed in report.html's notes after those already there.
func (r *Results) AddStandIns(standIns []string) {
	r.Head = append(r.Head, StandInLines(standIns)...)
	r.Notes = append(r.Notes, standIns...)
}

// AddGrid says where the cost and carbon figures come from: the note
// "Cost and carbon: where" in report.html, and the line "cost and carbon:
// where" and a blank line printed after the tables.
func (r *Results) AddGrid(where string) {
	r.Notes = append(r.Notes, "Cost and carbon: "+where)
	r.Tail = append(r.Tail, "cost and carbon: "+where, "")
}

// Plot is a figure to draw: a report.LinePlot or report.BarPlot, written
// as File and shown in report.html with Caption.
type Plot struct {
	File, Caption string
	Plot          interface{ SVG() ([]byte, error) }
}

// Draw draws plots into figures, in their order; an error names the
// plot's file.
func Draw(plots ...Plot) ([]Figure, error) {
	var figs []Figure
	for _, p := range plots {
		b, err := p.Plot.SVG()
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", p.File, err)
		}
		figs = append(figs, Figure{File: p.File, Caption: p.Caption, SVG: b})
	}
	return figs, nil
}

// One is a study's or scenario's single result directory: res, or err
// when rendering it failed (a Study's Run returns it as it is).
func One(res *Results, err error) ([]*Results, error) {
	if err != nil {
		return nil, err
	}
	return []*Results{res}, nil
}
