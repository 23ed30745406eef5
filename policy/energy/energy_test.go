package energy_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/energy"
	"github.com/wattsched/wattsched/policy/pwr"
)

// One whole GPU and no CPU, so that only the GPU's power moves (PWR eq. 2:
// idle to TDP). Catalog: H100 71.8 -> 700 W (+628.2), speed 1; L40S
// 35.6 -> 350 W (+314.4), training 0.42, inference 0.57;
// A100-PCIe-80GB 53.7 -> 300 W (+246.3), no speed.
func TestScoreIsPowerTimesDuration(t *testing.T) {
	c := clustertest.New().Node("h100").GPUs(1, "H100").Node("l40s").GPUs(1, "L40S").Node("a100").GPUs(1, "A100-PCIe-80GB").Build()
	h100, l40s, a100 := c.Nodes[0], c.Nodes[1], c.Nodes[2]
	whole := job.Demand{GPUCount: 1, GPUMilli: 1000}
	cases := []struct {
		name             string
		kind             job.Kind
		ref              string
		h100, l40s, a100 int64
		notes            []string // substrings, one per note
	}{
		// H100: 628.2 x 1 = -628. L40S: 314.4 / 0.42 = 748.57 -> -748.
		// A100-PCIe: no speed, PWR's -246 (and a note).
		{"training measured on H100", job.Training, "H100", -628, -748, -246, []string{"training pods measured on H100, on A100-PCIe-80GB nodes: GPU model A100-PCIe-80GB has no training speed"}},
		// L40S: 314.4 / 0.57 = 551.58 -> -551: the L40S wins for inference.
		{"inference measured on H100", job.Inference, "H100", -628, -551, -246, []string{"inference pods measured on H100, on A100-PCIe-80GB nodes"}},
		// Measured on the L40S: H100 628.2 x 0.42 = 263.84 -> -263; L40S itself x1.
		{"training measured on L40S", job.Training, "L40S", -263, -314, -246, []string{"training pods measured on L40S, on A100-PCIe-80GB"}},
		// No reference GPU: PWR's scores everywhere, and a note.
		{"no reference GPU", job.Training, "", -628, -314, -246, []string{"GPU pods without a reference GPU"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := energy.New(energy.Args{}, policy.Deps{Catalog: hw.Default()})
			if err != nil {
				t.Fatal(err)
			}
			task := &job.Task{ID: 1, Kind: tc.kind, RefGPU: tc.ref, Demand: whole}
			got := []int64{p.Score(task, h100), p.Score(task, l40s), p.Score(task, a100)}
			if diff := cmp.Diff([]int64{tc.h100, tc.l40s, tc.a100}, got); diff != "" {
				t.Errorf("scores h100, l40s, a100 (-want +got):\n%s", diff)
			}
			notes := p.Notes()
			if len(notes) != len(tc.notes) {
				t.Fatalf("notes %q, want %d", notes, len(tc.notes))
			}
			for i, n := range tc.notes {
				if !strings.Contains(notes[i], n) || strings.Contains(notes[i], "task 1") {
					t.Errorf("note %q, want it to contain %q and name no task", notes[i], n)
				}
			}
		})
	}
}

// Without a speed factor (no reference GPU, CPU-only tasks, shared GPUs on
// one model) the score is PWR's, GPUs included.
func TestFallbackEqualsPWR(t *testing.T) {
	c := clustertest.New().Node("t4").GPUs(2, "T4").CPU(64000).Node("g2").GPUs(8, "G2").CPU(96000).Node("cpu").Build()
	if err := c.Allocate(&job.Task{ID: 1, Demand: job.Demand{CPUMilli: 2000, GPUCount: 1, GPUMilli: 300}}, 0, []int{1}); err != nil {
		t.Fatal(err)
	}
	e, _ := energy.New(energy.Args{}, policy.Deps{Catalog: hw.Default()})
	w, _ := pwr.New(pwr.Args{}, policy.Deps{})
	for _, d := range []job.Demand{{CPUMilli: 2000, GPUCount: 1, GPUMilli: 300}, {CPUMilli: 4000, GPUCount: 2, GPUMilli: 1000}, {CPUMilli: 3000}} {
		task := &job.Task{ID: 2, Demand: d}
		for _, n := range c.Nodes {
			if ok, _ := cluster.Fits(&task.Demand, n); !ok {
				continue
			}
			if e.Score(task, n) != w.Score(task, n) || !cmp.Equal(e.SelectGPUs(task, n), w.SelectGPUs(task, n)) {
				t.Errorf("%+v on %s: energy %d %v, PWR %d %v", d, n.Name, e.Score(task, n), e.SelectGPUs(task, n), w.Score(task, n), w.SelectGPUs(task, n))
			}
		}
	}
}

func TestNeedsCatalog(t *testing.T) {
	if _, err := energy.New(energy.Args{}, policy.Deps{}); err == nil || !strings.Contains(err.Error(), "catalog") {
		t.Errorf("New without a catalog: %v, want an error naming the catalog", err)
	}
}
