package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// Embedded data sets a scenario may name instead of a file.
const (
	// NodesOpenBGPU and NodesOpenBAll are the embedded openb node lists
	// (trace.nodes).
	NodesOpenBGPU = "openb-gpu"
	NodesOpenBAll = "openb-all"
	// SWFNASAiPSC is the embedded NASA iPSC/860 log (hpc.swf).
	SWFNASAiPSC = "nasa-ipsc"
	// PhillyDay is the embedded Philly day (elastic.jobs).
	PhillyDay = "philly-day"
	// GavelMSR is the embedded Gavel trace (coloc.jobs).
	GavelMSR = "gavel-msr"
	// GavelSimulation is the embedded copy of Gavel's
	// simulation_throughputs.json (coloc.throughputs).
	GavelSimulation = "gavel-simulation"
)

// GavelClusterTraces are Gavel's embedded physical-cluster traces
// (coloc.jobs): "gavel-" and the name of the file in Gavel's
// scheduler/traces/physical_cluster.
var GavelClusterTraces = []string{"gavel-artifact_evaluation", "gavel-max_min_fairness", "gavel-minimize_makespan"}

// GavelEmbeddedJobs reports whether a coloc.jobs value names an embedded
// Gavel trace rather than a file.
func GavelEmbeddedJobs(name string) bool {
	return name == GavelMSR || slices.Contains(GavelClusterTraces, name)
}

// EmbeddedPods reports whether a trace.pods value names an embedded openb
// pod list ("default", "gpushare40", ...): a bare name (no directory, no
// extension). Anything else is a file path, so a local file never shadows
// an embedded trace silently.
func EmbeddedPods(name string) bool {
	return !strings.ContainsAny(name, `/\.`)
}

// Input is one input a run reads: a file, or a data set embedded in
// wattsched, and the scenario field or command-line flag that names it.
type Input struct {
	// Field is the scenario key ("trace.pods", "grid.price") or the flag
	// ("--philly") that names the input.
	Field string
	// Name is the value as written.
	Name string
	// Path is the file the run opens (a scenario's relative paths resolved
	// from the scenario file's directory); empty when Name is embedded
	// data.
	Path string
}

// Embedded reports whether the input is embedded data, not a file.
func (in Input) Embedded() bool { return in.Path == "" }

// Inputs lists every file and embedded data set the scenario names, in
// the order of the schema (fields left empty are left out). It is the one
// list of the scenario's fields that name files: a field that names one
// must be listed here (TestInputsListEveryFileField walks the schema).
// Inline sections (hardware, policy and system arguments) name no files.
func (s *Scenario) Inputs() []Input {
	var out []Input
	add := func(field, name string, embedded bool) {
		if name == "" {
			return
		}
		in := Input{Field: field, Name: name}
		if !embedded {
			in.Path = s.Path(name)
		}
		out = append(out, in)
	}
	add("trace.pods", s.Trace.Pods, EmbeddedPods(s.Trace.Pods))
	add("trace.nodes", s.Trace.Nodes, s.Trace.Nodes == NodesOpenBGPU || s.Trace.Nodes == NodesOpenBAll)
	add("catalog", s.Catalog, false)
	if h := s.HPC; h != nil {
		add("hpc.swf", h.SWF, h.SWF == SWFNASAiPSC)
	}
	if e := s.Elastic; e != nil {
		add("elastic.jobs", e.Jobs, e.Jobs == PhillyDay)
	}
	if c := s.Coloc; c != nil {
		add("coloc.jobs", c.Jobs, GavelEmbeddedJobs(c.Jobs))
		add("coloc.throughputs", c.Throughputs, c.Throughputs == GavelSimulation)
	}
	if c := s.Slotted; c != nil {
		add("slotted.models", c.Models, false)
		add("slotted.jobs.file", c.Jobs.File, false)
		add("slotted.inference.file", c.Inference.File, false)
	}
	if g := s.Grid; g != nil {
		add("grid.region", g.Region, true)
		add("grid.price", g.Price, false)
		add("grid.carbon", g.Carbon, false)
	}
	if m := s.Measured; m != nil {
		add("measured.file", m.File, false)
	}
	for i, v := range s.Variants {
		p := fmt.Sprintf("variants[%d].", i)
		add(p+"catalog", v.Catalog, false)
		if g := v.Grid; g != nil {
			add(p+"grid.region", g.Region, true)
			add(p+"grid.price", g.Price, false)
			add(p+"grid.carbon", g.Carbon, false)
		}
	}
	return out
}
