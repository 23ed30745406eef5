package power

import (
	"fmt"

	"github.com/wattsched/wattsched/hw"
)

// HPCNodes gives the power of exclusive HPC nodes with per-device variation
// (VAHRM paper Sections III-A and V-D): a node runs at most one job; a CPU
// job draws its CPUs' power for its type and leaves the node's GPUs idle, a
// GPU job draws its GPUs' power and leaves the CPUs idle.
type HPCNodes struct {
	CPUsPerNode, GPUsPerNode int
	CPUIdle, GPUIdle         hw.Watts
	CPUTDP, GPUTDP           hw.Watts
	// CPU[d][k] and GPU[d][k] are device d's power (W) for job type k;
	// device d belongs to node d / CPUsPerNode (or d / GPUsPerNode).
	CPU, GPU [][]float64
	// GPUJob[k] says whether job type k runs on GPUs.
	GPUJob []bool
}

// Nodes is the number of nodes.
func (h *HPCNodes) Nodes() int { return len(h.CPU) / h.CPUsPerNode }

// Idle is one idle node's power.
func (h *HPCNodes) Idle() hw.Watts {
	return hw.Watts(h.CPUsPerNode)*h.CPUIdle + hw.Watts(h.GPUsPerNode)*h.GPUIdle
}

// TDP is one node's thermal design power.
func (h *HPCNodes) TDP() hw.Watts {
	return hw.Watts(h.CPUsPerNode)*h.CPUTDP + hw.Watts(h.GPUsPerNode)*h.GPUTDP
}

// NodeW is node n's power while running a job of type k.
func (h *HPCNodes) NodeW(n, k int) hw.Watts {
	var w hw.Watts
	if h.GPUJob[k] {
		for d := n * h.GPUsPerNode; d < (n+1)*h.GPUsPerNode; d++ {
			w += hw.Watts(h.GPU[d][k])
		}
		return w + hw.Watts(h.CPUsPerNode)*h.CPUIdle
	}
	for d := n * h.CPUsPerNode; d < (n+1)*h.CPUsPerNode; d++ {
		w += hw.Watts(h.CPU[d][k])
	}
	return w + hw.Watts(h.GPUsPerNode)*h.GPUIdle
}

// Validate checks shapes.
func (h *HPCNodes) Validate() error {
	switch {
	case h.CPUsPerNode <= 0 || h.GPUsPerNode < 0:
		return fmt.Errorf("power: %d CPUs and %d GPUs per node", h.CPUsPerNode, h.GPUsPerNode)
	case len(h.CPU)%h.CPUsPerNode != 0 || h.GPUsPerNode > 0 && len(h.GPU) != h.Nodes()*h.GPUsPerNode:
		return fmt.Errorf("power: %d CPUs and %d GPUs do not make whole nodes", len(h.CPU), len(h.GPU))
	}
	for _, row := range append(append([][]float64{}, h.CPU...), h.GPU...) {
		if len(row) != len(h.GPUJob) {
			return fmt.Errorf("power: a device has %d job types, want %d", len(row), len(h.GPUJob))
		}
	}
	return nil
}

// FleetMean returns a copy in which every device draws the fleet-average
// power for each job type: what a variation-unaware scheduler assumes.
func (h *HPCNodes) FleetMean() *HPCNodes {
	avg := func(t [][]float64) [][]float64 {
		if len(t) == 0 {
			return nil
		}
		m := make([]float64, len(t[0]))
		for _, r := range t {
			for k, v := range r {
				m[k] += v / float64(len(t))
			}
		}
		out := make([][]float64, len(t))
		for i := range out {
			out[i] = append([]float64(nil), m...)
		}
		return out
	}
	c := *h
	c.CPU, c.GPU = avg(h.CPU), avg(h.GPU)
	return &c
}
