package tasks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	elgrid "github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
)

// CompareSystem is one (setting, policy) pair that compare runs on every
// seed: the report treats a variant like a policy.
type CompareSystem struct {
	// Variant indexes Scenario.CompareVariants, Policy Scenario.Policies.
	Variant, Policy int
}

// CompareSystems is what compare runs, in report order: every policy
// under the scenario's own settings and under each of its variants, then,
// for the automatic power-down variant, the first policy only (it says
// what power-down would change, at one policy's cost in runs).
func CompareSystems(s *scenario.Scenario) []CompareSystem {
	var out []CompareSystem
	for v, vs := range s.CompareVariants() {
		for p := range s.Policies {
			if vs.Automatic && p > 0 {
				break
			}
			out = append(out, CompareSystem{v, p})
		}
	}
	return out
}

// setting is one variant made ready to run: the scenario with its
// overrides, its catalog, its price account, its inputs (a copy: the
// checks record its pods that can never start) and recorded readings.
type setting struct {
	spec scenario.VariantSpec
	s    *scenario.Scenario
	env  *experiment.Env
	in   *Inputs
	acct *elgrid.Account
	rec  *recorded
}

// prepareSettings applies each variant and makes every check of a run on
// it (catalog, power limit, series coverage, pods that can never start,
// recorded readings) before any run; an error names the variant.
func prepareSettings(env *experiment.Env, s *scenario.Scenario, in *Inputs) ([]*setting, error) {
	var out []*setting
	for i, v := range s.CompareVariants() {
		st, err := prepareSetting(env, s, in, v, i == 0)
		if err != nil {
			if i == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("variants[%d] (%s): %w", i-1, v.Name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

func prepareSetting(env *experiment.Env, s *scenario.Scenario, in *Inputs, v scenario.VariantSpec, base bool) (*setting, error) {
	vs := s.WithVariant(v)
	e := *env
	var err error
	if e.Catalog, err = catalogFor(env, vs, v); err != nil {
		return nil, err
	}
	vin := in
	if !base {
		c := *in
		vin = &c
		// Warnings of the checks are the scenario's: a variant's own
		// never-start count is in the results, not printed again.
		e.Note = nil
		if v.MIG != nil || v.NoMIG {
			// The variant's MIG mode in place of the scenario's.
			c.Nodes = slices.Clone(in.Nodes)
			for i := range c.Nodes {
				c.Nodes[i].MIG = nil
			}
			if err := vs.ApplyMIG(c.Nodes); err != nil {
				return nil, err
			}
		}
	}
	if err := checkCatalog(e.Catalog, vin); err != nil {
		return nil, err
	}
	acct, err := vs.Account()
	if err != nil {
		return nil, err
	}
	rec, err := loadRecorded(vs, vin)
	if err != nil {
		return nil, err
	}
	if err := checkTasks(&e, vs, vin); err != nil {
		return nil, err
	}
	return &setting{spec: v, s: vs, env: &e, in: vin, acct: acct, rec: rec}, nil
}

// checkCatalog fails when a node's GPU or CPU model is not in the
// catalog, before any run (cluster.New says which and how to add it).
func checkCatalog(c *hw.Catalog, in *Inputs) error {
	_, err := clusterOf(c, in)
	return err
}

// ModelUsed is one hardware model a comparison's nodes use, as the
// catalog of one setting gives it: every figure the power model read,
// and where the entry came from.
type ModelUsed struct {
	Variant string `json:"variant"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	// Spelled is the model as the node list spells it, when that is an
	// alias of Name.
	Spelled string `json:"node_list_name,omitempty"`
	Nodes   int    `json:"nodes"`
	// Entry is the catalog entry (its figures and source), keyed as in a
	// catalog file.
	Entry map[string]any `json:"entry"`
}

// modelsUsed lists the GPU and CPU models of the nodes under each
// setting's catalog, in node order of first use; a setting whose catalog
// is the scenario's repeats nothing.
func modelsUsed(sets []*setting) ([]ModelUsed, error) {
	var out []ModelUsed
	for i, st := range sets {
		if i > 0 && st.spec.Catalog == "" && st.spec.Hardware == nil {
			continue
		}
		c, err := clusterOf(st.env.Catalog, st.in)
		if err != nil {
			return nil, err
		}
		var order []string
		spelled := map[string]string{}
		count := map[string]int{}
		entry := map[string]any{}
		for _, n := range c.Nodes {
			if n.GPU != nil {
				k := "gpu\x00" + n.GPU.Name
				if count[k] == 0 {
					order = append(order, k)
					if n.GPUModel != n.GPU.Name {
						spelled[k] = n.GPUModel
					}
					if entry[k], err = entryOf(*n.GPU); err != nil {
						return nil, err
					}
				}
				count[k]++
			}
			if n.CPU != nil {
				k := "cpu\x00" + n.CPU.Name
				if count[k] == 0 {
					order = append(order, k)
					if entry[k], err = entryOf(*n.CPU); err != nil {
						return nil, err
					}
				}
				count[k]++
			}
		}
		for _, k := range order {
			kind, name := "gpu", k[4:]
			if k[:3] == "cpu" {
				kind = "cpu"
			}
			out = append(out, ModelUsed{Variant: st.spec.Name, Kind: kind, Name: name, Spelled: spelled[k], Nodes: count[k], Entry: entry[k].(map[string]any)})
		}
	}
	return out, nil
}

// clusterOf is the inputs' nodes built with catalog c.
func clusterOf(c *hw.Catalog, in *Inputs) (*cluster.Cluster, error) {
	return cluster.New(c, in.Nodes)
}

// entryOf is a catalog entry as the catalog file spells it (its YAML
// keys), so that every figure of it is recorded under the name a user
// writes.
func entryOf(v any) (map[string]any, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("record catalog entry: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("record catalog entry: %w", err)
	}
	return m, nil
}

// variantNames lists the settings' names.
func variantNames(sets []*setting) []string {
	var out []string
	for _, st := range sets {
		out = append(out, st.spec.Name)
	}
	return slices.Clip(out)
}

// catalogFor is the catalog of a setting: the environment's, or, when the
// variant names its own catalog or hardware, the base catalog (embedded
// models and --catalog) with the variant's scenario's added.
func catalogFor(env *experiment.Env, vs *scenario.Scenario, v scenario.VariantSpec) (*hw.Catalog, error) {
	if v.Catalog == "" && v.Hardware == nil {
		return env.Catalog, nil
	}
	from := env.BaseCatalog
	if from == nil {
		from = env.Catalog
	}
	return vs.HardwareCatalog(from)
}

// settingCatalogs is every setting with its catalog, for the results
// (RunCompare has made the checks).
func settingCatalogs(env *experiment.Env, s *scenario.Scenario, in *Inputs) ([]*setting, error) {
	var out []*setting
	for _, v := range s.CompareVariants() {
		vs := s.WithVariant(v)
		c, err := catalogFor(env, vs, v)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.Name, err)
		}
		e := *env
		e.Catalog = c
		out = append(out, &setting{spec: v, s: vs, env: &e, in: in})
	}
	return out, nil
}

// settingsTable shows what each setting runs with: its power management,
// power limit, grid and PUE, catalog and hardware.
func settingsTable(sets []*setting, catalogFile string) report.Table {
	t := report.Table{Title: "Settings compared (variants: each replaces the scenario's fields it names)",
		Head: []string{"variant", "power_down", "power_limit", "grid", "PUE", "catalog and hardware"}}
	for _, st := range sets {
		s := st.s
		pd := "off"
		if p := s.PowerDown; p != nil {
			pd = fmt.Sprintf("idle_after_s %g, wake_s %g, off_w %g", p.IdleAfterS, p.WakeS, p.OffW)
			if st.spec.Automatic {
				pd += " (automatic: the values of examples/replay-powerdown.yaml, stand-ins, not measurements)"
			}
		}
		lim := "none"
		if l := s.PowerLimit; l != nil {
			if l.Watts > 0 {
				lim = fmt.Sprintf("%g W", l.Watts)
			} else {
				lim = fmt.Sprintf("%g x the GPUs' and CPUs' TDP", l.TDPFraction)
			}
		}
		g, pue := "default (embedded US-NY-NYIS 2023)", "1"
		if s.Grid != nil {
			var parts []string
			for _, f := range []struct{ k, v string }{{"region", s.Grid.Region}, {"start", s.Grid.Start}, {"price", s.Grid.Price}, {"carbon", s.Grid.Carbon}, {"carbon_basis", s.Grid.CarbonBasis}} {
				if f.v != "" {
					parts = append(parts, f.k+" "+f.v)
				}
			}
			if len(parts) > 0 {
				g = strings.Join(parts, ", ")
			}
			if s.Grid.PUE != 0 {
				pue = strconv.FormatFloat(s.Grid.PUE, 'g', -1, 64)
			}
		}
		var cat []string
		if catalogFile != "" {
			cat = append(cat, "--catalog "+catalogFile)
		}
		if s.Catalog != "" {
			cat = append(cat, "catalog "+s.Catalog)
		}
		if s.Hardware != nil {
			var names []string
			for _, m := range s.Hardware.GPUs {
				names = append(names, m.Name)
			}
			for _, m := range s.Hardware.CPUs {
				names = append(names, m.Name)
			}
			cat = append(cat, "hardware: "+strings.Join(names, ", "))
		}
		if len(cat) == 0 {
			cat = []string{"embedded catalog"}
		}
		t.Rows = append(t.Rows, []string{st.spec.Name, pd, lim, g, pue, strings.Join(cat, "; ")})
	}
	return t
}

// modelsTable shows every hardware model the nodes use, with the figures
// the power model reads and their source.
func modelsTable(models []ModelUsed) report.Table {
	t := report.Table{Title: "Hardware models used (catalog entries; summary.json models_used has every field)",
		Head: []string{"variant", "kind", "model", "node list name", "nodes", "idle W", "TDP W", "curve", "source"}}
	str := func(v any) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprint(v)
	}
	for _, m := range models {
		curve := "-"
		if c, ok := m.Entry["curve"].([]any); ok && len(c) > 0 {
			var pts []string
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					pts = append(pts, fmt.Sprintf("%v: %v W", pm["share"], pm["watts"]))
				}
			}
			curve = strings.Join(pts, ", ")
		}
		sp := m.Spelled
		if sp == "" {
			sp = m.Name
		}
		t.Rows = append(t.Rows, []string{m.Variant, m.Kind, m.Name, sp, strconv.Itoa(m.Nodes), str(m.Entry["idle_w"]), str(m.Entry["tdp_w"]), curve, str(m.Entry["source"])})
	}
	return t
}
