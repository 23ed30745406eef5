package cluster_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
)

// A node's tie-break rank follows its name, whatever the order of the
// specs the cluster was built from; the ranks are a permutation, and
// another seed gives another order.
func TestTieRankFollowsNames(t *testing.T) {
	var specs []cluster.NodeSpec
	for i := range 40 {
		specs = append(specs, cluster.NodeSpec{Name: fmt.Sprintf("node-%02d", (i*17)%40), CPUMilli: 1000, MemMiB: 1})
	}
	ranks := func(specs []cluster.NodeSpec, seed uint64) map[string]int {
		c, err := cluster.New(hw.Default(), specs)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		seen := make([]bool, len(specs))
		for i, r := range cluster.TieRank(c.Nodes, seed) {
			if r < 0 || r >= len(seen) || seen[r] {
				t.Fatalf("rank %d of node %d: not a permutation", r, i)
			}
			seen[r] = true
			out[c.Nodes[i].Name] = r
		}
		return out
	}
	want := ranks(specs, 42)
	for s := range uint64(5) {
		shuffled := append([]cluster.NodeSpec(nil), specs...)
		rand.New(rand.NewPCG(s, 1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if diff := cmp.Diff(want, ranks(shuffled, 42)); diff != "" {
			t.Errorf("shuffle %d: ranks by name (-want +got):\n%s", s, diff)
		}
		sorted := append([]cluster.NodeSpec(nil), shuffled...)
		cluster.SortSpecs(sorted)
		for i := 1; i < len(sorted); i++ {
			if sorted[i-1].Name >= sorted[i].Name {
				t.Fatalf("SortSpecs: %s before %s", sorted[i-1].Name, sorted[i].Name)
			}
		}
	}
	if cmp.Equal(want, ranks(specs, 43)) {
		t.Error("seeds 42 and 43 give the same order")
	}
}
