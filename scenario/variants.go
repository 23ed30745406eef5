package scenario

import (
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/hw"
)

// VariantSpec is one setting of the cluster that compare crosses with the
// scenario's policies (mode replay): a name and the scenario fields it
// overrides. A field left out keeps the scenario's value; a field set
// replaces the scenario's whole value (grid replaces the grid section, pue
// only grid.pue, catalog the scenario's catalog file, hardware its
// hardware section, topology its topology); no_power_down,
// no_power_limit and no_topology remove the scenario's power_down,
// power_limit and topology.
type VariantSpec struct {
	Name         string         `yaml:"name" json:"name"`
	PowerDown    *PowerDownSpec `yaml:"power_down" json:"power_down,omitempty"`
	NoPowerDown  bool           `yaml:"no_power_down" json:"no_power_down,omitempty"`
	PowerLimit   *Limit         `yaml:"power_limit" json:"power_limit,omitempty"`
	NoPowerLimit bool           `yaml:"no_power_limit" json:"no_power_limit,omitempty"`
	PUE          float64        `yaml:"pue" json:"pue,omitempty"`
	Catalog      string         `yaml:"catalog" json:"catalog,omitempty"`
	Hardware     *hw.Catalog    `yaml:"hardware" json:"hardware,omitempty"`
	Grid         *GridSpec      `yaml:"grid" json:"grid,omitempty"`
	// Topology replaces the scenario's power topology; NoTopology removes it.
	Topology   *TopologySpec `yaml:"topology" json:"topology,omitempty"`
	NoTopology bool          `yaml:"no_topology" json:"no_topology,omitempty"`
	// MIG replaces the scenario's mig section (nodes in MIG mode); NoMIG
	// removes it.
	MIG   []MIGGroup `yaml:"mig" json:"mig,omitempty"`
	NoMIG bool       `yaml:"no_mig" json:"no_mig,omitempty"`
	// Automatic marks the power-down variant compare adds when the
	// scenario has none (never set from a file).
	Automatic bool `yaml:"-" json:"automatic,omitempty"`
}

// validateVariants names every bad field of the variants list.
func (s *Scenario) validateVariants(bad *problems) {
	if len(s.Variants) == 0 {
		return
	}
	if s.Mode != Replay {
		bad.add("variants: only for mode replay (compare crosses them with the policies)")
		return
	}
	names := map[string]bool{}
	for i, v := range s.Variants {
		p := fmt.Sprintf("variants[%d]", i)
		if v.Name == "" {
			bad.add("%s.name: empty", p)
		}
		if names[v.Name] {
			bad.add("%s.name: duplicate %q", p, v.Name)
		}
		names[v.Name] = true
		if v.PowerDown != nil && v.NoPowerDown {
			bad.add("%s: power_down and no_power_down both set, want one", p)
		}
		if v.PowerLimit != nil && v.NoPowerLimit {
			bad.add("%s: power_limit and no_power_limit both set, want one", p)
		}
		if v.NoPowerDown && s.PowerDown == nil {
			bad.add("%s.no_power_down: the scenario has no power_down to remove", p)
		}
		if v.NoPowerLimit && s.PowerLimit == nil {
			bad.add("%s.no_power_limit: the scenario has no power_limit to remove", p)
		}
		if v.PUE != 0 && !(v.PUE >= 1 && v.PUE <= 3) {
			bad.add("%s.pue: %v, want 1..3", p, v.PUE)
		}
		if v.Grid != nil && v.Grid.PUE != 0 && v.PUE != 0 {
			bad.add("%s: pue and grid.pue both set, want one", p)
		}
		if v.Grid != nil && v.Grid.PUE != 0 && !(v.Grid.PUE >= 1 && v.Grid.PUE <= 3) {
			bad.add("%s.grid.pue: %v, want 1..3", p, v.Grid.PUE)
		}
		if v.Topology != nil && v.NoTopology {
			bad.add("%s: topology and no_topology both set, want one", p)
		}
		if v.NoTopology && s.Topology == nil {
			bad.add("%s.no_topology: the scenario has no topology to remove", p)
		}
		v.Topology.validate(p+".topology", bad)
		if v.MIG != nil && v.NoMIG {
			bad.add("%s: mig and no_mig both set, want one", p)
		}
		if v.NoMIG && s.MIG == nil {
			bad.add("%s.no_mig: the scenario has no mig to remove", p)
		}
		validateMIG(v.MIG, s.Mode, p+".mig", s.variantMIG(i), bad)
		v.PowerDown.validateAt(p+".power_down", bad)
		v.PowerLimit.validate(p+".power_limit", bad)
		if s.Measured != nil && v.PowerDown != nil {
			bad.add("%s.power_down: not with measured (the recording was made with every node on)", p)
		}
		if v.MIG == nil && !v.NoMIG && v.Topology == nil && !v.NoTopology && v.PowerDown == nil && !v.NoPowerDown && v.PowerLimit == nil &&
			!v.NoPowerLimit && v.PUE == 0 && v.Catalog == "" && v.Hardware == nil && v.Grid == nil {
			bad.add("%s (%s): overrides nothing; the scenario's own settings are already compared as %q", p, v.Name, BaseVariant)
		}
	}
	if names[BaseVariant] {
		bad.add("variants: name %q is the scenario's own settings; give the variant another name", BaseVariant)
	}
}

