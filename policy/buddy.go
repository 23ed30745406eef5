package policy

import "slices"

// ElasticPredictor predicts a job's step time (s) and GPU energy per
// iteration (J, all GPUs) on n GPUs at frequency index fi; ok is false for
// a configuration the job cannot run.
type ElasticPredictor interface {
	Predict(v *ElasticView, n, fi int) (iterSec, iterJ float64, ok bool)
}

// PackRequest asks for n GPUs for job Job; Prev is its current placement.
type PackRequest struct {
	Job  int
	GPUs int
	Prev []NodeShare
}

// Pack places power-of-two GPU counts on nodes of gpn GPUs (PowerFlow
// Section 5.3, network packing and buddy allocation): a job of n < gpn GPUs
// on one node, a larger one on n/gpn whole nodes. With power-of-two sizes a
// node's GPUs can always be split buddy-style for any set of jobs whose
// counts fit, so per-node counts are all that needs tracking.
//
// Jobs keep their previous placement when their count is unchanged and it
// still fits; the rest go largest first to the fullest node that fits,
// preferring powered nodes. If that fails and migrate is set, every job is
// re-placed first-fit decreasing, keeping its place where it can (which
// packs power-of-two sizes without fragmentation), moving jobs as needed.
// Requests that cannot be placed get a nil placement.
func Pack(reqs []PackRequest, nodes, gpn int, on []bool, migrate bool) [][]NodeShare {
	out, free, order := packStart(reqs, nodes, gpn)
	for _, i := range order {
		r := reqs[i]
		if sum(r.Prev) != r.GPUs || len(r.Prev) == 0 {
			continue
		}
		ok := true
		for _, ns := range r.Prev {
			if free[ns.Node] < ns.GPUs {
				ok = false
			}
		}
		if ok {
			for _, ns := range r.Prev {
				free[ns.Node] -= ns.GPUs
			}
			out[i] = r.Prev
		}
	}
	failed := false
	for _, i := range order {
		if out[i] != nil {
			continue
		}
		if p := Place(reqs[i].GPUs, free, gpn, on); p != nil {
			out[i] = p
		} else {
			failed = true
		}
	}
	if !failed || !migrate {
		return out
	}
	return Repack(reqs, nodes, gpn, on)
}

// Repack re-places every request largest first, each job staying where it
// was when its count is unchanged and its nodes still have room. Every job
// placed before a job of n GPUs has a power-of-two count of at least n, so
// each node's free GPUs are a multiple of n (or of gpn): first-fit
// decreasing leaves no fragment and succeeds whenever the counts fit.
func Repack(reqs []PackRequest, nodes, gpn int, on []bool) [][]NodeShare {
	out, free, order := packStart(reqs, nodes, gpn)
	for _, i := range order {
		r := reqs[i]
		keep := sum(r.Prev) == r.GPUs && len(r.Prev) > 0
		for _, ns := range r.Prev {
			keep = keep && free[ns.Node] >= ns.GPUs
		}
		if keep {
			for _, ns := range r.Prev {
				free[ns.Node] -= ns.GPUs
			}
			out[i] = r.Prev
			continue
		}
		out[i] = Place(r.GPUs, free, gpn, on)
	}
	return out
}

// packStart returns empty placements, every node's GPUs free, and the
// requests' indices largest first (stable).
func packStart(reqs []PackRequest, nodes, gpn int) ([][]NodeShare, []int, []int) {
	free := FreeGPUs(nodes, gpn)
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return reqs[b].GPUs - reqs[a].GPUs })
	return make([][]NodeShare, len(reqs)), free, order
}

// PlaceInOrder keeps running jobs where they are and places the waiting
// ones of views, in order, on their requested counts (ReqCount) wherever a
// packed placement is free; it returns the allocations at frequency fi.
// Jobs of views that are running stay; jobs not in views are not run.
func PlaceInOrder(st *ElasticState, views []*ElasticView, fi int) []ElasticAlloc {
	var out []ElasticAlloc
	var used [][]NodeShare
	for _, v := range views {
		if v.GPUs > 0 {
			used = append(used, v.Nodes)
			out = append(out, ElasticAlloc{Job: v.Job.ID, Nodes: v.Nodes, FreqIdx: fi})
		}
	}
	free := FreeGPUs(st.Nodes, st.GPUsPerNode, used...)
	for _, v := range views {
		if v.GPUs > 0 {
			continue
		}
		if pl := Place(ReqCount(v.Job), free, st.GPUsPerNode, nil); pl != nil {
			out = append(out, ElasticAlloc{Job: v.Job.ID, Nodes: pl, FreqIdx: fi})
		}
	}
	return out
}

func sum(p []NodeShare) int {
	s := 0
	for _, ns := range p {
		s += ns.GPUs
	}
	return s
}

// Place takes n GPUs from free (per-node free counts, updated): whole empty nodes for n >= gpn, else the fullest
// node with room (powered before unpowered, then lowest index).
func Place(n int, free []int, gpn int, on []bool) []NodeShare {
	if n >= gpn {
		k := n / gpn
		var p []NodeShare
		for pass := 0; pass < 2 && len(p) < k; pass++ {
			for i, f := range free {
				if len(p) < k && f == gpn && (on == nil && pass == 0 || on != nil && on[i] == (pass == 0)) {
					p = append(p, NodeShare{Node: i, GPUs: gpn})
				}
			}
		}
		if len(p) < k {
			return nil
		}
		for _, ns := range p {
			free[ns.Node] = 0
		}
		return p
	}
	best := -1
	for i, f := range free {
		if f < n {
			continue
		}
		if best < 0 || better(i, best, free, on) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	free[best] -= n
	return []NodeShare{{Node: best, GPUs: n}}
}

func better(i, j int, free []int, on []bool) bool {
	pi, pj := on == nil || on[i], on == nil || on[j]
	if pi != pj {
		return pi
	}
	return free[i] < free[j]
}

// FreeGPUs returns each node's free GPUs given the placements in use.
func FreeGPUs(nodes, gpn int, used ...[]NodeShare) []int {
	free := make([]int, nodes)
	for i := range free {
		free[i] = gpn
	}
	for _, p := range used {
		for _, ns := range p {
			free[ns.Node] -= ns.GPUs
		}
	}
	return free
}

// FreqIndex resolves a frequency index where -1 means the highest.
func FreqIndex(fi int, freqs []int) int {
	if fi < 0 || fi >= len(freqs) {
		return len(freqs) - 1
	}
	return fi
}

// ReqCount is the GPU count a non-elastic scheduler runs a job on: the
// requested count, at most the job's largest.
func ReqCount(j *ElasticJob) int { return max(1, min(j.ReqGPUs, j.MaxGPUs)) }

// NodesInUse marks the nodes the allocations use: the NodeOn of a
// scheduler that powers down nodes without jobs.
func NodesInUse(allocs []ElasticAlloc, nodes int) []bool {
	on := make([]bool, nodes)
	for _, a := range allocs {
		for _, ns := range a.Nodes {
			on[ns.Node] = true
		}
	}
	return on
}
