package cedla

import (
	"testing"
)

// slottedMeasured are peak resident sets of slotted commands (2 CPUs, the
// default workers; /usr/bin/time -f %M, KiB) with the HiGHS objects freed
// after each solve, as docs/performance.md gives them. Each estimate must
// be at least the measured peak (never admit a run that passes
// --max-memory) and within 1.5x of it.
var slottedMeasured = []struct {
	name   string
	load   SlottedLoad
	study  int // > 0: reproduce cedla with this many seeds (-1: --quick)
	peakKB int64
	bound  bool // only a lower bound: a partial peak
}{
	// examples/slotted-cedla.yaml: 6 nodes of each type, 96 slots,
	// lookahead 24, 20 jobs, 5 systems (2 CE-DLA).
	{"examples/slotted-cedla.yaml", SlottedLoad{Jobs: 20, Nodes: 24, Slots: 96, Periods: 24, Planners: 2, Runs: 5, Seeds: 1}, 0, 109_668, false},
	{"CE-DLA soft, 6 x 4 nodes, 20 jobs", SlottedLoad{Jobs: 20, Nodes: 24, Slots: 96, Periods: 24, Planners: 1, Runs: 1, Seeds: 1}, 0, 86_608, false},
	{"CE-DLA soft, 40 x 4 nodes, 50 jobs", SlottedLoad{Jobs: 50, Nodes: 160, Slots: 96, Periods: 24, Planners: 1, Runs: 1, Seeds: 1}, 0, 198_024, false},
	{"CE-DLA soft, 40 x 4 nodes, 100 jobs", SlottedLoad{Jobs: 100, Nodes: 160, Slots: 96, Periods: 24, Planners: 1, Runs: 1, Seeds: 1}, 0, 391_012, false},
	{"FIFO, EPRONS, PA-MBT, 4,096 x 4 nodes, 20 jobs", SlottedLoad{Jobs: 20, Nodes: 16384, Slots: 96, Periods: 24, Planners: 0, Runs: 3, Seeds: 1}, 0, 33_964, false},
	// Partial peaks (lower bounds of the true peak): 200 jobs stopped at
	// slot 33 of 96 on CE-DLA's safety net on the loaded machine, and
	// reproduce cedla --seeds 1 was stopped after 3 of its 26 runs.
	{"CE-DLA soft, 40 x 4 nodes, 200 jobs, to slot 33", SlottedLoad{Jobs: 200, Nodes: 160, Slots: 96, Periods: 24, Planners: 1, Runs: 1, Seeds: 1}, 0, 688_580, true},
	{"reproduce cedla --seeds 1, 3 of 26 runs", SlottedLoad{}, 1, 578_780, true},
	{"reproduce cedla --quick", SlottedLoad{}, -1, 147_312, false},
}

func TestEstimateSlottedMeasured(t *testing.T) {
	for _, c := range slottedMeasured {
		var est int64
		switch {
		case c.study < 0:
			est = EstimateStudy(true, 1, 2).Bytes
		case c.study > 0:
			est = EstimateStudy(false, c.study, 2).Bytes
		default:
			est = EstimateSlotted(c.load, c.name, 2).Bytes
		}
		peak := c.peakKB << 10
		ratio := float64(est) / float64(peak)
		t.Logf("%s: estimate %.1f MiB, measured %.1f MiB, ratio %.2f", c.name, float64(est)/(1<<20), float64(peak)/(1<<20), ratio)
		if ratio < 1 || ratio > 1.5 && !c.bound {
			t.Errorf("%s: estimate %d bytes is %.2fx the measured peak %d, want 1..1.5x", c.name, est, ratio, peak)
		}
	}
}
