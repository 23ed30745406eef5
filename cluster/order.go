package cluster

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// SortSpecs puts node specs in name order (stable, so equal names, which
// cluster inputs reject elsewhere, keep their order). Engines that read a
// node list build the cluster from sorted specs, so that node IDs, node
// iteration and every per-node output follow the nodes' names, never the
// order of the rows they came from.
func SortSpecs(specs []NodeSpec) {
	slices.SortStableFunc(specs, func(a, b NodeSpec) int { return cmp.Compare(a.Name, b.Name) })
}

// tieStream is the PCG stream of TieRank's permutation ("ties").
const tieStream = 0x74696573

// TieRank is the one tie-break rule between equally good nodes: a seeded
// random order of the nodes by name. The nodes sorted by name receive the
// ranks of a permutation drawn from seed (lower rank wins a tie), so a
// node's rank depends on its name, the set of names and the seed, never on
// the node's position in nodes. The result is indexed like nodes.
//
// For nodes already in name order (SortSpecs) the rank of the node at
// index i is element i of the seed's permutation.
func TieRank(nodes []*Node, seed uint64) []int {
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(nodes[a].Name, nodes[b].Name) })
	perm := rand.New(rand.NewPCG(seed, tieStream)).Perm(len(nodes))
	rank := make([]int, len(nodes))
	for i, k := range order {
		rank[k] = perm[i]
	}
	return rank
}
