// Package scenario is the schema of wattsched's scenario files: one typed
// mode per engine (inflation and replay of GPU-sharing tasks, hpc jobs on
// exclusive nodes, elastic training jobs, co-located training jobs,
// slotted training and inference plans), strict decoding (an unknown
// field is an error), defaults, and validation that names every bad field
// with its path. Check then verifies policy and system names and their
// arguments against the policy registries, as kube-scheduler checks its
// profiles' plugin names, before any work starts.
package scenario

import (
	"embed"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/userfile"
)

// Mode selects the engine and the kind of jobs a scenario runs.
type Mode string

// Modes.
const (
	// Inflation: GPU-sharing tasks sampled with replacement arrive until
	// the requested GPU capacity reaches Target; none leaves (FGD/PWR).
	Inflation Mode = "inflation"
	// Replay: GPU-sharing tasks arrive at their recorded times and leave.
	Replay Mode = "replay"
	// HPC: rigid jobs of an SWF log on the VAHRM paper's system.
	HPC Mode = "hpc"
	// Elastic: elastic DL training jobs of a GPU job trace (PowerFlow).
	Elastic Mode = "elastic"
	// Coloc: DL training jobs that may share GPUs (EaCO).
	Coloc Mode = "coloc"
	// Slotted: training epochs and inference load planned per 15-minute
	// slot on single-GPU nodes under a price series (CE-DLA).
	Slotted Mode = "slotted"
)

// Modes lists the modes in documentation order.
var Modes = []Mode{Inflation, Replay, HPC, Elastic, Coloc, Slotted}

// Compat modes of inflation.
const (
	// CompatNone uses wattsched's own sampling (math/rand/v2) and ties by a
	// seeded node order.
	CompatNone = ""
	// CompatFGDSim reproduces the public FGD simulator's task sequence and tie-breaking.
	CompatFGDSim = "fgd-sim"
)

// defaulted lists the fields whose zero value means "the default": an
// explicit 0 there is an error rather than silently the default (sr: 0
// used to run as sr: 1).
var defaulted = [][]string{{"seeds"}, {"first_seed"}, {"target"}, {"hpc", "sr"}, {"hpc", "procs_per_node"}, {"elastic", "nodes"}, {"elastic", "hours"}, {"grid", "pue"},
	{"coloc", "nodes"}, {"coloc", "round_s"}, {"coloc", "reset_s"},
	{"slotted", "slots"}, {"slotted", "lookahead"}, {"slotted", "replan_every"},
	{"measured", "stale_after_s"}, {"measured", "max_series_w"}, {"topology", "report_above"}}

