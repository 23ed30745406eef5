package scenario

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// Limit is a power limit as a scenario writes it: in watts, or as a
// fraction of the summed TDP of the devices the engine models (every node's
// CPUs and GPUs for GPU-sharing tasks and HPC nodes; the GPUs for elastic
// training, PowerFlow's eta*G*Pmax). Exactly one is set.
type Limit struct {
	Watts       float64 `yaml:"watts" json:"watts,omitempty"`
	TDPFraction float64 `yaml:"tdp_fraction" json:"tdp_fraction,omitempty"`
}

// UnmarshalYAML decodes strictly.
func (l *Limit) UnmarshalYAML(n *yaml.Node) error {
	if err := knownKeys(n, "scenario.Limit", "watts", "tdp_fraction"); err != nil {
		return err
	}
	type plain Limit
	return n.Decode((*plain)(l))
}

func (l *Limit) validate(path string, bad *problems) {
	if l == nil {
		return
	}
	switch {
	case l.Watts != 0 && l.TDPFraction != 0:
		bad.add("%s: watts and tdp_fraction both set, want one", path)
	case l.Watts != 0:
		if !(l.Watts > 0) || !finite(l.Watts) {
			bad.add("%s.watts: %v, want a positive number", path, l.Watts)
		}
	case l.TDPFraction != 0:
		if !(l.TDPFraction > 0 && l.TDPFraction <= 1) {
			bad.add("%s.tdp_fraction: %v, want (0, 1]", path, l.TDPFraction)
		}
	default:
		bad.add("%s: neither watts nor tdp_fraction set", path)
	}
}

// Resolve is the limit for devices of summed TDP tdp (none for nil).
func (l *Limit) Resolve(tdp hw.Watts) power.Limit {
	switch {
	case l == nil:
		return 0
	case l.Watts > 0:
		return power.Limit(l.Watts)
	}
	return power.Limit(l.TDPFraction * float64(tdp))
}

// System is one scheduler of an hpc or elastic scenario: a policy from
// the mode's registry with its arguments, the predictions it is built
// with, and optionally its own power limit. In a file, a plain name is a
// preset: one of the papers' systems (HPCSystems, ElasticSystems).
type System struct {
	Name   string         `yaml:"name" json:"name"`
	Policy string         `yaml:"policy" json:"policy"`
	Args   map[string]any `yaml:"args" json:"args,omitempty"`
	// Predictions: for hpc, tsmva (the fitted two-stage models) or ideal
	// (the true device power); for elastic, fitted (PowerFlow's models,
	// calibrated on each job's pre-run), oracle (exact profiles, no
	// pre-run) or empty (the policy predicts nothing).
	Predictions string `yaml:"predictions" json:"predictions,omitempty"`
	// PowerLimit overrides the scenario's power limit for this system.
	PowerLimit *Limit `yaml:"power_limit" json:"power_limit,omitempty"`

	preset bool // named by a plain string
}

// UnmarshalYAML accepts a preset name or a strict mapping.
func (s *System) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s.Name, s.preset = n.Value, true
		return nil
	}
	if err := knownKeys(n, "scenario.System", "name", "policy", "args", "predictions", "power_limit"); err != nil {
		return err
	}
	type plain System
	return n.Decode((*plain)(s))
}

// Ref is the system's policy as a registry reference.
func (s System) Ref() policy.Ref { return policy.Ref{Policy: s.Policy, Args: s.Args} }

// WithArg returns a copy of s with one argument set (a study's sweep).
func (s System) WithArg(key string, v any) System {
	args := make(map[string]any, len(s.Args)+1)
	for k, x := range s.Args {
		args[k] = x
	}
	args[key] = v
	s.Args = args
	return s
}

func (s System) check(check func(name string, args []byte) error) error {
	raw, err := s.Ref().RawArgs()
	if err != nil {
		return err
	}
	return check(s.Policy, raw)
}

