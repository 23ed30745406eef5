package pwr

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

func TestScorePrefersBusyGPUsAndSockets(t *testing.T) {
	p, _ := New(Args{}, policy.Deps{})
	c := clustertest.New().Node("t4").GPUs(2, "T4").CPU(64000).Node("g2").GPUs(8, "G2").CPU(96000).Build()
	t4, g2 := c.Nodes[0], c.Nodes[1]
	if err := c.Allocate(&job.Task{ID: 1, Demand: job.Demand{CPUMilli: 2000, GPUCount: 1, GPUMilli: 300}}, 0, []int{1}); err != nil {
		t.Fatal(err)
	}
	task := &job.Task{ID: 2, Demand: job.Demand{CPUMilli: 2000, GPUCount: 1, GPUMilli: 300}}
	// T4 node: GPU 1 is busy and its socket too: no increase, score 0, GPU 1.
	if s, g := p.Score(task, t4), p.SelectGPUs(task, t4); s != 0 || !cmp.Equal(g, []int{1}) {
		t.Errorf("t4: score %d gpus %v, want 0 [1]", s, g)
	}
	// Idle G2 node: one A10 30 -> 150 W (+120) and one socket 15 -> 120 W (+105): -225.
	if s := p.Score(task, g2); s != -225 {
		t.Errorf("g2: score %d, want -225", s)
	}
	scores := []int64{0, -225, -100}
	p.Normalize(scores)
	// Min-max: 0 -> 100, -225 -> 0, -100 -> 125*100/225 = 55.
	if !cmp.Equal(scores, []int64{100, 0, 55}) {
		t.Errorf("normalised %v", scores)
	}
}