// Scenario is one experiment.
type Scenario struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description,omitempty"`
	Mode        Mode   `yaml:"mode" json:"mode"`
	// Trace names the cluster and the tasks (inflation and replay).
	Trace TraceSpec `yaml:"trace" json:"trace,omitzero"`
	// Seeds runs seeds FirstSeed..FirstSeed+Seeds-1 (FirstSeed defaults to
	// 42, as in the FGD simulator's experiments).
	Seeds     int    `yaml:"seeds" json:"seeds"`
	FirstSeed uint64 `yaml:"first_seed" json:"first_seed"`
	// Target is the requested GPU capacity, as a multiple of the cluster's,
	// at which inflation stops.
	Target float64 `yaml:"target" json:"target,omitzero"`
	// Compat is "" or "fgd-sim" (inflation).
	Compat string `yaml:"compat" json:"compat,omitempty"`
	// Policies are the placement policies compared (inflation and replay).
	Policies []PolicySpec `yaml:"policies" json:"policies,omitempty"`
	// HPC configures mode hpc.
	HPC *HPCSpec `yaml:"hpc" json:"hpc,omitempty"`
	// Elastic configures mode elastic.
	Elastic *ElasticSpec `yaml:"elastic" json:"elastic,omitempty"`
	// Coloc configures mode coloc.
	Coloc *ColocSpec `yaml:"coloc" json:"coloc,omitempty"`
	// Slotted configures mode slotted.
	Slotted *SlottedSpec `yaml:"slotted" json:"slotted,omitempty"`
	// PowerLimit bounds the cluster's power for every policy or system of
	// the scenario (a system may set its own).
	PowerLimit *Limit `yaml:"power_limit" json:"power_limit,omitempty"`
	// Catalog is a hardware catalog file (relative to the scenario file)
	// whose models join the embedded ones; Hardware lists more models
	// inline, in the same format (inflation and replay, whose node lists
	// name GPU models).
	Catalog  string      `yaml:"catalog" json:"catalog,omitempty"`
	Hardware *hw.Catalog `yaml:"hardware" json:"hardware,omitempty"`
	// PowerModel is the GPU power model of modes inflation and replay:
	// "pwr" (default: the paper's, a GPU with any allocation draws its
	// TDP, pwr-fgd eq. 2) or "measured-busy" (it draws the catalog's
	// measured busy_w instead; docs/power-models.md).
	PowerModel string `yaml:"power_model" json:"power_model,omitempty"`
	// Grid prices the energy of every run in money and carbon (modes
	// replay, hpc, elastic and coloc; default: the embedded US-NY-NYIS 2023
	// series from 2023-01-01 00:00 UTC). Mode inflation, whose load levels
	// have no time, prices a year from start at each level's power. In
	// mode slotted it is also the price the planners see (default: the
	// CE-DLA study's NYISO week).
	Grid *GridSpec `yaml:"grid" json:"grid,omitempty"`
	// PowerDown powers off nodes that stay empty and wakes them when a task
	// needs them (mode replay).
	PowerDown *PowerDownSpec `yaml:"power_down" json:"power_down,omitempty"`
	// Measured replays recorded measured power into the power gate (mode
	// replay, under power_limit).
	Measured *MeasuredSpec `yaml:"measured" json:"measured,omitempty"`
	// Variants are settings (power_down, power_limit, pue, catalog,
	// hardware, grid) that compare crosses with the policies (mode replay;
	// docs/scenarios.md#variants).
	Variants []VariantSpec `yaml:"variants" json:"variants,omitempty"`
	// Topology groups the nodes into power domains (rack, PDU, row), each
	// with a limit every engine enforces beside power_limit (modes replay,
	// inflation and hpc, whose nodes are named node-000 ...;
	// docs/scenarios.md, "Power domains").
	Topology *TopologySpec `yaml:"topology" json:"topology,omitempty"`
	// Gangs says how gang jobs (pods with a gang) wait and pack (mode
	// replay; docs/scenarios.md#gang-jobs).
	Gangs *GangSpec `yaml:"gangs" json:"gangs,omitempty"`
	// MIG puts groups of nodes' GPUs in MIG mode: a static layout or
	// dynamic MIG (modes replay and inflation; docs/scenarios.md#mig-partitions).
	MIG []MIGGroup `yaml:"mig" json:"mig,omitempty"`

	// dir is the directory relative paths resolve from (the file's).
	dir string
	// migLines are where the mig groups were declared (decode), and
	// variantMIGLines those of each variant's; migPath names the mig
	// section in errors ("" for "mig").
	migLines        migLines
	variantMIGLines []migLines
	migPath         string
}

// TraceSpec names the cluster and the task population.
type TraceSpec struct {
	// Pods is an embedded openb pod list ("default", "gpushare40", ...) or a CSV path.
	Pods string `yaml:"pods" json:"pods"`
	// Nodes is "openb-gpu" (the papers' 1213 GPU nodes, default), "openb-all" or a CSV path.
	Nodes string `yaml:"nodes" json:"nodes"`
	// ReferenceGPU is the GPU model (catalog name or alias) the pods'
	// durations were measured on (mode replay): a pod placed on another
	// model runs duration x speed(reference)/speed(placed). A pod's own
	// reference_gpu column takes its place. Empty: unknown, durations as
	// traced on every model.
	ReferenceGPU string `yaml:"reference_gpu" json:"reference_gpu,omitempty"`
	// SharesAsMIG, a MIG-capable GPU model, turns every GPU-share pod
	// (one GPU, under 1000 milli) that accepts the model into a request
	// for one MIG instance of it: a declared stand-in where a trace has
	// shares and the cluster MIG GPUs. The profile is the smallest with at
	// least the share's compute (hw.MIGGeometry.SmallestProfileFor;
	// docs/scenarios.md#mig-partitions).
	SharesAsMIG string `yaml:"shares_as_mig" json:"shares_as_mig,omitempty"`
}

