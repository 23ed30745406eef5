package tasks_test

import (
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/experiment/tasks"
)

// StableRank: adding nodes keeps the others' relative order (what
// cluster.TieRank does not promise), the order does not depend on the
// nodes' positions, and another seed gives another order.
func TestStableRankKeepsOrderWhenNodesJoin(t *testing.T) {
	small := clustertest.New().Node("a").Node("b").Node("c").Node("d").Node("e").Build()
	big := clustertest.New().Node("e").Node("x1").Node("d").Node("c").Node("x2").Node("b").Node("a").Build()
	order := func(nodes []*cluster.Node, seed uint64) []string {
		r := tasks.StableRank(nodes, seed)
		out := make([]string, len(nodes))
		for i, n := range nodes {
			out[r[i]] = n.Name
		}
		return out
	}
	without := func(names []string, drop ...string) []string {
		var out []string
		for _, n := range names {
			if n != drop[0] && n != drop[1] {
				out = append(out, n)
			}
		}
		return out
	}
	differ := false
	for seed := uint64(0); seed < 20; seed++ {
		s, b := order(small.Nodes, seed), without(order(big.Nodes, seed), "x1", "x2")
		if len(s) != len(b) {
			t.Fatalf("seed %d: %v against %v", seed, s, b)
		}
		for i := range s {
			if s[i] != b[i] {
				t.Errorf("seed %d: order %v, with two nodes more %v", seed, s, b)
				break
			}
		}
		if seed > 0 && order(small.Nodes, seed)[0] != order(small.Nodes, 0)[0] {
			differ = true
		}
	}
	if !differ {
		t.Errorf("every seed ranks the same node first")
	}
}