// knownKeys fails on a mapping key that is not one of known, naming its line.
func knownKeys(n *yaml.Node, typ string, known ...string) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(known, k.Value) {
			return fmt.Errorf("line %d: field %s not found in type %s", k.Line, k.Value, typ)
		}
	}
	return nil
}

// resolve replaces preset names with the presets' specs.
func resolve(systems []System, presets []System, path string, bad *problems) {
	names := map[string]bool{}
	for i := range systems {
		s := &systems[i]
		if s.preset {
			k := slices.IndexFunc(presets, func(p System) bool { return p.Name == s.Name })
			if k < 0 {
				bad.add("%s[%d]: %q, want a system spec or a preset (%s)", path, i, s.Name, presetNames(presets))
				continue
			}
			*s = presets[k]
		}
		if s.Name == "" || names[s.Name] {
			bad.add("%s[%d].name: %q, want a distinct name", path, i, s.Name)
		}
		names[s.Name] = true
		if s.Policy == "" {
			bad.add("%s[%d].policy: empty", path, i)
		}
		s.PowerLimit.validate(fmt.Sprintf("%s[%d].power_limit", path, i), bad)
	}
}

func presetNames(ps []System) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return fmt.Sprint(out)
}

// HPCSystems are the VAHRM paper's eight systems (Table V): FCFS without
// and with EASY backfilling, variation-unaware (VU), CPU-variation-aware
// (CVA) and CPU-and-GPU-variation-aware (CGVA), and VAHRM with TSMVA's or
// ideal power predictions.
func HPCSystems() []System {
	fcfs := func(name, variation string, backfill bool) System {
		return System{Name: name, Policy: "fcfs", Args: map[string]any{"variation": variation, "backfill": backfill}, Predictions: "tsmva"}
	}
	return []System{
		fcfs("VU-FCFS", "none", false), fcfs("VU-FCFS-B", "none", true),
		fcfs("CVA-FCFS", "cpu", false), fcfs("CVA-FCFS-B", "cpu", true),
		fcfs("CGVA-FCFS", "cpu+gpu", false), fcfs("CGVA-FCFS-B", "cpu+gpu", true),
		{Name: "VAHRM+TSMVA", Policy: "vahrm", Predictions: "tsmva"},
		{Name: "VAHRM+IDEAL", Policy: "vahrm", Predictions: "ideal"},
	}
}

// ElasticSystems are PowerFlow's system and its baselines (PowerFlow
// Section 6.1, Fig. 7), and PowerFlow with exact profiles (Fig. 9). The
// baselines keep every node powered and their own placement, as the
// paper's do: node shutdown and fragmentation-free placement are
// PowerFlow's mechanisms (Section 5.3).
func ElasticSystems() []System {
	on := func() map[string]any { return map[string]any{"keep_idle_nodes_on": true} }
	return []System{
		{Name: "PowerFlow", Policy: "powerflow", Predictions: "fitted"},
		{Name: "Gandiva", Policy: "gandiva", Args: on()},
		{Name: "Tiresias", Policy: "tiresias", Args: on()},
		{Name: "Gandiva+Zeus", Policy: "zeus", Args: map[string]any{"base": map[string]any{"policy": "gandiva", "args": on()}}},
		{Name: "Tiresias+Zeus", Policy: "zeus", Args: map[string]any{"base": map[string]any{"policy": "tiresias", "args": on()}}},
		{Name: "AFS", Policy: "afs", Predictions: "oracle", Args: on()},
		{Name: "PowerFlow-oracle", Policy: "powerflow", Args: map[string]any{"profile_new_counts": false, "unmetered_guard": 0}, Predictions: "oracle"},
	}
}

