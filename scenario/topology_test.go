package scenario

import (
	"strings"
	"testing"

	"github.com/wattsched/wattsched/hw"
)

const topoHead = "name: t\nmode: replay\ntrace: {pods: p.csv}\npolicies:\n  - {name: A, scorers: [{policy: fgd, weight: 1}]}\n"

// topoBody is a row of two racks; the lines of the scenario are:
// 6 topology, 7 members (the first line of the section, named by errors
// about a node the members leave out), 8 n1, 9 n2, 10 n3, 11 domains, 12 row-a,
// 13 rack-1, 14 rack-2.
const topoBody = `topology:
  members:
    n1: rack-1
    n2: rack-1
    n3: rack-2
  domains:
    - {name: row-a, level: row, limit_w: 1000}
    - {name: rack-1, level: rack, parent: row-a, limit_w: 600}
    - {name: rack-2, level: rack, parent: row-a, limit_w: 300}
`

// The bad inputs of issue 43 that need no cluster are errors of Parse
// naming the file, the line of the domain or node at fault and the field.
func TestTopologyParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"cycle", "{name: row-a, level: row, limit_w: 1000}", "{name: row-a, parent: rack-1, limit_w: 1000}", `line 12: topology: domain "row-a": parent: cycle through`},
		{"unknown parent", "parent: row-a, limit_w: 300", "parent: row-b, limit_w: 300", `line 14: topology: domain "rack-2": parent: no domain "row-b"`},
		{"member of no declared domain", "n3: rack-2", "n3: rack-9", `line 10: topology: node "n3": domain: no domain "rack-9"`},
		{"zero limit", "limit_w: 600", "limit_w: 0", `line 13: topology: domain "rack-1": limit_w: 0 is not a positive`},
		{"duplicate name", "name: rack-2", "name: rack-1", `line 14: topology: domains[2].name: "rack-1" declared twice`},
		{"unknown field", "level: rack, parent: row-a, limit_w: 300", "level: rack, parent: row-a, limit: 300", "line 14: field limit not found"},
		{"report_above out of range", "  domains:\n", "  report_above: 1.5\n  domains:\n", "topology.report_above: 1.5, want (0, 1]"},
		{"report_above explicit zero", "  domains:\n", "  report_above: 0\n  domains:\n", "line 11: topology.report_above: 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := strings.Replace(topoBody, c.from, c.to, 1)
			if body == topoBody {
				t.Fatalf("%q not in the body", c.from)
			}
			_, err := Parse([]byte(topoHead+body), "s.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "s.yaml: ") {
				t.Errorf("error %v, want s.yaml: ... %q", err, c.want)
			}
		})
	}
	if _, err := Parse([]byte(strings.Replace(topoHead, "mode: replay\ntrace: {pods: p.csv}\npolicies:\n  - {name: A, scorers: [{policy: fgd, weight: 1}]}\n", "mode: coloc\ncoloc: {jobs: gavel-msr, nodes: 1, systems: [FIFO]}\n", 1)+topoBody), "s.yaml"); err == nil || !strings.Contains(err.Error(), "topology: only for modes inflation, replay, hpc and elastic") {
		t.Errorf("topology in mode coloc: got %v", err)
	}
}

