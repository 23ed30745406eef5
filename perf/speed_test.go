package perf

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// TestSpeedFactor: the multiplier of a task's work on a node, from the
// embedded catalog (H100 1; L40S 0.42 training, 0.57 inference).
func TestSpeedFactor(t *testing.T) {
	c := clustertest.New().Node("h").GPUs(8, "H100").CPU(64000).Mem(1<<20).
		Node("l").GPUs(4, "NVIDIA-L40S").CPU(64000).Mem(1 << 20).
		Node("cpu").CPU(64000).Mem(1 << 20).Build()
	gpu := job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}
	cpu := job.Demand{CPUMilli: 1000}
	s := Speed{Catalog: hw.Default()}
	cases := []struct {
		name string
		task job.Task
		node int
		want float64
	}{
		{"no reference", job.Task{Demand: gpu}, 1, 1},
		{"on the reference", job.Task{Demand: gpu, RefGPU: "H100"}, 0, 1},
		{"training on L40S (by alias)", job.Task{Demand: gpu, RefGPU: "H100", Kind: job.Training}, 1, 1 / 0.42},
		{"inference on L40S", job.Task{Demand: gpu, RefGPU: "H100", Kind: job.Inference}, 1, 1 / 0.57},
		{"kind unset counts as training", job.Task{Demand: gpu, RefGPU: "H100"}, 1, 1 / 0.42},
		{"measured on L40S, runs on H100", job.Task{Demand: gpu, RefGPU: "L40S"}, 0, 0.42},
		{"CPU-only task", job.Task{Demand: cpu, RefGPU: "H100"}, 2, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Factor(&tc.task, c.Nodes[tc.node])
			if err != nil || math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("Factor = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := s.Factor(&job.Task{Demand: gpu, RefGPU: "H900"}, c.Nodes[0]); err == nil {
		t.Error("an unknown reference model gave a factor")
	}
}
