package philly

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/trace"
)

// Pods: jobs of up to a machine's GPUs are one pod; larger ones gangs of
// as few pods as their GPUs need, GPUs spread evenly.
func TestPods(t *testing.T) {
	jobs := []trace.GPUJob{{ID: "1", SubmitSec: 10, DurationSec: 60, GPUs: 4}, {ID: "2", SubmitSec: 20, DurationSec: 90, GPUs: 12}, {ID: "3", GPUs: 16}}
	pods, err := Pods(jobs, PodShape{NodeGPUs: 8, CPUMilliPerGPU: 4000, MemMiBPerGPU: 1024})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Gang string
		Size, GPUs int
		CPU        int64
		SubmitMS   int64
		Work       float64
	}
	var got []row
	for _, p := range pods {
		got = append(got, row{p.Name, p.Gang, p.GangSize, p.GPUCount, p.CPUMilli, int64(p.Submit), p.Work})
	}
	want := []row{
		{"philly-1", "", 0, 4, 16000, 10000, 60},
		// 12 GPUs over ceil(12/8) = 2 pods: 6 + 6.
		{"philly-2-0", "philly-2", 2, 6, 24000, 20000, 90},
		{"philly-2-1", "philly-2", 2, 6, 24000, 20000, 90},
		// 16 GPUs: 2 pods of 8.
		{"philly-3-0", "philly-3", 2, 8, 32000, 0, 0},
		{"philly-3-1", "philly-3", 2, 8, 32000, 0, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	// 10 GPUs over 2 pods: 5 + 5; 9 GPUs: 5 + 4.
	p9, _ := Pods([]trace.GPUJob{{ID: "9", GPUs: 9}}, PodShape{NodeGPUs: 8})
	if len(p9) != 2 || p9[0].GPUCount != 5 || p9[1].GPUCount != 4 {
		t.Errorf("9 GPUs: %+v, want pods of 5 and 4", p9)
	}
	if _, err := Pods(jobs, PodShape{NodeGPUs: 9}); err == nil {
		t.Error("9 GPUs per node accepted")
	}
}
