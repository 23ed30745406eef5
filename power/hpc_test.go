package power_test

import (
	"testing"

	"github.com/wattsched/wattsched/power"
)

func TestHPCNodes(t *testing.T) {
	// Two nodes, 2 CPUs and 4 GPUs each; job type 0 is a CPU job, type 1 a GPU job.
	h := &power.HPCNodes{CPUsPerNode: 2, GPUsPerNode: 4, CPUIdle: 40, GPUIdle: 60, CPUTDP: 120, GPUTDP: 300,
		CPU:    [][]float64{{80, 40}, {90, 40}, {100, 40}, {110, 40}},
		GPU:    [][]float64{{60, 200}, {60, 210}, {60, 220}, {60, 230}, {60, 100}, {60, 100}, {60, 100}, {60, 100}},
		GPUJob: []bool{false, true}}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	// Node 0, CPU job: 80 + 90 + 4 idle GPUs x 60 = 410 W.
	if got := h.NodeW(0, 0); got != 410 {
		t.Errorf("NodeW(0, cpu) = %v, want 410", got)
	}
	// Node 0, GPU job: 200+210+220+230 + 2 idle CPUs x 40 = 940 W.
	if got := h.NodeW(0, 1); got != 940 {
		t.Errorf("NodeW(0, gpu) = %v, want 940", got)
	}
	// Idle node: 2 x 40 + 4 x 60 = 320 W (TSUBAME3.0-like); TDP 2 x 120 + 4 x 300 = 1440 W.
	if h.Idle() != 320 || h.TDP() != 1440 || h.Nodes() != 2 {
		t.Errorf("idle %v tdp %v nodes %d", h.Idle(), h.TDP(), h.Nodes())
	}
	// Fleet mean GPU power for type 1: (200+210+220+230+4x100)/8 = 157.5 W per GPU.
	m := h.FleetMean()
	if got := m.NodeW(1, 1); got != 4*157.5+80 {
		t.Errorf("fleet-mean NodeW = %v, want %v", got, 4*157.5+80)
	}
}
