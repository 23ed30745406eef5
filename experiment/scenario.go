// Package experiment turns scenario files into runs: it builds the cluster
// and the task sequence, runs every policy over every seed in parallel, and
// reduces the results to the curves and tables the papers report.
package experiment

import (
	"bytes"
	"embed"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Compat modes.
const (
	// CompatNone uses wattsched's own sampling (math/rand/v2) and ties by node ID.
	CompatNone = ""
	// CompatFGDSim reproduces the public FGD simulator's task sequence and tie-breaking.
	CompatFGDSim = "fgd-sim"
)

// Scenario is one experiment.
type Scenario struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
	// Mode is "inflation" (FGD/PWR capacity curves) or "replay".
	Mode  string    `yaml:"mode" json:"mode"`
	Trace TraceSpec `yaml:"trace" json:"trace"`
	// Seeds runs seeds FirstSeed..FirstSeed+Seeds-1 (FirstSeed defaults to 42,
	// as in the FGD simulator's experiments).
	Seeds     int    `yaml:"seeds" json:"seeds"`
	FirstSeed uint64 `yaml:"first_seed" json:"first_seed"`
	// Target is the requested GPU capacity, as a multiple of the cluster's,
	// at which inflation stops.
	Target float64 `yaml:"target" json:"target"`
	// Compat is "" or "fgd-sim".
	Compat   string       `yaml:"compat" json:"compat,omitempty"`
	Policies []PolicySpec `yaml:"policies" json:"policies"`
	// HPC configures mode "hpc": an SWF job log replayed on the VAHRM
	// paper's 540-node CPU/GPU system under a power cap.
	HPC *HPCSpec `yaml:"hpc" json:"hpc,omitempty"`
}

// HPCSpec is the hpc section of a scenario (docs/scenarios.md).
type HPCSpec struct {
	// SWF is "nasa-ipsc" (the embedded log) or the path of an SWF file (.gz allowed).
	SWF string `yaml:"swf" json:"swf"`
	// Jobs takes the first N usable jobs (0: all).
	Jobs int `yaml:"jobs" json:"jobs"`
	// ProcsPerNode converts processors to nodes (default 1).
	ProcsPerNode int `yaml:"procs_per_node" json:"procs_per_node"`
	// SR divides submit times (default 1); PCR is the power cap as a share
	// of system TDP (default 1); Beta weighs energy against waiting in
	// VAHRM (default (1/4)^6); FirstRunRatio is the share of jobs without a
	// power profile (default 0).
	SR            float64  `yaml:"sr" json:"sr"`
	PCR           float64  `yaml:"pcr" json:"pcr"`
	Beta          *float64 `yaml:"beta" json:"beta"`
	FirstRunRatio float64  `yaml:"first_run_ratio" json:"first_run_ratio"`
	// Workloads are the paper's workload numbers 0-8 (default all).
	Workloads []int `yaml:"workloads" json:"workloads"`
	// Systems are the paper's systems (default all eight); results are
	// relative to the first.
	Systems []string `yaml:"systems" json:"systems"`
}

// TraceSpec names the cluster and the task population.
type TraceSpec struct {
	// Pods is an embedded openb pod list ("default", "gpushare40", ...) or a CSV path.
	Pods string `yaml:"pods" json:"pods"`
	// Nodes is "openb-gpu" (the papers' 1213 GPU nodes, default), "openb-all" or a CSV path.
	Nodes string `yaml:"nodes" json:"nodes"`
}

// PolicySpec is one placement policy: weighted scorers combined by a Placer.
type PolicySpec struct {
	Name    string       `yaml:"name" json:"name"`
	Scorers []ScorerSpec `yaml:"scorers" json:"scorers"`
}

// ScorerSpec is one scorer with its weight and arguments.
type ScorerSpec struct {
	Policy string `yaml:"policy" json:"policy"`
	Weight int64  `yaml:"weight" json:"weight"`
	// Args are the policy's arguments (see its docs page); omitted fields keep their defaults.
	Args map[string]any `yaml:"args" json:"args,omitempty"`
}

//go:embed scenarios/*.yaml
var builtin embed.FS

// Builtin returns an embedded scenario by name ("pwr-default").
func Builtin(name string) (*Scenario, error) {
	b, err := builtin.ReadFile("scenarios/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in scenario %q", name)
	}
	return Parse(b, name+".yaml")
}

