package scenario

import (
	"slices"

	"github.com/wattsched/wattsched/policy"
)

// SlottedSystems are CE-DLA's two problems and the three baselines the
// CE-DLA paper compares them with (Sec. 3.2), in the paper's order.
func SlottedSystems() []System {
	return []System{
		{Name: "CE-DLA soft", Policy: "cedla", Args: map[string]any{"mode": "soft"}},
		{Name: "CE-DLA hard", Policy: "cedla", Args: map[string]any{"mode": "hard"}},
		{Name: "FIFO", Policy: "fifo"},
		{Name: "EPRONS", Policy: "eprons"},
		{Name: "PA-MBT", Policy: "pambt"},
	}
}

// Bounds of the slotted section.
const (
	// SlottedDefaultNodes is the nodes per type without a nodes mapping
	// (the quick CE-DLA reproduction's).
	SlottedDefaultNodes = 10
	// SlottedMaxSlots is 28 days of 15-minute slots.
	SlottedMaxSlots = 28 * 96
)

// SlottedSpec is the slotted section (docs/scenarios.md): training jobs and
// inference load planned per 15-minute slot on single-GPU nodes of the
// CE-DLA paper's four types, under an hourly price series (the grid
// section; default: the CE-DLA study's NYISO week).
type SlottedSpec struct {
	// Models is a models table (CSV, the format of the CE-DLA study's
	// data/models.csv) instead of the embedded one.
	Models string `yaml:"models" json:"models,omitempty"`
	// Nodes maps node types (GPU models of the models table) to their
	// counts; types left out have no nodes. Default: SlottedDefaultNodes of
	// each type.
	Nodes map[string]int `yaml:"nodes" json:"nodes,omitempty"`
	// Slots is the horizon in 15-minute slots (default 96, one day);
	// Lookahead the slots of forecasts CE-DLA plans over (default 24);
	// ReplanEvery how many slots of each CE-DLA plan are applied before it
	// plans again (default 4; a job's arrival always starts a new plan).
	Slots       int `yaml:"slots" json:"slots"`
	Lookahead   int `yaml:"lookahead" json:"lookahead"`
	ReplanEvery int `yaml:"replan_every" json:"replan_every"`
	// Jobs are the training jobs: generated as the study does, or a file.
	Jobs SlotJobsSpec `yaml:"jobs" json:"jobs"`
	// Inference is the inference load: the study's diurnal profile, or a
	// file.
	Inference SlotLoadSpec `yaml:"inference" json:"inference"`
	Systems   []System     `yaml:"systems" json:"systems"`
	// PlanReading is how the engine reads every system's inference split
	// before it applies a slot (policy.PlanReading: concentrate, the
	// default, or as-planned); one step for every system.
	PlanReading policy.PlanReading `yaml:"plan_reading" json:"plan_reading"`
}

// SlotJobsSpec gives the training jobs: Count jobs drawn per seed as the
// CE-DLA study draws them, or a CSV file (docs/formats.md); exactly one.
type SlotJobsSpec struct {
	Count int    `yaml:"count" json:"count,omitempty"`
	File  string `yaml:"file" json:"file,omitempty"`
}

// SlotLoadSpec gives the inference load: ReqPerMin requests/min in all
// (split evenly over the models, the study's diurnal profile and noise per
// seed), or a CSV file of requests/min per slot and model; exactly one.
type SlotLoadSpec struct {
	ReqPerMin float64 `yaml:"req_per_min" json:"req_per_min,omitempty"`
	File      string  `yaml:"file" json:"file,omitempty"`
}

func (c *SlottedSpec) defaults() {
	if c.Slots == 0 {
		c.Slots = 96
	}
	if c.Lookahead == 0 {
		c.Lookahead = 24
	}
	if c.ReplanEvery == 0 {
		c.ReplanEvery = 4
	}
	if c.Systems == nil {
		c.Systems = SlottedSystems()
	}
	if c.PlanReading == "" {
		c.PlanReading = policy.DefaultPlanReading
	}
}

