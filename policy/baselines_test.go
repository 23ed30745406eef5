package policy_test

import (
	"testing"

	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/dotprod"
	"github.com/wattsched/wattsched/policy/gpuclustering"
	"github.com/wattsched/wattsched/policy/gpupacking"
)

func TestBaselineScores(t *testing.T) {
	c := clustertest.New().Node("n").GPUs(4, "T4").CPU(64000).Build()
	n := c.Nodes[0]
	if err := c.Allocate(&job.Task{ID: 1, Demand: job.Demand{CPUMilli: 8000, GPUCount: 1, GPUMilli: 400}}, 0, []int{0}); err != nil {
		t.Fatal(err)
	}
	// Node: 56 vCPU free, GPUs free 600, 1000, 1000, 1000 (3600 milli).
	shared := &job.Task{Demand: job.Demand{CPUMilli: 4000, GPUCount: 1, GPUMilli: 500}}
	two := &job.Task{Demand: job.Demand{CPUMilli: 4000, GPUCount: 2, GPUMilli: 1000}}
	cpu := &job.Task{Demand: job.Demand{CPUMilli: 4000}}
	bf, _ := bestfit.New(bestfit.Args{}, policy.Deps{})
	dp, _ := dotprod.New(dotprod.Args{}, policy.Deps{})
	gp, _ := gpupacking.New(gpupacking.Args{}, policy.Deps{})
	gc, _ := gpuclustering.New(gpuclustering.Args{}, policy.Deps{})
	cases := []struct {
		name string
		s    policy.Scorer
		t    *job.Task
		want int64
	}{
		// BestFit: 100 x (1 - (0.5 x 52000/128000 + 0.5 x 3100/8000)) = 100 x (1 - 0.203125 - 0.19375) = 60.3 -> 60.
		{"bestfit", bf, shared, 60},
		// DotProd: 100 x (1 - (56/128 x 4/128 + 3.6/8 x 0.5/8)/2) = 100 x (1 - (0.013672 + 0.028125)/2) = 97.9 -> 97.
		{"dotprod", dp, shared, 97},
		// GpuPacking, shared task fits GPU 0 (600 free, in use): 100 - (60)/10 = 94.
		{"gpupacking shared", gp, shared, 94},
		// GpuPacking, two whole GPUs must use idle GPUs on a used node: 50 - 2 = 48.
		{"gpupacking two", gp, two, 48},
		{"gpupacking cpu-only", gp, cpu, 0},
		// GpuClustering, node runs only shared tasks: 25 x (8000 - 3600)/8000 = 13 (integer) + 75 = 88.
		{"gpuclustering same kind", gc, shared, 88},
		// Two-GPU task on a node with another kind only: 13.
		{"gpuclustering other kind", gc, two, 13},
		{"gpuclustering cpu-only", gc, cpu, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.Score(tc.t, n); got != tc.want {
				t.Errorf("Score = %d, want %d", got, tc.want)
			}
		})
	}
}
