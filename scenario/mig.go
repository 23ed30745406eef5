package scenario

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
)

// MIGGroup puts the GPUs of a group of nodes in MIG mode (modes replay and
// inflation; docs/scenarios.md#mig-partitions). The nodes are named
// (Nodes) or all those of a GPU model (GPUModel, as the node list spells
// it); the mode is one of: the single strategy (Profile: every GPU cut
// into as many instances of it as fit, at its legal starts from the
// lowest, as NVIDIA's device plugin's single strategy does), an explicit
// layout (Instances, the same on every GPU of the nodes), one layout per
// GPU (Layouts, in device order: what import k8s writes), or dynamic MIG
// (Dynamic: a task's instance is created at a legal free start when it
// starts and destroyed when it ends, a policy choosing where).
type MIGGroup struct {
	Nodes     []string        `yaml:"nodes" json:"nodes,omitempty"`
	GPUModel  string          `yaml:"gpu_model" json:"gpu_model,omitempty"`
	Profile   string          `yaml:"profile" json:"profile,omitempty"`
	Instances []MIGInstance   `yaml:"instances" json:"instances,omitempty"`
	Layouts   [][]MIGInstance `yaml:"layouts" json:"layouts,omitempty"`
	Dynamic   bool            `yaml:"dynamic" json:"dynamic,omitempty"`
}

// MIGInstance is one GPU instance of an explicit layout: a profile at a
// start memory slice (hw/mig.yaml lists each profile's legal starts).
type MIGInstance struct {
	Profile string `yaml:"profile" json:"profile"`
	Start   *int   `yaml:"start" json:"start"`
}

// migLines are where the mig section and each group were declared.
type migLines struct {
	file    string
	section int
	group   []int
}

// at is "line N: " for group i (the section when i < 0), "" when unknown.
func (l migLines) at(i int) string {
	line := l.section
	if i >= 0 && i < len(l.group) {
		line = l.group[i]
	}
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf("line %d: ", line)
}

// newMIGLines notes where a mig section n and its groups were declared.
func newMIGLines(file string, n *yaml.Node) migLines {
	if n == nil {
		return migLines{file: file}
	}
	l := migLines{file: file, section: n.Line}
	for _, c := range resolveSeq(n) {
		l.group = append(l.group, c.Line)
	}
	return l
}

// variantMIG is where variant i's mig section was declared (none known
// for a scenario built in code).
func (s *Scenario) variantMIG(i int) migLines {
	if i < len(s.variantMIGLines) {
		return s.variantMIGLines[i]
	}
	return migLines{file: s.migLines.file}
}

// validateMIG checks what needs no node list: modes, one selector and one
// layout kind per group, instances with a profile and a start.
func validateMIG(groups []MIGGroup, mode Mode, path string, lines migLines, bad *problems) {
	if groups == nil {
		return
	}
	if mode != Replay && mode != Inflation {
		bad.add("%s%s: only for modes replay and inflation (GPU tasks placed on nodes)", lines.at(-1), path)
		return
	}
	if len(groups) == 0 {
		bad.add("%s%s: empty (leave it out for no MIG)", lines.at(-1), path)
	}
	for i, g := range groups {
		p := fmt.Sprintf("%s%s[%d]", lines.at(i), path, i)
		if (len(g.Nodes) > 0) == (g.GPUModel != "") {
			bad.add("%s: give nodes or gpu_model, one of them", p)
		}
		kinds := 0
		for _, set := range []bool{g.Profile != "", len(g.Instances) > 0, len(g.Layouts) > 0, g.Dynamic} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			bad.add("%s: give one of profile (single strategy), instances (an explicit layout), layouts (one per GPU) or dynamic: true", p)
		}
		for j, in := range g.Instances {
			if in.Profile == "" || in.Start == nil {
				bad.add("%s.instances[%d]: want a profile and a start memory slice", p, j)
			}
		}
		for k, l := range g.Layouts {
			for j, in := range l {
				if in.Profile == "" || in.Start == nil {
					bad.add("%s.layouts[%d][%d]: want a profile and a start memory slice", p, k, j)
				}
			}
		}
		for j, n := range g.Nodes {
			if slices.Contains(g.Nodes[:j], n) {
				bad.add("%s.nodes: %s twice", p, n)
			}
		}
	}
}

// HasMIG reports whether the scenario or one of its variants puts nodes
// in MIG mode.
func (s *Scenario) HasMIG() bool {
	if s.MIG != nil {
		return true
	}
	for _, v := range s.Variants {
		if v.MIG != nil {
			return true
		}
	}
	return false
}