// BaseVariant names the scenario's own settings among its variants.
const BaseVariant = "as configured"

// AutoPowerDown is the power management of the variant compare adds when
// no variant and not the scenario powers idle nodes off: the settings of
// the examples (examples/replay-powerdown.yaml): off after 10 minutes
// empty, 2 minutes to wake, 10 W while off (a BMC). They are stand-in
// values, not measurements of any machine.
var AutoPowerDown = PowerDownSpec{IdleAfterS: 600, WakeS: 120, OffW: 10}

// AutoPowerDownName names the variant compare adds.
const AutoPowerDownName = "power-down (automatic)"

// HasPowerDown reports whether the scenario or one of its variants powers
// idle nodes off.
func (s *Scenario) HasPowerDown() bool {
	if s.PowerDown != nil {
		return true
	}
	for _, v := range s.Variants {
		if v.PowerDown != nil {
			return true
		}
	}
	return false
}

// CompareVariants is the list of settings compare runs: the scenario's
// own first (named BaseVariant), then its variants in order, then, when
// none of them powers idle nodes off and the scenario replays no measured
// power, the automatic power-down variant.
func (s *Scenario) CompareVariants() []VariantSpec {
	out := append([]VariantSpec{{Name: BaseVariant}}, s.Variants...)
	if !s.HasPowerDown() && s.Measured == nil {
		out = append(out, VariantSpec{Name: AutoPowerDownName, PowerDown: &AutoPowerDown, Automatic: true})
	}
	return out
}

// WithVariant is a copy of the scenario with the variant's overrides
// applied and no variants of its own; relative paths of the variant
// resolve from the scenario file's directory, as the scenario's do.
func (s *Scenario) WithVariant(v VariantSpec) *Scenario {
	c := *s
	c.Variants = nil
	if v.PowerDown != nil {
		pd := *v.PowerDown
		c.PowerDown = &pd
	}
	if v.NoPowerDown {
		c.PowerDown = nil
	}
	if v.PowerLimit != nil {
		l := *v.PowerLimit
		c.PowerLimit = &l
	}
	if v.NoPowerLimit {
		c.PowerLimit = nil
	}
	if v.Topology != nil {
		c.Topology = v.Topology
	}
	if v.NoTopology {
		c.Topology = nil
	}
	if v.MIG != nil {
		i := slices.IndexFunc(s.Variants, func(x VariantSpec) bool { return x.Name == v.Name })
		c.MIG, c.migLines, c.migPath = v.MIG, migLines{}, "variant "+v.Name+" mig"
		if i >= 0 {
			c.migLines, c.migPath = s.variantMIG(i), fmt.Sprintf("variants[%d].mig", i)
		}
	}
	if v.NoMIG {
		c.MIG = nil
	}
	if v.Grid != nil {
		g := *v.Grid
		c.Grid = &g
	}
	if v.PUE != 0 {
		g := GridSpec{}
		if c.Grid != nil {
			g = *c.Grid
		}
		g.PUE = v.PUE
		c.Grid = &g
	}
	if v.Catalog != "" {
		c.Catalog = v.Catalog
	}
	if v.Hardware != nil {
		c.Hardware = v.Hardware
	}
	return &c
}
