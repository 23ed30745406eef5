package policy

import (
	"math/rand/v2"
	"testing"
)

func TestRepackPacksPowersOfTwo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		const nodes, gpn = 6, 8
		var reqs []PackRequest
		total := 0
		for {
			n := 1 << r.IntN(5) // 1..16
			if total+n > nodes*gpn {
				break
			}
			total += n
			reqs = append(reqs, PackRequest{Job: len(reqs), GPUs: n})
		}
		out := Repack(reqs, nodes, gpn, nil)
		used := make([]int, nodes)
		for i, p := range out {
			if p == nil {
				t.Fatalf("trial %d: request %d (%d GPUs) unplaced though %d of %d GPUs fit", trial, i, reqs[i].GPUs, total, nodes*gpn)
			}
			if len(p) != (reqs[i].GPUs+gpn-1)/gpn {
				t.Fatalf("trial %d: %d GPUs on %d nodes", trial, reqs[i].GPUs, len(p))
			}
			for _, ns := range p {
				used[ns.Node] += ns.GPUs
			}
		}
		on := 0
		for _, u := range used {
			if u > gpn {
				t.Fatalf("trial %d: node over-allocated %v", trial, used)
			}
			if u > 0 {
				on++
			}
		}
		// First-fit decreasing leaves no fragment: ceil(total/gpn) nodes.
		if on != (total+gpn-1)/gpn {
			t.Fatalf("trial %d: %d nodes used for %d GPUs", trial, on, total)
		}
	}
}

func TestPackKeepsUnchangedJobs(t *testing.T) {
	prev := []NodeShare{{Node: 2, GPUs: 4}}
	reqs := []PackRequest{{Job: 0, GPUs: 4, Prev: prev}, {Job: 1, GPUs: 2}, {Job: 2, GPUs: 8}}
	out := Pack(reqs, 3, 8, nil, true)
	if out[0][0] != prev[0] {
		t.Fatalf("unchanged job moved to %v", out[0])
	}
	// The 2-GPU job goes to the fullest node with room (node 2), the
	// 8-GPU job to an empty node.
	if out[1][0].Node != 2 || out[2][0].GPUs != 8 || out[2][0].Node == 2 {
		t.Fatalf("placements %v", out)
	}
}