// HPCSpec is the hpc section (docs/scenarios.md).
type HPCSpec struct {
	// SWF is "nasa-ipsc" (the embedded log) or the path of an SWF file (.gz allowed).
	SWF string `yaml:"swf" json:"swf"`
	// Jobs takes the first N usable jobs (0: all).
	Jobs int `yaml:"jobs" json:"jobs"`
	// ProcsPerNode converts processors to nodes (default 1).
	ProcsPerNode int `yaml:"procs_per_node" json:"procs_per_node"`
	// SR divides submit times (default 1); FirstRunRatio is the share of
	// jobs without a power profile (default 0).
	SR            float64 `yaml:"sr" json:"sr"`
	FirstRunRatio float64 `yaml:"first_run_ratio" json:"first_run_ratio"`
	// Workloads are the paper's workload numbers 0-8 (default all).
	Workloads []int `yaml:"workloads" json:"workloads"`
	// Systems are compared (default the paper's eight); results are
	// relative to the first.
	Systems []System `yaml:"systems" json:"systems"`
}

// maxProcsPerNode is the SWF reader's processor bound (swf.MaxProcs);
// minSR the smallest shrink ratio (arrivals 1000 times as far apart).
const (
	maxProcsPerNode = 10_000_000
	minSR           = 0.001
)

// HPCWorkloads is the number of the VAHRM paper's workload mixes (Table III).
const HPCWorkloads = 9

func (h *HPCSpec) defaults() {
	if h.ProcsPerNode == 0 {
		h.ProcsPerNode = 1
	}
	if h.SR == 0 {
		h.SR = 1
	}
	if h.Workloads == nil {
		for w := 0; w < HPCWorkloads; w++ {
			h.Workloads = append(h.Workloads, w)
		}
	}
	if h.Systems == nil {
		h.Systems = HPCSystems()
	}
}

func (h *HPCSpec) validate(bad *problems) {
	if h.SWF == "" {
		bad.add("hpc.swf: empty, want nasa-ipsc or an SWF file")
	}
	if h.Jobs < 0 {
		bad.add("hpc.jobs: %d, want >= 0 (0 = all)", h.Jobs)
	}
	// procs_per_node: any value at or above the SWF reader's processor
	// bound (swf.MaxProcs) gives every job one node; larger ones overflowed
	// the nodes-per-job division.
	if h.ProcsPerNode < 1 || h.ProcsPerNode > maxProcsPerNode {
		bad.add("hpc.procs_per_node: %d, want 1..%d", h.ProcsPerNode, maxProcsPerNode)
	}
	// sr stretches (below 1) or shrinks submit times; a tiny one scaled
	// them past int64 milliseconds.
	if !(h.SR >= minSR && h.SR <= 1000) {
		bad.add("hpc.sr: %v, want %g..1000", h.SR, minSR)
	}
	if !(h.FirstRunRatio >= 0 && h.FirstRunRatio <= 1) {
		bad.add("hpc.first_run_ratio: %v, want 0..1", h.FirstRunRatio)
	}
	if len(h.Workloads) == 0 {
		bad.add("hpc.workloads: none")
	}
	seen := map[int]bool{}
	for i, w := range h.Workloads {
		if w < 0 || w >= HPCWorkloads || seen[w] {
			bad.add("hpc.workloads[%d]: %d, want a distinct workload 0..%d", i, w, HPCWorkloads-1)
		}
		seen[w] = true
	}
	if len(h.Systems) == 0 {
		bad.add("hpc.systems: none")
	}
	resolve(h.Systems, HPCSystems(), "hpc.systems", bad)
	for i, s := range h.Systems {
		if s.Predictions != "tsmva" && s.Predictions != "ideal" {
			bad.add("hpc.systems[%d].predictions: %q, want tsmva or ideal", i, s.Predictions)
		}
	}
}

// ElasticSpec is the elastic section (docs/scenarios.md).
type ElasticSpec struct {
	// Jobs is "philly-day" (the embedded 2017-10-13 Philly day) or the path
	// of a Philly job table in the Pollux format (.gz allowed).
	Jobs string `yaml:"jobs" json:"jobs"`
	// Start is the window's start in a Philly table ("YYYY-MM-DD HH:MM:SS";
	// empty: the earliest job); Hours its length (default 24).
	Start string  `yaml:"start" json:"start,omitempty"`
	Hours float64 `yaml:"hours" json:"hours"`
	// Nodes is the number of 8-GPU nodes (default 24).
	Nodes   int      `yaml:"nodes" json:"nodes"`
	Systems []System `yaml:"systems" json:"systems"`
}

