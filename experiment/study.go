// Package experiment is the shared kit of wattsched's experiments: claims
// checked against a paper's figures, the results builder (files, plots and
// report.html of one run), the worker pool, shards, memory estimates, and
// the Study interface every paper's reproduction implements; its result
// directories are package experiment/outdir. Each job model's runner and
// each paper's study lives in its own package (experiment/tasks,
// experiment/pwr, experiment/vahrm, experiment/powerflow, experiment/eaco,
// experiment/cedla) and the CLI runs any of them the same way.
package experiment

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
)

// Env is what a study or a scenario run gets from its caller.
type Env struct {
	// Version is written into every result.
	Version    string
	Registries *policy.Registries
	Catalog    *hw.Catalog
	// BaseCatalog is Catalog before the scenario's catalog file and
	// hardware section were added (the embedded models and --catalog's):
	// a compare variant's catalog and hardware are added to it (nil:
	// Catalog).
	BaseCatalog *hw.Catalog
	// Workers bounds parallel runs (GOMAXPROCS when <= 0).
	Workers int
	// Progress, if set, is called after each finished run.
	Progress func(done, total int, what string)
	// Note, if set, receives one-line notes about what is about to run.
	Note func(format string, args ...any)
	// RunProgress, if set, is told how far one long run has got (done of
	// total, in the run's own units, which unit names: "jobs ended",
	// "slots"), so that a run of minutes shows a sign of life between
	// finished runs.
	RunProgress func(what string, done, total int, unit string)
	// SolverLog, if set, receives the MILP solver's log of every solve
	// (CE-DLA in slotted scenarios); it must serialise concurrent Writes.
	SolverLog io.Writer
	// Shards, if set, splits the runs over processes or merges them
	// (ShardedRun).
	Shards *Shards
	// Strict makes a warning of the checks before a run an error (pods
	// that can never start: --strict).
	Strict bool
	// MaxMemory, if > 0, is the memory in bytes a run may be estimated to
	// need (--max-memory): runners estimate it from their inputs before
	// any work (EstimateJobs, EstimateStudy, package tasks' estimates) and
	// refuse a run above it, naming the input that drives the estimate.
	MaxMemory int64
	// ExplainDecisions, if > 0, makes every run of a mode in
	// tasks.ExplainModes keep the explanations of its first
	// ExplainDecisions placements (--explain; tasks.ExplainPerRun) for
	// explain.csv.
	ExplainDecisions int
}

// Notef calls Note when it is set.
func (e *Env) Notef(format string, args ...any) {
	if e.Note != nil {
		e.Note(format, args...)
	}
}

// NoteLines notes each line as it is (a study's skipped runs, say).
func (e *Env) NoteLines(lines []string) {
	for _, l := range lines {
		e.Notef("%s", l)
	}
}

// Study is one paper's reproduction: `wattsched reproduce <Name>`.
type Study interface {
	// Name is the study's command name (pwr, vahrm, powerflow, ...).
	Name() string
	// Synopsis is the study's flags and a one-line description, for help.
	Synopsis() string
	// Flags registers the study's options on fs.
	Flags(fs *flag.FlagSet)
	// Check validates the options before any work.
	Check() error
	// Inputs lists the files the options name (after Flags and parsing),
	// which the run reads: a shard records their hashes and a merge
	// refuses shards that read different bytes. Every flag that names a
	// file must be listed (TestStudyInputsListEveryFileFlag).
	Inputs() []scenario.Input
	// Run runs the study; each Results is one results directory.
	Run(ctx context.Context, env *Env) ([]*Results, error)
}

// Results is one results directory and what the CLI prints about it.
type Results struct {
	// Dir is the subdirectory of the output directory ("": itself).
	Dir string
	// Head and Tail are printed before and after the tables; Listing
	// names the files in the closing "results in DIR (...)" line.
	Head, Tail []string
	Listing    string
	// Tables are printed and shown in report.html.
	Tables []report.Table
	// PageTables are shown in report.html only, after Tables.
	PageTables []report.Table
	// Title, Summary, Notes, Figures, Definitions and Footnote make up
	// report.html: Summary is its plain-language paragraph at the top,
	// Definitions (shown after the figures, not printed) says what each
	// figure means.
	Title       string
	Summary     string
	Notes       []string
	Figures     []Figure
	Definitions *report.Table
	Footnote    string
	// Files are the other files (summary.json, CSVs), by name.
	Files map[string][]byte
}

// StandInLines are the printed lines that name what stands in for data
// that is not public, and a blank line.
func StandInLines(standIns []string) []string {
	out := make([]string, 0, len(standIns)+1)
	for _, x := range standIns {
		out = append(out, "stand-in: "+x)
	}
	return append(out, "")
}

// Figure is a plot: written as File and shown in report.html.
type Figure struct {
	File, Caption string
	SVG           []byte
}

// Write writes the files, the figures and report.html into dir, which
// exists (outdir.DirClaim.Publish writes every result into a fresh
// directory).
func (r *Results) Write(dir string) error {
	if r.Dir != "" {
		dir = filepath.Join(dir, r.Dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	files := make(map[string][]byte, len(r.Files)+len(r.Figures)+1)
	for n, b := range r.Files {
		files[n] = b
	}
	page := report.Page{Title: r.Title, Summary: r.Summary, Notes: r.Notes, Tables: append(slices.Clip(r.Tables), r.PageTables...), Definitions: r.Definitions, Footnote: r.Footnote}
	for _, f := range r.Figures {
		files[f.File] = f.SVG
		page.Figures = append(page.Figures, report.Figure{Caption: f.Caption, SVG: f.SVG})
	}
	html, err := page.HTML()
	if err != nil {
		return err
	}
	files["report.html"] = html
	return report.WriteFiles(dir, files)
}

// FlagInputs are the files named by flags (name, value pairs), leaving out
// flags that are not set: what a study's Inputs returns.
func FlagInputs(flagValues ...string) []scenario.Input {
	var out []scenario.Input
	for i := 0; i+1 < len(flagValues); i += 2 {
		if v := flagValues[i+1]; v != "" {
			out = append(out, scenario.Input{Field: "--" + flagValues[i], Name: v, Path: v})
		}
	}
	return out
}