// Binding against the cluster: a node in no domain and a limit below its
// nodes' idle power are errors with the line; children whose limits add
// up beyond their parent's are a warning with the parent's line.
func TestTopologyBind(t *testing.T) {
	s, err := Parse([]byte(topoHead+topoBody), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Topology.Above(); got != DefaultReportAbove {
		t.Errorf("report_above left out: %v, want %v", got, DefaultReportAbove)
	}
	idle := []hw.Watts{100, 100, 100}
	d, warn, err := s.BindTopology([]string{"n1", "n2", "n3"}, idle)
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 3 || len(warn) != 0 {
		t.Errorf("want 3 domains, no warning (600+300 <= 1000); got %d, %v", d.Len(), warn)
	}
	// A fourth node the members do not name.
	_, _, err = s.BindTopology([]string{"n1", "n2", "n3", "n4"}, append(idle, 100))
	if err == nil || err.Error() != `s.yaml: line 7: topology: node "n4": in no domain (every node needs one when domains are given)` {
		t.Errorf("node in no domain: got %v", err)
	}
	// rack-2 holds n3 alone: 300 W limit, 350 W idle.
	_, _, err = s.BindTopology([]string{"n1", "n2", "n3"}, []hw.Watts{100, 100, 350})
	if err == nil || !strings.HasPrefix(err.Error(), `s.yaml: line 14: topology: domain "rack-2": limit_w: 300 W is below its 1 nodes' idle power 350 W`) {
		t.Errorf("limit below idle: got %v", err)
	}
	over, err := Parse([]byte(topoHead+strings.Replace(topoBody, "limit_w: 300", "limit_w: 500", 1)), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, warn, err = over.BindTopology([]string{"n1", "n2", "n3"}, idle)
	if err != nil || len(warn) != 1 || !strings.HasPrefix(warn[0], `line 12: topology: domain "row-a": its children's limits add up to 1100 W, above its own 1000 W`) {
		t.Errorf("oversubscribed row: want one warning on line 12 (600+500 = 1100 W > 1000 W), got %v, %v", warn, err)
	}
}

// Variants over topologies: one replaces the scenario's topology, one
// removes it; bad ones are errors with their path.
func TestTopologyVariants(t *testing.T) {
	v := "variants:\n  - name: tight\n    topology:\n      members: {n1: r}\n      domains: [{name: r, limit_w: 200}]\n  - {name: none, no_topology: true}\n"
	s, err := Parse([]byte(topoHead+topoBody+v), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vs := s.CompareVariants()
	tight, none := s.WithVariant(vs[1]), s.WithVariant(vs[2])
	if tight.Topology == nil || len(tight.Topology.Domains) != 1 || tight.Topology.Domains[0].Limit != 200 || len(s.Topology.Domains) != 3 {
		t.Errorf("tight: %+v; the scenario keeps its 3 domains: %+v", tight.Topology, s.Topology)
	}
	if none.Topology != nil || s.Topology == nil {
		t.Error("no_topology: want the variant without and the scenario still with its topology")
	}
	// The variant's own lines: its domain r is on line 19.
	_, _, err = tight.BindTopology([]string{"n1"}, []hw.Watts{300})
	if err == nil || !strings.HasPrefix(err.Error(), `s.yaml: line 19: topology: domain "r": limit_w: 200 W is below`) {
		t.Errorf("variant's limit below idle: got %v", err)
	}
	for _, c := range []struct{ v, want string }{
		{"variants:\n  - name: x\n    topology: {domains: [{name: r, parent: r, limit_w: 5}]}\n", "variants[0].topology: domain \"r\": parent: cycle"},
		{"variants:\n  - {name: x, no_topology: true}\n", "variants[0].no_topology: the scenario has no topology"},
	} {
		head := topoHead
		if strings.Contains(c.v, "cycle") || strings.Contains(c.v, "r, parent") {
			head += topoBody
		}
		if _, err := Parse([]byte(head+c.v), "s.yaml"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.v, err, c.want)
		}
	}
}

// domain_weight is a weight of the domain-headroom term: 0 or more, and
// only with a topology (the scenario's or a variant's).
func TestDomainWeight(t *testing.T) {
	withW := strings.Replace(topoHead, "weight: 1}]}", "weight: 1}], domain_weight: 500}", 1)
	if _, err := Parse([]byte(withW+topoBody), "s.yaml"); err != nil {
		t.Errorf("with a topology: %v", err)
	}
	if _, err := Parse([]byte(withW), "s.yaml"); err == nil || !strings.Contains(err.Error(), "policies[0].domain_weight: 500, but neither the scenario nor a variant has a topology") {
		t.Errorf("without a topology: %v", err)
	}
	neg := strings.Replace(topoHead, "weight: 1}]}", "weight: 1}], domain_weight: -1}", 1)
	if _, err := Parse([]byte(neg+topoBody), "s.yaml"); err == nil || !strings.Contains(err.Error(), "policies[0].domain_weight: -1") {
		t.Errorf("negative: %v", err)
	}
}

// node_column names a column of a node-list CSV: modes with no such list
// refuse it, and a name that cannot be a CSV header is an error.
func TestTopologyNodeColumnModes(t *testing.T) {
	const topo = "topology:\n  node_column: rack\n  domains: [{name: r1, limit_w: 1000}]\n"
	if _, err := Parse([]byte("name: x\nmode: hpc\nhpc: {swf: nasa-ipsc}\n"+topo), "s.yaml"); err == nil || !strings.Contains(err.Error(), `topology.node_column: "rack": only for modes inflation and replay`) {
		t.Errorf("node_column in mode hpc: %v", err)
	}
	if _, err := Parse([]byte("name: x\nmode: replay\ntrace: {nodes: n.csv, pods: p.csv}\npolicies: [{name: A, scorers: [{policy: fgd, weight: 1}]}]\n"+strings.Replace(topo, "rack", "\"a,b\"", 1)), "s.yaml"); err == nil || !strings.Contains(err.Error(), "is not a column name") {
		t.Errorf("node_column \"a,b\": %v", err)
	}
}