// PolicySpec is one placement policy: weighted scorers combined by a Placer.
type PolicySpec struct {
	Name    string       `yaml:"name" json:"name"`
	Scorers []ScorerSpec `yaml:"scorers" json:"scorers"`
	// DomainWeight weighs the domain-headroom term added to the scorers'
	// weighted sum (policy.Placer.SetDomainWeight; 0: off, the default).
	// It needs a topology.
	DomainWeight int64 `yaml:"domain_weight" json:"domain_weight,omitempty"`
}

// ScorerSpec is one scorer with its weight and arguments.
type ScorerSpec struct {
	Policy string `yaml:"policy" json:"policy"`
	Weight int64  `yaml:"weight" json:"weight"`
	// Args are the policy's arguments (see its docs page); omitted fields keep their defaults.
	Args map[string]any `yaml:"args" json:"args,omitempty"`
}

// Ref is the scorer as a registry reference.
func (s ScorerSpec) Ref() policy.Ref { return policy.Ref{Policy: s.Policy, Args: s.Args} }

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

// Load reads and validates a scenario file; relative paths in it resolve
// from the file's directory.
func Load(path string) (*Scenario, error) {
	b, err := userfile.ReadFile(path, userfile.Scenario)
	if err != nil {
		return nil, err
	}
	s, err := Parse(b, path)
	if err != nil {
		return nil, err
	}
	s.dir = filepath.Dir(path)
	return s, nil
}

// Parse decodes a scenario strictly (unknown fields are errors), fills
// defaults and validates it; errors name the file and the field. Relative
// paths resolve from the working directory.
func Parse(b []byte, file string) (*Scenario, error) {
	var s Scenario
	if err := decode(b, file, &s); err != nil {
		return nil, err
	}
	s.defaults()
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &s, nil
}

// Path resolves a path the scenario names: relative paths are relative to
// the scenario file's directory.
func (s *Scenario) Path(p string) string {
	if p == "" || filepath.IsAbs(p) || s.dir == "" {
		return p
	}
	return filepath.Join(s.dir, p)
}

// PowerDownSpec is node power management in replay: a node with nothing
// allocated for IdleAfterS seconds powers off and draws OffW; a task that
// fits on no powered node wakes one, which takes WakeS seconds (at idle
// power) before it takes tasks.
type PowerDownSpec struct {
	IdleAfterS float64 `yaml:"idle_after_s" json:"idle_after_s"`
	WakeS      float64 `yaml:"wake_s" json:"wake_s"`
	OffW       float64 `yaml:"off_w" json:"off_w"`
}

func (p *PowerDownSpec) validate(bad *problems) { p.validateAt("power_down", bad) }

// validateAt validates a power_down section at the given path.
func (p *PowerDownSpec) validateAt(path string, bad *problems) {
	if p == nil {
		return
	}
	for _, f := range []struct {
		name   string
		v, max float64
		min    float64
	}{{"idle_after_s", p.IdleAfterS, 365 * 24 * 3600, 1}, {"wake_s", p.WakeS, 24 * 3600, 0}, {"off_w", p.OffW, 10000, 0}} {
		if !(f.v >= f.min && f.v <= f.max) {
			bad.add("%s.%s: %v, want %v..%v", path, f.name, f.v, f.min, f.max)
		}
	}
}

// GridSpec names the electricity price and carbon-intensity series a
// scenario's runs are charged with, and the hour simulated time 0 stands for.
type GridSpec struct {
	// Region is an embedded region (grid.Regions).
	Region string `yaml:"region" json:"region,omitempty"`
	// Start is "YYYY-MM-DD hh:mm:ss" UTC, on the hour.
	Start string `yaml:"start" json:"start,omitempty"`
	// Price and Carbon are CSV files (relative to the scenario file) that
	// replace the region's series (docs/formats.md).
	Price  string `yaml:"price" json:"price,omitempty"`
	Carbon string `yaml:"carbon" json:"carbon,omitempty"`
	// CarbonBasis is lca (life-cycle, default) or direct.
	CarbonBasis string `yaml:"carbon_basis" json:"carbon_basis,omitempty"`
	// PUE is the facility's power usage effectiveness (1..3; default 1):
	// cost and carbon are charged on the IT energy times PUE.
	PUE float64 `yaml:"pue" json:"pue,omitempty"`
}

