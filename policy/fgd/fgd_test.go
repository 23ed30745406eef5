package fgd

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

func tasks(spec ...struct {
	n     int
	cpu   int64
	count int
	milli int64
}) []job.Task {
	var out []job.Task
	for _, s := range spec {
		for i := 0; i < s.n; i++ {
			out = append(out, job.Task{Demand: job.Demand{CPUMilli: s.cpu, GPUCount: s.count, GPUMilli: s.milli}})
		}
	}
	return out
}

type cls = struct {
	n     int
	cpu   int64
	count int
	milli int64
}

func TestWorkloadKeepsPopularClassesAndRenormalises(t *testing.T) {
	ts := tasks(cls{5, 1000, 1, 500}, cls{3, 2000, 1, 1000}, cls{1, 4000, 0, 0}, cls{1, 8000, 0, 0})
	w, err := NewWorkload(ts, Args{PopularityThreshold: 80, IncludeCPUTasks: true})
	if err != nil {
		t.Fatal(err)
	}
	// 80% of 10 tasks = 8: the 5-task class (cum 5 < 8) and the 3-task class (cum 8) are kept,
	// then renormalised: 5/8 and 3/8.
	got := []float64{}
	for _, c := range w.Classes {
		got = append(got, c.Popularity)
	}
	if diff := cmp.Diff([]float64{5.0 / 8, 3.0 / 8}, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("popularities (-want +got):\n%s", diff)
	}
	// Equal counts break ties by decreasing CPU: the 8000-milli class comes first.
	w2, _ := NewWorkload(tasks(cls{1, 4000, 0, 0}, cls{1, 8000, 0, 0}), Args{}.Default())
	if w2.Classes[0].CPUMilli != 8000 {
		t.Errorf("tie order: first class has %d milli-CPU, want 8000", w2.Classes[0].CPUMilli)
	}
}

func TestFragCases(t *testing.T) {
	half := &Workload{Classes: []Class{{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500, Popularity: 1}}}
	cpuOnly := &Workload{Classes: []Class{{CPUMilli: 1000, Popularity: 1}}}
	spec := &Workload{Classes: []Class{{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500, Spec: []string{"A100"}, Popularity: 1}}}
	cases := []struct {
		name string
		w    *Workload
		cpu  int64
		gpus []int64
		want float64
	}{
		// Q3: the class fits (GPU 0); GPU 1 (300 < 500) is fragment: 300.
		{"q3 partial fragment", half, 4000, []int64{1000, 300}, 300},
		// Q2: no GPU has 500 free: everything idle is fragment: 300 + 200 = 500.
		{"q2 lack gpu", half, 4000, []int64{300, 200}, 500},
		// Q4: GPUs fit but CPU does not: all idle GPU is fragment: 1000.
		{"q4 lack cpu", half, 500, []int64{1000}, 1000},
		// CPU-only class: idle GPUs are fragment to it whether the CPU fits or not.
		{"cpu-only task class", cpuOnly, 4000, []int64{1000, 400}, 1400},
		// Model constraint not met: no access, all idle is fragment.
		{"no access", spec, 4000, []int64{1000}, 1000},
		// Half the workload each: 0.5 x 300 + 0.5 x 1300.
		{"mixture", &Workload{Classes: []Class{half.Classes[0], cpuOnly.Classes[0]}}, 4000, []int64{1000, 300}, 0.5*300 + 0.5*1300},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "mixture" {
				tc.w.Classes[0].Popularity, tc.w.Classes[1].Popularity = 0.5, 0.5
			}
			if got := tc.w.Frag("T4", tc.cpu, tc.gpus); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("Frag = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScoreAndGPUChoice(t *testing.T) {
	// Workload: shared tasks of 500 milli only.
	w := &Workload{Classes: []Class{{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500, Popularity: 1}}, models: map[string]uint16{}, memo: map[stateKey]float64{}}
	p := &Policy{W: w}
	c := clustertest.New().Node("n0").GPUs(2, "T4").CPU(16000).Build()
	n := c.Nodes[0]
	copy(n.GPUFree, []int64{1000, 700})
	task := &job.Task{Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 200}}
	// Before: GPU 1 (700) and GPU 0 fit a 500-class task: fragment 0.
	// On GPU 1: 500 left, still fits: fragment 0, delta 0 -> sigmoid(0) x 100 = 50.
	// On GPU 0: 800 and 700 left, both fit: fragment 0 -> also 50; the lower index wins ties.
	if got := p.Score(task, n); got != 50 {
		t.Errorf("Score = %d, want 50", got)
	}
	copy(n.GPUFree, []int64{1000, 600})
	// On GPU 1: 400 left (< 500): fragment 400, delta -400 -> int(100/(1+e^0.4)) = 40.
	// On GPU 0: 800 and 600 left: fragment 0 -> 50. GPU 0 wins.
	if got, gpus := p.Score(task, n), p.SelectGPUs(task, n); got != 50 || !cmp.Equal(gpus, []int{0}) {
		t.Errorf("Score, GPUs = %d %v, want 50 [0]", got, gpus)
	}
	if got := sigmoidScore(-400); got != int64(100/(1+math.Exp(0.4))) || got != 40 {
		t.Errorf("sigmoidScore(-400) = %d, want 40", got)
	}
	whole := &job.Task{Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	if gpus := p.SelectGPUs(whole, n); !cmp.Equal(gpus, []int{0}) {
		t.Errorf("whole GPU -> %v, want [0]", gpus)
	}
}

func TestNew(t *testing.T) {
	if _, err := New(Args{}.Default(), policy.Deps{}); err == nil {
		t.Error("FGD without a workload must fail")
	}
	if err := (Args{PopularityThreshold: 101}).Validate(); err == nil {
		t.Error("threshold 101 accepted")
	}
}
