package hw

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MIGProfile is one GPU instance profile of a MIG-capable GPU: the compute
// and memory slices it takes, how many instances of it one GPU holds at
// most, and the memory slices an instance of it may start at.
type MIGProfile struct {
	Name    string `yaml:"name"`    // 3g.20gb
	Compute int    `yaml:"compute"` // compute slices
	Memory  int    `yaml:"memory"`  // memory slices (the placement size)
	Max     int    `yaml:"max"`     // instances per GPU at most
	Starts  []int  `yaml:"starts"`  // legal start memory slices
}

// AllowsStart reports whether an instance of p may start at memory slice s.
func (p *MIGProfile) AllowsStart(s int) bool { return slices.Contains(p.Starts, s) }

// MIGGeometry is what a MIG-capable GPU product can be partitioned into
// (hw/mig.yaml gives the sources).
type MIGGeometry struct {
	Name          string       `yaml:"name"`   // A100-SXM4-40GB
	Models        []string     `yaml:"models"` // catalog GPU models it applies to
	ComputeSlices int          `yaml:"compute_slices"`
	MemorySlices  int          `yaml:"memory_slices"`
	Profiles      []MIGProfile `yaml:"profiles"`
}

// Profile finds a profile by name.
func (g *MIGGeometry) Profile(name string) (*MIGProfile, bool) {
	for i := range g.Profiles {
		if g.Profiles[i].Name == name {
			return &g.Profiles[i], true
		}
	}
	return nil, false
}

// ProfileNames are the geometry's profile names, in table order.
func (g *MIGGeometry) ProfileNames() []string {
	out := make([]string, len(g.Profiles))
	for i, p := range g.Profiles {
		out[i] = p.Name
	}
	return out
}

//go:embed mig.yaml
var migData []byte

// SmallestProfileFor is the profile a stand-in GPU share of milli
// milli-GPU maps to: the one with the fewest compute slices c whose
// share c / ComputeSlices is at least milli/1000 (a task never gets less
// compute than its share), among those the fewest memory slices, then
// the first by name; media-extension profiles (+me) are left out. ok is
// false for a share above every profile's (none: a whole GPU is 1000).
func (g *MIGGeometry) SmallestProfileFor(milli int64) (p *MIGProfile, ok bool) {
	for i := range g.Profiles {
		q := &g.Profiles[i]
		if strings.HasSuffix(q.Name, "+me") || int64(q.Compute)*1000 < milli*int64(g.ComputeSlices) {
			continue
		}
		if p == nil || q.Compute < p.Compute || q.Compute == p.Compute && (q.Memory < p.Memory || q.Memory == p.Memory && q.Name < p.Name) {
			p = q
		}
	}
	return p, p != nil
}

// MIGGeometries are the embedded MIG geometries, checked.
func MIGGeometries() []MIGGeometry {
	gs, err := ParseMIG(migData)
	if err != nil {
		panic(fmt.Sprintf("embedded MIG table: %v", err))
	}
	return gs
}

// MIGFor finds the geometry of a MIG product (A100-SXM4-40GB) or of a
// catalog GPU model it applies to (A100).
func MIGFor(name string) (*MIGGeometry, bool) {
	gs := MIGGeometries()
	for i := range gs {
		if gs[i].Name == name || slices.Contains(gs[i].Models, name) {
			return &gs[i], true
		}
	}
	return nil, false
}