func (e *ElasticSpec) defaults() {
	if e.Hours == 0 {
		e.Hours = 24
	}
	if e.Nodes == 0 {
		e.Nodes = 24
	}
}

func (e *ElasticSpec) validate(bad *problems) {
	if e.Jobs == "" {
		bad.add("elastic.jobs: empty, want philly-day or a Philly job table")
	}
	if e.Start != "" && e.Jobs == PhillyDay {
		bad.add("elastic.start: only for a Philly job table file")
	}
	if e.Start != "" {
		checkStart("elastic.start", e.Start, bad)
	}
	if e.Hours != 24 && e.Jobs == PhillyDay { // 24 is the default
		bad.add("elastic.hours: %v: only for a Philly job table file (philly-day is its one day, 24 h; the hours were ignored)", e.Hours)
	}
	if !(e.Hours > 0 && e.Hours <= 24*366) {
		bad.add("elastic.hours: %v, want (0, 8784]", e.Hours)
	}
	if e.Nodes < 1 || e.Nodes > 4096 {
		bad.add("elastic.nodes: %d, want 1..4096", e.Nodes)
	}
	if len(e.Systems) == 0 {
		bad.add("elastic.systems: none")
	}
	resolve(e.Systems, ElasticSystems(), "elastic.systems", bad)
	for i, s := range e.Systems {
		if !slices.Contains([]string{"", "fitted", "oracle"}, s.Predictions) {
			bad.add("elastic.systems[%d].predictions: %q, want fitted, oracle or empty", i, s.Predictions)
		}
	}
}

// ColocSystems are EaCO and the three baselines the EaCO paper ran in
// Gavel (Section 6.2).
func ColocSystems() []System {
	return []System{
		{Name: "FIFO", Policy: "fifo"},
		{Name: "FIFO_packed", Policy: "fifo_packed"},
		{Name: "Gandiva", Policy: "gandiva_packing"},
		{Name: "EaCO", Policy: "eaco"},
	}
}

// ColocSpec is the coloc section (docs/scenarios.md): DL training jobs
// that may share GPUs, on nodes of 8 V100.
type ColocSpec struct {
	// Jobs is an embedded Gavel trace (GavelMSR, or one of
	// GavelClusterTraces) or the path of a Gavel trace in either layout
	// (7 tab-separated fields, the msr traces; 10, Gavel's parse_trace).
	Jobs string `yaml:"jobs" json:"jobs"`
	// Throughputs is the Gavel throughput table jobs run at: empty for the
	// embedded V100 single-GPU table, GavelSimulation for the embedded
	// copy of Gavel's simulation_throughputs.json, or the path of a file
	// in that format.
	Throughputs string `yaml:"throughputs" json:"throughputs,omitempty"`
	// Worker is the table's worker type the nodes have (ColocWorkers;
	// empty: v100).
	Worker string `yaml:"worker" json:"worker,omitempty"`
	// Arrivals is "trace" (the file's arrival times) or "poisson" (PerHour
	// jobs per hour, job types and steps drawn from the file, seeded).
	Arrivals string  `yaml:"arrivals" json:"arrivals"`
	PerHour  float64 `yaml:"per_hour" json:"per_hour,omitempty"`
	// Count is the number of jobs (poisson: drawn; trace: the first Count,
	// 0 = all).
	Count int `yaml:"count" json:"count"`
	// Nodes is the number of 8-V100 nodes (default 28).
	Nodes   int      `yaml:"nodes" json:"nodes"`
	Systems []System `yaml:"systems" json:"systems"`
	// Timing is when the policies decide: "events" (empty: at every
	// arrival, completion and observation window's end) or TimingGavel
	// (Gavel's rounds and allocation resets; FIFO, FIFO_packed and Gandiva
	// only; a job may span nodes).
	Timing string `yaml:"timing" json:"timing,omitempty"`
	// RoundS and ResetS are Gavel's round length and least time between
	// allocation resets in seconds (timing gavel-rounds; 360 and 1920).
	RoundS float64 `yaml:"round_s" json:"round_s,omitempty"`
	ResetS float64 `yaml:"reset_s" json:"reset_s,omitempty"`
	// FailedJobs is Gavel's failed-round rule under timing gavel-rounds:
	// FailedJobsDrop (empty: the default, what Gavel's simulator does)
	// removes a job after MaxFailedAttempts rounds in which a GPU of it got
	// no step, without a completion time; FailedJobsFinish lets it finish.
	FailedJobs string `yaml:"failed_jobs" json:"failed_jobs,omitempty"`
	// Deadlines is "drawn" (empty: the EaCO reproduction's deadline
	// classes, 20% of jobs high-priority) or "none" (no deadline or
	// priority: FIFO is arrival order).
	Deadlines string `yaml:"deadlines" json:"deadlines,omitempty"`
}

