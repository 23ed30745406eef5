package scenario

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
)

// DefaultReportAbove is the threshold of a topology's "time above" report
// when report_above is left out: 90% of each domain's limit.
const DefaultReportAbove = 0.9

// TopologySpec is the scenario's power topology (docs/scenarios.md, "Power
// domains"): nested domains (rack, PDU, row...) each with a limit in
// watts, and which innermost domain each node belongs to. Every engine
// that enforces a power limit enforces each domain's limit beside the
// cluster's.
type TopologySpec struct {
	// NodeColumn names a column of the node list (trace.nodes, a CSV)
	// whose value is each node's innermost domain; Members overrides it
	// node by node. Modes inflation and replay only.
	NodeColumn string `yaml:"node_column" json:"node_column,omitempty"`
	// Members maps a node's name to its innermost domain.
	Members map[string]string `yaml:"members" json:"members,omitempty"`
	// Domains are the domains, parents before or after their children.
	Domains []power.Domain `yaml:"domains" json:"domains"`
	// ReportAbove is the fraction of each limit above which the reports
	// count time (0: DefaultReportAbove).
	ReportAbove float64 `yaml:"report_above" json:"report_above,omitempty"`

	// lines are where the section, each domain and each member were
	// declared (decode; empty for a scenario built in code).
	lines topologyLines
}

type topologyLines struct {
	file    string
	section int
	domain  []int
	member  map[string]int
}

// Above is the report threshold as a fraction of each domain's limit.
func (t *TopologySpec) Above() float64 {
	if t == nil || t.ReportAbove == 0 {
		return DefaultReportAbove
	}
	return t.ReportAbove
}

// Topology is the spec as a power.Topology (nil for no spec).
func (t *TopologySpec) Topology() *power.Topology {
	if t == nil {
		return nil
	}
	return &power.Topology{Domains: slices.Clone(t.Domains), Member: t.Members}
}

// validate checks what needs no cluster: names, limits, parents, cycles,
// members naming declared domains, report_above. The nodes are bound
// (and checked to be in a domain, and against the domains' idle power)
// when the cluster is known (Bind).
func (t *TopologySpec) validate(path string, bad *problems) {
	if t == nil {
		return
	}
	if c := t.NodeColumn; c != "" && (strings.TrimSpace(c) != c || strings.ContainsAny(c, ",\"\n\r")) {
		bad.add("%s%s.node_column: %q is not a column name (no spaces around it, no comma, quote or line break)", t.lines.at(-1, ""), path, c)
	}
	if len(t.Domains) == 0 {
		bad.add("%s%s.domains: none (a topology needs at least one domain)", t.lines.at(-1, ""), path)
		return
	}
	if t.ReportAbove != 0 && !(t.ReportAbove > 0 && t.ReportAbove <= 1) {
		bad.add("%s.report_above: %v, want (0, 1] (a fraction of each domain's limit)", path, t.ReportAbove)
	}
	// Bind with the members as the nodes, idle at 0 W: every check that
	// does not need the cluster.
	names := make([]string, 0, len(t.Members))
	for n := range t.Members {
		names = append(names, n)
	}
	sort.Strings(names)
	if _, _, err := t.Topology().Bind(names, make([]hw.Watts, len(names))); err != nil {
		bad.add("%s", t.lines.wrap(path, err))
	}
}

// at is "line N: " for domain i (or node, or the section when i < 0 and
// node is empty), "" when the line is unknown.
func (l topologyLines) at(i int, node string) string {
	line := l.section
	switch {
	case node != "" && l.member[node] > 0:
		line = l.member[node]
	case i >= 0 && i < len(l.domain):
		line = l.domain[i]
	}
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf("line %d: ", line)
}

// wrap puts the line of the domain or node a Bind error is about, and the
// section's path, before it.
func (l topologyLines) wrap(path string, err error) string {
	var te *power.TopologyError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s%s: %s", l.at(te.Index, te.Node), path, te.Msg)
	}
	return fmt.Sprintf("%s%s: %v", l.at(-1, ""), path, err)
}

// recordLines notes where the topology's parts were declared, for errors
// found after decoding (Bind against the cluster).
func (t *TopologySpec) recordLines(file string, n *yaml.Node) {
	if t == nil || n == nil {
		return
	}
	t.lines = topologyLines{file: file, section: n.Line, member: map[string]int{}}
	if d := lookup(n, "domains"); d != nil {
		for _, c := range resolveSeq(d) {
			t.lines.domain = append(t.lines.domain, c.Line)
		}
	}
	if m := lookup(n, "members"); m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			t.lines.member[m.Content[i].Value] = m.Content[i].Line
		}
	}
}

func resolveSeq(n *yaml.Node) []*yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

// Bind binds the scenario's topology (nil: none) to a cluster's nodes,
// named names and idle at idle watts (same order): the errors name the
// scenario file, the line and the field; the warnings are Bind's
// (children whose limits add up beyond their parent's, a domain with no
// node), each as one line.
func (s *Scenario) BindTopology(names []string, idle []hw.Watts) (*power.Domains, []string, error) {
	return s.BindTopologyColumn(names, idle, nil)
}

// BindTopologyColumn is BindTopology where column gives node names'
// innermost domains (the node list's node_column; an empty value gives
// none), each overridden by the topology's members.
func (s *Scenario) BindTopologyColumn(names []string, idle []hw.Watts, column map[string]string) (*power.Domains, []string, error) {
	t := s.Topology
	if t == nil {
		return nil, nil, nil
	}
	topo := t.Topology()
	if len(column) > 0 {
		m := make(map[string]string, len(column)+len(t.Members))
		for n, d := range column {
			if d != "" {
				m[n] = d
			}
		}
		for n, d := range t.Members {
			m[n] = d
		}
		topo.Member = m
	}
	d, warn, err := topo.Bind(names, idle)
	if err != nil {
		file := t.lines.file
		if file == "" {
			file = "scenario " + s.Name
		}
		return nil, nil, fmt.Errorf("%s: %s", file, t.lines.wrap("topology", err))
	}
	var out []string
	for _, w := range warn {
		idx := slices.IndexFunc(t.Domains, func(x power.Domain) bool { return x.Name == w.Domain })
		out = append(out, fmt.Sprintf("%stopology: %s", t.lines.at(idx, ""), w))
	}
	return d, out, nil
}

// NodeColumns are the node-list columns the scenario's topology and its
// variants' name (node_column), sorted, without repeats.
func (s *Scenario) NodeColumns() []string {
	var out []string
	add := func(t *TopologySpec) {
		if t != nil && t.NodeColumn != "" && !slices.Contains(out, t.NodeColumn) {
			out = append(out, t.NodeColumn)
		}
	}
	add(s.Topology)
	for i := range s.Variants {
		add(s.Variants[i].Topology)
	}
	slices.Sort(out)
	return out
}

// hasLevel reports whether the scenario's topology or a variant's has a
// domain of level.
func (s *Scenario) hasLevel(level string) bool {
	has := func(t *TopologySpec) bool {
		return t != nil && slices.ContainsFunc(t.Domains, func(d power.Domain) bool { return d.Level == level })
	}
	if has(s.Topology) {
		return true
	}
	for i := range s.Variants {
		if has(s.Variants[i].Topology) {
			return true
		}
	}
	return false
}

// hasTopology reports whether the scenario or one of its variants has a
// topology.
func (s *Scenario) hasTopology() bool {
	if s.Topology != nil {
		return true
	}
	for _, v := range s.Variants {
		if v.Topology != nil {
			return true
		}
	}
	return false
}