// ParseMIG decodes a MIG table strictly and checks every profile: slices
// within the GPU's, starts that keep the instance on the GPU, and max
// instances that fit the GPU's compute slices.
func ParseMIG(data []byte) ([]MIGGeometry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc struct {
		MIGs []MIGGeometry `yaml:"migs"`
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode MIG table: %w", err)
	}
	seen := map[string]bool{}
	for i, g := range doc.MIGs {
		where := fmt.Sprintf("migs[%d] (%s)", i, g.Name)
		if g.Name == "" || seen[g.Name] {
			return nil, fmt.Errorf("%s: name empty or repeated", where)
		}
		seen[g.Name] = true
		if g.ComputeSlices <= 0 || g.MemorySlices <= 0 {
			return nil, fmt.Errorf("%s: compute_slices %d, memory_slices %d: want positive", where, g.ComputeSlices, g.MemorySlices)
		}
		names := map[string]bool{}
		for j, p := range g.Profiles {
			pw := fmt.Sprintf("%s.profiles[%d] (%s)", where, j, p.Name)
			switch {
			case p.Name == "" || names[p.Name]:
				return nil, fmt.Errorf("%s: name empty or repeated", pw)
			case p.Compute <= 0 || p.Compute > g.ComputeSlices:
				return nil, fmt.Errorf("%s: compute %d: want 1..%d", pw, p.Compute, g.ComputeSlices)
			case p.Memory <= 0 || p.Memory > g.MemorySlices:
				return nil, fmt.Errorf("%s: memory %d: want 1..%d", pw, p.Memory, g.MemorySlices)
			case p.Max <= 0 || p.Max*p.Compute > g.ComputeSlices:
				return nil, fmt.Errorf("%s: max %d: want 1..%d", pw, p.Max, g.ComputeSlices/p.Compute)
			case len(p.Starts) == 0:
				return nil, fmt.Errorf("%s: no starts", pw)
			}
			names[p.Name] = true
			for _, s := range p.Starts {
				if s < 0 || s+p.Memory > g.MemorySlices {
					return nil, fmt.Errorf("%s: start %d: an instance of %d memory slices must lie in 0..%d", pw, s, p.Memory, g.MemorySlices-1)
				}
			}
		}
	}
	return doc.MIGs, nil
}

// MIGProfileFor finds MIG profile for a task that accepts the GPU models
// models (catalog names, aliases or MIG product names; none: any model):
// the profile as the accepted models' geometries define it, and its share
// of its GPU in milli-GPU (compute slices x 1000 / the GPU's compute
// slices, rounded down, at least 1), what capacity totals count for one
// instance. It is an error when no accepted model has the profile, or when
// two accepted models give it different shares. Accepted models without a
// MIG geometry are passed over: such a task never lands on them.
func MIGProfileFor(cat *Catalog, models []string, profile string) (MIGProfile, int64, error) {
	var geoms []*MIGGeometry
	if len(models) == 0 {
		gs := MIGGeometries()
		for i := range gs {
			geoms = append(geoms, &gs[i])
		}
	}
	for _, m := range models {
		if g, ok := MIGFor(m); ok {
			geoms = append(geoms, g)
			continue
		}
		if cat != nil {
			if gm, err := cat.GPU(m); err == nil {
				if g, ok := MIGFor(gm.Name); ok {
					geoms = append(geoms, g)
				}
			}
		}
	}
	var found MIGProfile
	var milli int64
	var from string
	for _, g := range geoms {
		p, ok := g.Profile(profile)
		if !ok {
			continue
		}
		m := max(int64(p.Compute)*1000/int64(g.ComputeSlices), 1)
		if from != "" && m != milli {
			return MIGProfile{}, 0, fmt.Errorf("MIG profile %s: %d milli-GPU on %s, %d on %s: the accepted models disagree", profile, milli, from, m, g.Name)
		}
		if from == "" {
			found, milli, from = *p, m, g.Name
		}
	}
	if from != "" {
		return found, milli, nil
	}
	var offered []string
	for _, g := range geoms {
		offered = append(offered, fmt.Sprintf("%s has %s", g.Name, strings.Join(g.ProfileNames(), ", ")))
	}
	switch {
	case len(models) == 0:
		return MIGProfile{}, 0, fmt.Errorf("MIG profile %q: no MIG GPU has it (%s; hw/mig.yaml)", profile, strings.Join(offered, "; "))
	case len(geoms) == 0:
		return MIGProfile{}, 0, fmt.Errorf("MIG profile %q: none of the accepted GPU models (%s) has MIG (hw/mig.yaml)", profile, strings.Join(models, ", "))
	}
	return MIGProfile{}, 0, fmt.Errorf("MIG profile %q: none of the accepted GPU models (%s) has it (%s; hw/mig.yaml)", profile, strings.Join(models, ", "), strings.Join(offered, "; "))
}
