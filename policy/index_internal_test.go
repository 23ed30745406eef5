package policy

import (
	"math/rand/v2"
	"testing"
)

// The group heaps keep departed nodes until they surface or the heap is
// compacted; after any sequence of joins and departures each group's top
// must be its best remaining node, its count exact, and the class heap's
// top the best group. Few groups and many nodes make compaction frequent,
// including when the departing node is the top.
func TestIndexGroupsAfterJoinsAndDepartures(t *testing.T) {
	p := &Placer{scorers: []Weighted{{Name: "s", Weight: 1}}, normed: []bool{false}, equal: []int64{0}}
	const nodes, groups = 40, 3
	ci := &classIndex{group: make([]int32, nodes), byRaw: map[rawScores]int32{}}
	for i := range ci.group {
		ci.group[i] = -1
	}
	for range groups {
		ci.groups = append(ci.groups, scoreGroup{at: -1}) // equal keys: the best node orders the groups
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 20000 {
		o := int32(rng.IntN(nodes))
		if ci.group[o] >= 0 {
			p.leave(ci, o)
		} else {
			p.join(ci, int32(rng.IntN(groups)), o)
		}
		best := int32(-1)
		for g := range ci.groups {
			gr := &ci.groups[g]
			lowest, n := int32(-1), int32(0)
			for v, in := range ci.group {
				if in == int32(g) {
					n++
					if lowest < 0 {
						lowest = int32(v)
					}
				}
			}
			if gr.n != n || n > 0 && gr.top != lowest || n == 0 && gr.at >= 0 {
				t.Fatalf("step %d group %d: n %d top %d at %d, want n %d top %d", step, g, gr.n, gr.top, gr.at, n, lowest)
			}
			if n > 0 && (best < 0 || p.groupBefore(ci, int32(g), best)) {
				best = int32(g)
			}
		}
		if best >= 0 && ci.heap[0] != best {
			t.Fatalf("step %d: class heap top %d, want group %d", step, ci.heap[0], best)
		}
	}
}