// Account is the price and carbon account of the scenario's runs.
func (s *Scenario) Account() (*grid.Account, error) {
	g := s.Grid
	if g == nil {
		g = &GridSpec{}
	}
	region, start := g.Region, g.Start
	if region == "" {
		region = grid.DefaultRegion
	}
	if start == "" && g.Price == "" {
		start = grid.DefaultStart
	}
	a, err := grid.NewAccount(region, start, s.Path(g.Price), s.Path(g.Carbon), g.CarbonBasis)
	if err != nil {
		return nil, fmt.Errorf("grid: %w", err)
	}
	if g.PUE != 0 {
		if !(g.PUE >= 1 && g.PUE <= 3) {
			return nil, fmt.Errorf("grid.pue: %v, want 1..3", g.PUE)
		}
		a.PUE = g.PUE
		a.Where += fmt.Sprintf("; PUE %g (cost and carbon on the IT energy x %g)", g.PUE, g.PUE)
	}
	return a, nil
}

// HardwareCatalog is base with the models of the scenario's catalog file
// and hardware section added (base itself when it has neither), with
// power_model measured-busy applied (hw.Catalog.MeasuredBusy).
func (s *Scenario) HardwareCatalog(base *hw.Catalog) (*hw.Catalog, error) {
	c := base
	if s.Catalog != "" {
		f, err := hw.ParseFile(s.Path(s.Catalog))
		if err != nil {
			return nil, fmt.Errorf("catalog: %w", err)
		}
		if c, err = c.With(f, "catalog "+s.Catalog); err != nil {
			return nil, err
		}
	}
	if s.Hardware != nil {
		var err error
		if c, err = c.With(s.Hardware, "hardware"); err != nil {
			return nil, err
		}
	}
	if s.PowerModel == PowerModelMeasuredBusy {
		return c.MeasuredBusy()
	}
	return c, nil
}

// Power models (Scenario.PowerModel).
const (
	PowerModelPWR          = "pwr"
	PowerModelMeasuredBusy = "measured-busy"
)

func (s *Scenario) defaults() {
	if s.Mode == "" {
		switch {
		case s.HPC != nil:
			s.Mode = HPC
		case s.Elastic != nil:
			s.Mode = Elastic
		case s.Coloc != nil:
			s.Mode = Coloc
		case s.Slotted != nil:
			s.Mode = Slotted
		default:
			s.Mode = Inflation
		}
	}
	if s.Seeds == 0 {
		s.Seeds = 1
	}
	if s.FirstSeed == 0 {
		s.FirstSeed = 42 // the FGD simulator's first seed
	}
	switch s.Mode {
	case Inflation, Replay:
		if s.Trace.Nodes == "" {
			s.Trace.Nodes = NodesOpenBGPU
		}
		if s.Target == 0 {
			s.Target = 1.3
		}
	case HPC:
		if s.HPC != nil {
			s.HPC.defaults()
		}
	case Elastic:
		if s.Elastic != nil {
			s.Elastic.defaults()
		}
	case Coloc:
		if s.Coloc != nil {
			s.Coloc.defaults()
		}
	case Slotted:
		if s.Slotted != nil {
			s.Slotted.defaults()
		}
	}
}

// problems collects validation errors, each with its field path.
type problems []string

func (p *problems) add(f string, a ...any) { *p = append(*p, fmt.Sprintf(f, a...)) }

func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("invalid scenario:\n  %s", strings.Join(p, "\n  "))
}