// PlannerSystem is sys as the run builds it: CE-DLA (policy cedla)
// without binary_slots gets replan_every, so that the slots applied before
// the next plan are binary (relax and fix, as in the study).
func (c *SlottedSpec) PlannerSystem(sys System) System {
	if sys.Policy != "cedla" {
		return sys
	}
	if _, set := sys.Args["binary_slots"]; !set {
		return sys.WithArg("binary_slots", c.ReplanEvery)
	}
	return sys
}

// checkApplied names a CE-DLA system whose binary slots end before the
// next plan: the engine would apply relaxed placements, which may hold
// more jobs than a type has nodes.
func (c *SlottedSpec) checkApplied(i int, sys System, bad *problems) {
	if sys.Policy != "cedla" {
		return
	}
	n, ok := IntArg(sys.Args["binary_slots"])
	if ok && n > 0 && n < c.ReplanEvery {
		bad.add("slotted.systems[%d] (%s): binary_slots %d is less than replan_every %d: the slots applied before the next plan must be binary (or 0: every slot binary)", i, sys.Name, n, c.ReplanEvery)
	}
}

// IntArg is a YAML-decoded integer argument of a system's args (an int,
// or a float64 that is a whole number).
func IntArg(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case uint64:
		return int(x), true
	case float64:
		return int(x), x == float64(int(x))
	}
	return 0, false
}

func (c *SlottedSpec) validate(bad *problems) {
	if c.Slots < 1 || c.Slots > SlottedMaxSlots {
		bad.add("slotted.slots: %d, want 1..%d (15-minute slots)", c.Slots, SlottedMaxSlots)
	}
	if c.ReplanEvery < 1 || c.ReplanEvery > 96 {
		bad.add("slotted.replan_every: %d, want 1..96", c.ReplanEvery)
	}
	if c.Lookahead < c.ReplanEvery || c.Lookahead > 4*96 {
		bad.add("slotted.lookahead: %d, want replan_every (%d)..384", c.Lookahead, c.ReplanEvery)
	}
	if c.Nodes != nil {
		total := 0
		keys := make([]string, 0, len(c.Nodes))
		for k := range c.Nodes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			n := c.Nodes[k]
			if n < 0 || n > 4096 {
				bad.add("slotted.nodes.%s: %d, want 0..4096", k, n)
			}
			total += n
		}
		if total < 1 {
			bad.add("slotted.nodes: no nodes")
		}
	}
	switch j := c.Jobs; {
	case j.File != "" && j.Count != 0:
		bad.add("slotted.jobs: count and file both set, want one")
	case j.File == "" && (j.Count < 1 || j.Count > 100000):
		bad.add("slotted.jobs.count: %d, want 1..100000 (or a file)", j.Count)
	case j.File == "" && c.Slots < 96:
		bad.add("slotted.jobs.count: generated jobs need slots >= 96 (they arrive at Philly jobs' times of day); give a jobs file for a shorter horizon")
	}
	switch l := c.Inference; {
	case l.File != "" && l.ReqPerMin != 0:
		bad.add("slotted.inference: req_per_min and file both set, want one")
	case l.File == "" && !(l.ReqPerMin >= 0 && l.ReqPerMin <= 1e8):
		bad.add("slotted.inference.req_per_min: %v, want 0..1e8", l.ReqPerMin)
	}
	if err := c.PlanReading.Validate(); err != nil {
		bad.add("slotted.plan_reading: %q, want %s or %s", c.PlanReading, policy.Concentrate, policy.AsPlanned)
	}
	if len(c.Systems) == 0 {
		bad.add("slotted.systems: none")
	}
	resolve(c.Systems, SlottedSystems(), "slotted.systems", bad)
	for i, s := range c.Systems {
		if s.Predictions != "" || s.PowerLimit != nil {
			bad.add("slotted.systems[%d]: predictions and power_limit are not used by mode slotted", i)
		}
	}
}
