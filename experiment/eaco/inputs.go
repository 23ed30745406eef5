package eaco

import (
	"bytes"
	"fmt"

	"strings"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/gavel"
	"github.com/wattsched/wattsched/userfile"
)

// ScenarioInputs are a coloc scenario's throughput table and job list,
// read and checked against each other before any run.
type ScenarioInputs struct {
	Env  *Env
	Pool []gavel.Job
	// Source describes the job list in outputs; Name is the name its
	// errors use (the file's path, or the embedded trace's name).
	Source, Name string
}

// LoadScenarioInputs reads the coloc section's throughput table
// (coloc.throughputs, worker type coloc.worker) and job list (coloc.jobs,
// either Gavel layout), builds the models on that table and checks that
// every job's type and GPU count has a throughput there: a bad file is one
// error naming the file and its line or JSON path and field.
func LoadScenarioInputs(cat *hw.Catalog, s *scenario.Scenario) (*ScenarioInputs, error) {
	c := s.Coloc
	tp, err := loadTable(s)
	if err != nil {
		return nil, err
	}
	e, err := NewEnvFrom(cat, tp)
	if err != nil {
		return nil, err
	}
	if c.GavelRounds() {
		e.SpanGPUs = c.Nodes * 8
	}
	in := &ScenarioInputs{Env: e, Pool: e.Pool, Source: gavel.EmbeddedTrace + " (jobs over 100 h alone dropped)", Name: gavel.EmbeddedTrace}
	switch {
	case c.Jobs == scenario.GavelMSR:
		// The pool leaves out jobs the table cannot run: check them all.
		msr, err := gavel.MSR()
		if err == nil {
			err = e.CheckPool(gavel.EmbeddedTrace, msr)
		}
		if err != nil {
			return nil, err
		}
	case scenario.GavelEmbeddedJobs(c.Jobs):
		in.Pool, err = gavel.ClusterTrace(strings.TrimPrefix(c.Jobs, "gavel-"))
		if err != nil {
			return nil, fmt.Errorf("coloc.jobs: %w", err)
		}
		in.Source, in.Name = c.Jobs, "gavel:"+strings.TrimPrefix(c.Jobs, "gavel-")+".trace"
	default:
		path := s.Path(c.Jobs)
		f, err := userfile.Open(path, userfile.Table)
		if err != nil {
			return nil, fmt.Errorf("coloc.jobs: %w", err)
		}
		in.Pool, err = gavel.ReadTrace(path, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		in.Source, in.Name = c.Jobs, path
	}
	if err := e.CheckPool(in.Name, in.Pool); err != nil {
		return nil, err
	}
	return in, nil
}

// loadTable reads the scenario's throughput table for its worker type.
func loadTable(s *scenario.Scenario) (*gavel.Throughputs, error) {
	c := s.Coloc
	switch c.Throughputs {
	case "":
		return gavel.V100()
	case scenario.GavelSimulation:
		return gavel.Simulation(c.WorkerType())
	}
	path := s.Path(c.Throughputs)
	b, err := userfile.ReadFile(path, userfile.Document)
	if err != nil {
		return nil, fmt.Errorf("coloc.throughputs: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s: $: empty file, want a Gavel throughput table", path)
	}
	return gavel.ReadThroughputs(path, b, c.WorkerType())
}
