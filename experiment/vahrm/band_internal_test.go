package vahrm

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// TestGPUBusyBand: the band covers the GPU jobs' GPU energy only, at the
// study's p95 relative error of the per-device GPU model.
func TestGPUBusyBand(t *testing.T) {
	// Nodes of 2 CPUs idling at 40 W and 4 GPUs; type 0 a CPU job, type 1
	// a GPU job.
	e := &Env{Truth: &power.HPCNodes{CPUsPerNode: 2, GPUsPerNode: 4, CPUIdle: 40, GPUIdle: 50, GPUJob: []bool{false, true}}}
	jobs := []policy.HPCJob{{ID: 0, Type: 0, Nodes: 1}, {ID: 1, Type: 1, Nodes: 2}}
	res := &sim.HPCResult{Jobs: []sim.HPCJobResult{
		// The CPU job: 1 node, 100 s, 50,000 J: no GPU-busy energy.
		{ID: 0, Nodes: 1, Start: 0, End: 100_000, Energy: 50_000},
		// The GPU job: 2 nodes for 10 s drawing 2 x (4 x 250 + 2 x 40) =
		// 2,160 W: 21,600 J, of which the idle CPUs' 2 x 80 W x 10 s =
		// 1,600 J; GPU-busy 20,000 J.
		{ID: 1, Nodes: 2, Start: 5_000, End: 15_000, Energy: 21_600},
	}}
	if got := e.gpuBusyJ(jobs, res); math.Abs(got-20_000) > 1e-9 {
		t.Fatalf("GPU-busy energy %v J, want 20,000 J", got)
	}
	f := experiment.ModelErrorOf(bandModel, bandGroup)
	if got, want := ModelBandJ(20_000), 20_000*f.P95Rel; got != want || want <= 0 {
		t.Errorf("band %v J, want 20,000 J x the study's p95 %v = %v J", got, f.P95Rel, want)
	}
}