// migGeometryOf finds the MIG geometry of a GPU model as a node list
// spells it: a geometry's own name, a catalog model it applies to, or a
// catalog alias of one (G3 is the A100).
func migGeometryOf(model string) (*hw.MIGGeometry, bool) {
	if g, ok := hw.MIGFor(strings.TrimPrefix(model, "NVIDIA-")); ok {
		return g, true
	}
	if m, err := hw.Default().GPU(model); err == nil {
		return hw.MIGFor(m.Name)
	}
	return nil, false
}

// ApplyMIG puts the nodes the scenario's mig groups select in MIG mode
// (cluster.NodeSpec.MIG), checking each layout against its GPU model's
// geometry and placement rules. The errors name the scenario file, the
// line and the field: a group selecting no node, a node in two groups, a
// model without MIG, a profile the model does not have, a layout that
// breaks the placement rules.
func (s *Scenario) ApplyMIG(nodes []cluster.NodeSpec) error {
	path := s.migPath
	if path == "" {
		path = "mig"
	}
	return applyMIG(s.MIG, path, s.migLines, s.Name, nodes)
}

func applyMIG(groups []MIGGroup, path string, lines migLines, name string, nodes []cluster.NodeSpec) error {
	if groups == nil {
		return nil
	}
	file := lines.file
	if file == "" {
		file = "scenario " + name
	}
	fail := func(i int, f string, a ...any) error {
		return fmt.Errorf("%s: %s%s[%d]: %s", file, lines.at(i), path, i, fmt.Sprintf(f, a...))
	}
	by := map[string]int{}
	for i := range nodes {
		by[nodes[i].Name] = i
	}
	owner := make([]int, len(nodes))
	for i := range owner {
		owner[i] = -1
	}
	for gi, g := range groups {
		var sel []int
		if g.GPUModel != "" {
			for i, n := range nodes {
				if n.GPUModel == g.GPUModel && n.GPUs > 0 {
					sel = append(sel, i)
				}
			}
			if len(sel) == 0 {
				return fail(gi, "gpu_model %s: no node with GPUs has it", g.GPUModel)
			}
		}
		for _, name := range g.Nodes {
			i, ok := by[name]
			if !ok {
				return fail(gi, "nodes: no node %s in the node list", name)
			}
			if nodes[i].GPUs == 0 {
				return fail(gi, "nodes: node %s has no GPUs", name)
			}
			sel = append(sel, i)
		}
		for _, i := range sel {
			n := &nodes[i]
			if owner[i] >= 0 {
				return fail(gi, "node %s is already in MIG mode by %s[%d]", n.Name, path, owner[i])
			}
			owner[i] = gi
			geo, ok := migGeometryOf(n.GPUModel)
			if !ok {
				return fail(gi, "node %s: GPU model %s has no MIG geometry (hw/mig.yaml: %s)", n.Name, n.GPUModel, strings.Join(geometryNames(), ", "))
			}
			spec := &cluster.MIGSpec{Dynamic: g.Dynamic}
			var layout []cluster.MIGSlot
			switch {
			case g.Profile != "":
				l, err := cluster.SingleLayout(geo, g.Profile)
				if err != nil {
					return fail(gi, "profile: node %s: %v", n.Name, err)
				}
				layout = l
			case len(g.Instances) > 0:
				for _, in := range g.Instances {
					layout = append(layout, cluster.MIGSlot{Profile: in.Profile, Start: *in.Start})
				}
				if _, err := cluster.NewMIGGPU(geo, layout, false); err != nil {
					return fail(gi, "instances: node %s: %v", n.Name, err)
				}
			}
			switch {
			case len(g.Layouts) > 0:
				if len(g.Layouts) != n.GPUs {
					return fail(gi, "layouts: %d, node %s has %d GPUs: want one per GPU", len(g.Layouts), n.Name, n.GPUs)
				}
				for k, l := range g.Layouts {
					var gl []cluster.MIGSlot
					for _, in := range l {
						gl = append(gl, cluster.MIGSlot{Profile: in.Profile, Start: *in.Start})
					}
					if _, err := cluster.NewMIGGPU(geo, gl, false); err != nil {
						return fail(gi, "layouts[%d]: node %s: %v", k, n.Name, err)
					}
					spec.Layouts = append(spec.Layouts, gl)
				}
			case !g.Dynamic:
				for range n.GPUs {
					spec.Layouts = append(spec.Layouts, layout)
				}
			}
			n.MIG = spec
		}
	}
	return nil
}

func geometryNames() []string {
	var out []string
	for _, g := range hw.MIGGeometries() {
		out = append(out, g.Name)
	}
	return out
}