// Coloc timing and deadline values.
const (
	TimingEvents  = "events"
	TimingGavel   = "gavel-rounds"
	DeadlinesNone = "none"
	// FailedJobsDrop and FailedJobsFinish are coloc.failed_jobs' values.
	FailedJobsDrop   = "drop"
	FailedJobsFinish = "finish"
	// DefaultRoundS and DefaultResetS are Gavel's time_per_iteration and
	// minimum_time_between_allocation_resets.
	DefaultRoundS = 360
	DefaultResetS = 1920
)

// ColocRoundPolicies are the co-location policies that run under timing
// gavel-rounds (they implement Gavel's allocations).
var ColocRoundPolicies = []string{"fifo", "fifo_packed", "gandiva_packing"}

// GavelRounds reports whether the section asks for Gavel's round-based
// timing.
func (c *ColocSpec) GavelRounds() bool { return c.Timing == TimingGavel }

// MinPerHour and MaxArrivalSpanH bound Poisson arrivals (mode coloc and
// reproduce eaco): at least one job per 100 hours, and an expected span of
// all arrivals (jobs / per hour) of at most 10 years.
const (
	MinPerHour      = 0.01
	MaxArrivalSpanH = 87600
)

func (c *ColocSpec) defaults() {
	if c.Nodes == 0 {
		c.Nodes = 28
	}
	if c.Arrivals == "" {
		c.Arrivals = "trace"
	}
	if c.Systems == nil {
		c.Systems = ColocSystems()
		if c.GavelRounds() {
			c.Systems = c.Systems[:3] // EaCO has no round-based allocation
		}
	}
	if c.GavelRounds() {
		if c.RoundS == 0 {
			c.RoundS = DefaultRoundS
		}
		if c.ResetS == 0 {
			c.ResetS = DefaultResetS
		}
		if c.FailedJobs == "" {
			c.FailedJobs = FailedJobsDrop
		}
	}
}

// DropsFailedJobs reports whether Gavel's failed-round rule removes jobs
// (timing gavel-rounds, failed_jobs drop).
func (c *ColocSpec) DropsFailedJobs() bool {
	return c.GavelRounds() && c.FailedJobs != FailedJobsFinish
}

// ColocWorkers are the worker types of Gavel's throughput tables a coloc
// scenario may name (coloc.worker).
var ColocWorkers = []string{"v100", "p100", "k80"}

// WorkerType is the worker type the scenario's nodes have (v100 unless
// coloc.worker names another).
func (c *ColocSpec) WorkerType() string {
	if c.Worker == "" {
		return "v100"
	}
	return c.Worker
}