// Load reads and validates a scenario file.
func Load(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse decodes a scenario strictly (unknown fields are errors), fills
// defaults and validates it; errors name the file and the field.
func Parse(b []byte, file string) (*Scenario, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s.defaults()
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &s, nil
}

func (s *Scenario) defaults() {
	if s.Mode == "" {
		s.Mode = "inflation"
		if s.HPC != nil {
			s.Mode = "hpc"
		}
	}
	if h := s.HPC; h != nil {
		if h.ProcsPerNode == 0 {
			h.ProcsPerNode = 1
		}
		if h.SR == 0 {
			h.SR = 1
		}
		if h.PCR == 0 {
			h.PCR = 1
		}
		if h.Beta == nil {
			b := math.Pow(0.25, 6)
			h.Beta = &b
		}
		if h.Workloads == nil {
			for _, w := range VAHRMWorkloads() {
				h.Workloads = append(h.Workloads, w.ID)
			}
		}
		if h.Systems == nil {
			h.Systems = slices.Clone(VAHRMSystems)
		}
	}
	if s.Trace.Nodes == "" {
		s.Trace.Nodes = "openb-gpu"
	}
	if s.Seeds == 0 {
		s.Seeds = 1
	}
	if s.Target == 0 {
		s.Target = 1.3
	}
	if s.FirstSeed == 0 {
		s.FirstSeed = 42 // the FGD simulator's first seed
	}
}

// Validate names every bad field with its path.
func (s *Scenario) Validate() error {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	if s.Name == "" {
		bad("name: empty")
	}
	if s.Mode != "inflation" && s.Mode != "replay" && s.Mode != "hpc" {
		bad("mode: %q, want inflation, replay or hpc", s.Mode)
	}
	if s.Mode == "hpc" {
		s.validateHPC(bad)
		if len(errs) > 0 {
			return fmt.Errorf("invalid scenario:\n  %s", strings.Join(errs, "\n  "))
		}
		return nil
	}
	if s.HPC != nil {
		bad("hpc: only for mode hpc")
	}
	if s.Trace.Pods == "" {
		bad("trace.pods: empty")
	}
	if s.Seeds < 1 || s.Seeds > 1000 {
		bad("seeds: %d, want 1..1000", s.Seeds)
	}
	if s.Target <= 0 || s.Target > 10 {
		bad("target: %v, want (0, 10]", s.Target)
	}
	if s.Compat != CompatNone && s.Compat != CompatFGDSim {
		bad("compat: %q, want %q or empty", s.Compat, CompatFGDSim)
	}
	if len(s.Policies) == 0 {
		bad("policies: none")
	}
	names := map[string]bool{}
	for i, p := range s.Policies {
		if p.Name == "" {
			bad("policies[%d].name: empty", i)
		}
		if names[p.Name] {
			bad("policies[%d].name: duplicate %q", i, p.Name)
		}
		names[p.Name] = true
		if len(p.Scorers) == 0 {
			bad("policies[%d].scorers: none", i)
		}
		for j, sc := range p.Scorers {
			if sc.Policy == "" {
				bad("policies[%d].scorers[%d].policy: empty", i, j)
			}
			if sc.Weight <= 0 {
				bad("policies[%d].scorers[%d].weight: %d, want > 0", i, j, sc.Weight)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid scenario:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

func (s *Scenario) validateHPC(bad func(string, ...any)) {
	if s.Seeds < 1 || s.Seeds > 1000 {
		bad("seeds: %d, want 1..1000", s.Seeds)
	}
	if s.Trace != (TraceSpec{Nodes: "openb-gpu"}) || len(s.Policies) > 0 || s.Compat != "" || s.Target != 1.3 {
		bad("trace, target, compat, policies: not used in mode hpc (the system is fixed; choose hpc.systems)")
	}
	h := s.HPC
	if h == nil {
		bad("hpc: missing (mode hpc needs an hpc section)")
		return
	}
	if h.SWF == "" {
		bad("hpc.swf: empty, want nasa-ipsc or an SWF file")
	}
	if h.Jobs < 0 {
		bad("hpc.jobs: %d, want >= 0 (0 = all)", h.Jobs)
	}
	if h.ProcsPerNode < 1 {
		bad("hpc.procs_per_node: %d, want >= 1", h.ProcsPerNode)
	}
	if !(h.SR > 0 && h.SR <= 1000) {
		bad("hpc.sr: %v, want (0, 1000]", h.SR)
	}
	if !(h.PCR > 0 && h.PCR <= 1) {
		bad("hpc.pcr: %v, want (0, 1]", h.PCR)
	}
	if b := *h.Beta; !(b >= 0 && b <= 1) {
		bad("hpc.beta: %v, want 0..1", b)
	}
	if !(h.FirstRunRatio >= 0 && h.FirstRunRatio <= 1) {
		bad("hpc.first_run_ratio: %v, want 0..1", h.FirstRunRatio)
	}
	if len(h.Workloads) == 0 {
		bad("hpc.workloads: none")
	}
	seen := map[int]bool{}
	for i, w := range h.Workloads {
		if w < 0 || w >= len(VAHRMWorkloads()) || seen[w] {
			bad("hpc.workloads[%d]: %d, want a distinct workload 0..%d", i, w, len(VAHRMWorkloads())-1)
		}
		seen[w] = true
	}
	if len(h.Systems) == 0 {
		bad("hpc.systems: none")
	}
	known := map[string]bool{}
	for i, sys := range h.Systems {
		if !slices.Contains(VAHRMSystems, sys) || known[sys] {
			bad("hpc.systems[%d]: %q, want a distinct one of %s", i, sys, strings.Join(VAHRMSystems, ", "))
		}
		known[sys] = true
	}
}

// PolicyNames lists the scenario's policies in order.
func (s *Scenario) PolicyNames() []string {
	out := make([]string, len(s.Policies))
	for i, p := range s.Policies {
		out[i] = p.Name
	}
	return out
}