// Validate names every bad field with its path.
func (s *Scenario) Validate() error {
	var bad problems
	if s.Name == "" {
		bad.add("name: empty")
	}
	if !slices.Contains(Modes, s.Mode) {
		bad.add("mode: %q, want one of %v", s.Mode, Modes)
	}
	if s.Seeds < 1 || s.Seeds > 1000 {
		bad.add("seeds: %d, want 1..1000", s.Seeds)
	}
	s.PowerLimit.validate("power_limit", &bad)
	taskMode := s.Mode == Inflation || s.Mode == Replay
	if !taskMode && (s.Trace != TraceSpec{} || len(s.Policies) > 0 || s.Compat != "" || s.Target != 0) {
		bad.add("trace, target, compat, policies: only for modes inflation and replay (mode %s lists its systems in its own section)", s.Mode)
	}
	if s.HPC != nil && s.Mode != HPC {
		bad.add("hpc: only for mode hpc")
	}
	switch s.PowerModel {
	case "", PowerModelPWR, PowerModelMeasuredBusy:
	default:
		bad.add("power_model: %q, want %s (default) or %s", s.PowerModel, PowerModelPWR, PowerModelMeasuredBusy)
	}
	if !taskMode && s.PowerModel != "" {
		bad.add("power_model: only for modes inflation and replay (mode %s runs its paper's power model)", s.Mode)
	}
	if !taskMode && (s.Catalog != "" || s.Hardware != nil) {
		bad.add("catalog, hardware: only for modes inflation and replay (mode %s runs its paper's hardware)", s.Mode)
	}
	if s.Elastic != nil && s.Mode != Elastic {
		bad.add("elastic: only for mode elastic")
	}
	if s.PowerDown != nil && s.Mode != Replay {
		bad.add("power_down: only for mode replay (mode %s has no idle nodes to power off, or manages them itself)", s.Mode)
	}
	s.PowerDown.validate(&bad)
	s.Gangs.validate(s.Mode, &bad)
	validateMIG(s.MIG, s.Mode, "mig", s.migLines, &bad)
	s.Measured.validate(s, &bad)
	if s.Coloc != nil && s.Mode != Coloc {
		bad.add("coloc: only for mode coloc")
	}
	if s.Mode == Coloc && s.PowerLimit != nil {
		bad.add("power_limit: not used by mode coloc")
	}
	if s.Slotted != nil && s.Mode != Slotted {
		bad.add("slotted: only for mode slotted")
	}
	if s.Mode == Slotted && s.PowerLimit != nil {
		bad.add("power_limit: not used by mode slotted (CE-DLA plans under a price, not a power limit)")
	}
	if s.Grid != nil && s.Grid.Start != "" {
		checkStart("grid.start", s.Grid.Start, &bad)
	}
	if s.Mode == Slotted && s.Grid != nil && s.Grid.PUE != 0 {
		bad.add("grid.pue: not used by mode slotted (cost and carbon are on the IT energy)")
	}
	switch s.Mode {
	case Inflation, Replay:
		s.validateTasks(&bad)
	case HPC:
		if s.HPC == nil {
			bad.add("hpc: missing (mode hpc needs an hpc section)")
		} else {
			s.HPC.validate(&bad)
		}
	case Elastic:
		if s.Elastic == nil {
			bad.add("elastic: missing (mode elastic needs an elastic section)")
		} else {
			s.Elastic.validate(&bad)
		}
	case Coloc:
		if s.Coloc == nil {
			bad.add("coloc: missing (mode coloc needs a coloc section)")
		} else {
			s.Coloc.validate(&bad)
		}
	case Slotted:
		if s.Slotted == nil {
			bad.add("slotted: missing (mode slotted needs a slotted section)")
		} else {
			s.Slotted.validate(&bad)
		}
	}
	if s.Topology != nil && !taskMode && s.Mode != HPC {
		bad.add("topology: only for modes inflation, replay and hpc (mode %s)", s.Mode)
	}
	s.Topology.validate("topology", &bad)
	s.validateVariants(&bad)
	s.seedsWrap(&bad)
	return bad.err()
}