func (c *ColocSpec) validate(bad *problems) {
	if c.Jobs == "" {
		bad.add("coloc.jobs: empty, want gavel-msr or a Gavel trace file")
	}
	if c.Worker != "" && !slices.Contains(ColocWorkers, c.Worker) {
		bad.add("coloc.worker: %q, want one of %s", c.Worker, strings.Join(ColocWorkers, ", "))
	} else if c.WorkerType() != "v100" && c.Throughputs == "" {
		bad.add("coloc.worker: %s needs coloc.throughputs (the default table is Gavel's V100 single-GPU one): %s or a Gavel throughput file", c.Worker, GavelSimulation)
	}
	switch c.Arrivals {
	case "trace":
		if c.PerHour != 0 {
			bad.add("coloc.per_hour: only for arrivals: poisson")
		}
		if c.Count < 0 {
			bad.add("coloc.count: %d, want >= 0 (0 = all)", c.Count)
		}
	case "poisson":
		// A vanishing rate drew arrival times past int64 milliseconds (the
		// run failed on a "submit time"); the expected span of the draws,
		// count / per_hour, is bounded like the other modes' horizons.
		perHourOK := c.PerHour >= MinPerHour && c.PerHour <= 10000
		if !perHourOK {
			bad.add("coloc.per_hour: %v, want %g..10000", c.PerHour, MinPerHour)
		}
		if c.Count < 1 || c.Count > 1000000 {
			bad.add("coloc.count: %d, want 1..1000000", c.Count)
		} else if span := float64(c.Count) / c.PerHour; perHourOK && span > MaxArrivalSpanH {
			bad.add("coloc.count / coloc.per_hour: %d jobs at %g per hour arrive over about %.0f h, above %d h (10 years)", c.Count, c.PerHour, span, MaxArrivalSpanH)
		}
	default:
		bad.add("coloc.arrivals: %q, want trace or poisson", c.Arrivals)
	}
	if c.Nodes < 1 || c.Nodes > 4096 {
		bad.add("coloc.nodes: %d, want 1..4096", c.Nodes)
	}
	if len(c.Systems) == 0 {
		bad.add("coloc.systems: none")
	}
	resolve(c.Systems, ColocSystems(), "coloc.systems", bad)
	for i, s := range c.Systems {
		if s.Predictions != "" || s.PowerLimit != nil {
			bad.add("coloc.systems[%d]: predictions and power_limit are not used by mode coloc", i)
		}
	}
	switch c.Timing {
	case "", TimingEvents:
		if c.RoundS != 0 || c.ResetS != 0 {
			bad.add("coloc.round_s, coloc.reset_s: only for timing: %s", TimingGavel)
		}
		if c.FailedJobs != "" {
			bad.add("coloc.failed_jobs: only for timing: %s", TimingGavel)
		}
	case TimingGavel:
		// A round of a second to a day; a reset interval of a second (a
		// new allocation at nearly every round) to 30 days.
		if !(c.RoundS >= 1 && c.RoundS <= 86400) {
			bad.add("coloc.round_s: %v, want 1..86400 seconds", c.RoundS)
		}
		if !(c.ResetS >= 1 && c.ResetS <= 30*86400) {
			bad.add("coloc.reset_s: %v, want 1..2592000 seconds", c.ResetS)
		}
		if c.FailedJobs != "" && c.FailedJobs != FailedJobsDrop && c.FailedJobs != FailedJobsFinish {
			bad.add("coloc.failed_jobs: %q, want %s or %s", c.FailedJobs, FailedJobsDrop, FailedJobsFinish)
		}
		for i, s := range c.Systems {
			if s.Policy != "" && !slices.Contains(ColocRoundPolicies, s.Policy) {
				bad.add("coloc.systems[%d] (%s): policy %s does not run under timing: %s (these do: %v)", i, s.Name, s.Policy, TimingGavel, ColocRoundPolicies)
			}
		}
	default:
		bad.add("coloc.timing: %q, want %s or %s", c.Timing, TimingEvents, TimingGavel)
	}
	switch c.Deadlines {
	case "", "drawn", DeadlinesNone:
	default:
		bad.add("coloc.deadlines: %q, want drawn or %s", c.Deadlines, DeadlinesNone)
	}
}
