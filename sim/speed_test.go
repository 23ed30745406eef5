package sim_test

import (
	"strings"
	"testing"

	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/sim"
)

// TestReplaySpeedByGPUModel: one pod of one hour, alone on a cluster of
// one model, runs its traced hour on the model it was measured on and
// hour x speed(reference)/speed(placed) on another; without a reference
// it runs its hour everywhere. Speeds are the embedded catalog's,
// relative to the H100 (1): L40S 0.42 training, 0.57 inference.
func TestReplaySpeedByGPUModel(t *testing.T) {
	cases := []struct {
		name, model, ref string
		kind             job.Kind
		wantMS           job.Time
	}{
		// 3600 s x 1/1 on the reference model itself.
		{"H100 pod on H100", "H100", "H100", job.Training, 3_600_000},
		// 3600 s x 1/0.42 = 8571.43 s, rounded up to the ms.
		{"H100 pod on L40S", "L40S", "H100", job.Training, 8_571_429},
		// 3600 s x 1/0.57 = 6315.79 s (the inference figure).
		{"H100 inference pod on L40S", "L40S", "H100", job.Inference, 6_315_790},
		// 3600 s x 0.42/1 = 1512 s: measured on the slower GPU.
		{"L40S pod on H100", "H100", "L40S", job.Training, 1_512_000},
		// No reference: the traced hour on either model.
		{"unknown reference on H100", "H100", "", job.Training, 3_600_000},
		{"unknown reference on L40S", "L40S", "", job.Training, 3_600_000},
		// An alias of the reference is the same model.
		{"alias reference on H100", "H100", "NVIDIA-H100-80GB-HBM3", job.Training, 3_600_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clustertest.New().Node("n0").GPUs(8, tc.model).CPU(64000).Mem(1 << 20).Build()
			pod := job.Task{ID: 0, Name: "p0", Kind: tc.kind, Class: -1, Work: 3600, RefGPU: tc.ref,
				Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
			e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, Speed: &perf.Speed{Catalog: hw.Default()}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Run([]job.Task{pod})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Tasks[0]
			if got := r.End - r.Start; got != tc.wantMS {
				t.Errorf("ran %d ms on %s (reference %q), want %d ms", got, tc.model, tc.ref, tc.wantMS)
			}
		})
	}
}

// TestReplaySpeedUnknownFigure: a model without a figure for the pod's
// class fails the start loudly rather than run at an invented speed (the
// checks before a run refuse such a scenario first).
func TestReplaySpeedUnknownFigure(t *testing.T) {
	c := clustertest.New().Node("n0").GPUs(2, "T4").CPU(64000).Mem(1 << 20).Build()
	pod := job.Task{Name: "p0", Kind: job.Training, Class: -1, Work: 10, RefGPU: "H100",
		Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}}
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, Speed: &perf.Speed{Catalog: hw.Default()}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run([]job.Task{pod})
	if err == nil || !strings.Contains(err.Error(), "GPU model T4 has no training speed") {
		t.Fatalf("err = %v, want the T4's missing training speed named", err)
	}
}