func (s *Scenario) validateTasks(bad *problems) {
	if s.Trace.Pods == "" {
		bad.add("trace.pods: empty")
	}
	if !(s.Target > 0 && s.Target <= 10) {
		bad.add("target: %v, want (0, 10]", s.Target)
	}
	if s.Trace.ReferenceGPU != "" && s.Mode != Replay {
		bad.add("trace.reference_gpu: only for mode replay (in mode %s tasks never end, so their durations do not count)", s.Mode)
	}
	if r := s.Trace.ReferenceGPU; r != strings.TrimSpace(r) || strings.ContainsAny(r, "\n\t") {
		bad.add("trace.reference_gpu: %q has surrounding or inner whitespace; write the catalog name, e.g. H100", r)
	}
	if s.Compat != CompatNone && s.Compat != CompatFGDSim {
		bad.add("compat: %q, want %q or empty", s.Compat, CompatFGDSim)
	}
	if len(s.Policies) == 0 {
		bad.add("policies: none")
	}
	names := map[string]bool{}
	for i, p := range s.Policies {
		if p.Name == "" {
			bad.add("policies[%d].name: empty", i)
		}
		if names[p.Name] {
			bad.add("policies[%d].name: duplicate %q", i, p.Name)
		}
		names[p.Name] = true
		if len(p.Scorers) == 0 {
			bad.add("policies[%d].scorers: none", i)
		}
		if p.DomainWeight < 0 || p.DomainWeight > math.MaxInt64/policy.MaxScore {
			bad.add("policies[%d].domain_weight: %d, want 0 (off) or more", i, p.DomainWeight)
		} else if p.DomainWeight > 0 && !s.hasTopology() {
			bad.add("policies[%d].domain_weight: %d, but neither the scenario nor a variant has a topology", i, p.DomainWeight)
		}
		// As kube-scheduler checks its plugins' weights: the weighted total
		// of the best scores (MaxScore each) must fit an int64, or scores
		// would overflow and wrap silently.
		total := max(0, p.DomainWeight)
		for j, sc := range p.Scorers {
			if sc.Policy == "" {
				bad.add("policies[%d].scorers[%d].policy: empty", i, j)
			}
			if sc.Weight <= 0 {
				bad.add("policies[%d].scorers[%d].weight: %d, want > 0", i, j, sc.Weight)
			} else if total += sc.Weight; sc.Weight > math.MaxInt64/policy.MaxScore || total > math.MaxInt64/policy.MaxScore {
				bad.add("policies[%d].scorers[%d].weight: %d: the weights' sum times the highest score (%d) overflows int64", i, j, sc.Weight, policy.MaxScore)
			}
		}
	}
}

// Check verifies every policy and system the scenario names, and their
// arguments, against the registries.
func (s *Scenario) Check(r *policy.Registries) error {
	var bad problems
	for i, p := range s.Policies {
		for j, sc := range p.Scorers {
			raw, err := sc.Ref().RawArgs()
			if err == nil {
				err = r.Scorers.Check(sc.Policy, raw)
			}
			if err != nil {
				bad.add("policies[%d].scorers[%d]: %v", i, j, err)
			}
		}
	}
	if s.HPC != nil {
		for i, sys := range s.HPC.Systems {
			if err := sys.check(r.HPC.Check); err != nil {
				bad.add("hpc.systems[%d] (%s): %v", i, sys.Name, err)
			}
		}
	}
	if s.Elastic != nil {
		for i, sys := range s.Elastic.Systems {
			if err := sys.check(r.Elastic.Check); err != nil {
				bad.add("elastic.systems[%d] (%s): %v", i, sys.Name, err)
			}
		}
	}
	if s.Coloc != nil {
		for i, sys := range s.Coloc.Systems {
			if err := sys.check(r.Coloc.Check); err != nil {
				bad.add("coloc.systems[%d] (%s): %v", i, sys.Name, err)
			}
		}
	}
	if s.Slotted != nil {
		for i, sys := range s.Slotted.Systems {
			sys = s.Slotted.PlannerSystem(sys)
			if err := sys.check(r.Slotted.Check); err != nil {
				bad.add("slotted.systems[%d] (%s): %v", i, sys.Name, err)
				continue
			}
			s.Slotted.checkApplied(i, sys, &bad)
		}
	}
	if err := bad.err(); err != nil {
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return nil
}

// PolicyNames lists the scenario's placement policies in order.
func (s *Scenario) PolicyNames() []string {
	out := make([]string, len(s.Policies))
	for i, p := range s.Policies {
		out[i] = p.Name
	}
	return out
}

// ReferencePolicy is the policy savings are measured against: the first
// whose only scorer is FGD ("" when none).
func (s *Scenario) ReferencePolicy() string {
	for _, p := range s.Policies {
		if len(p.Scorers) == 1 && p.Scorers[0].Policy == "fgd" {
			return p.Name
		}
	}
	return ""
}

// SeedList is the scenario's seeds in order.
func (s *Scenario) SeedList() []uint64 {
	out := make([]uint64, s.Seeds)
	for k := range out {
		out[k] = s.FirstSeed + uint64(k)
	}
	return out
}

// finite reports whether v is a finite number.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
