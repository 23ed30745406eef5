package fcfs_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fcfs"
	"github.com/wattsched/wattsched/power"
)

// nodes: 1 CPU + 1 GPU per node; type 0 = CPU job, type 1 = GPU job. The
// CPUs of nodes 0-3 draw 130, 100, 120, 110 W on a CPU job; the GPUs draw
// 250, 280, 200, 290 W on a GPU job.
func nodes() *power.HPCNodes {
	return &power.HPCNodes{CPUsPerNode: 1, GPUsPerNode: 1, CPUIdle: 10, GPUIdle: 20, CPUTDP: 150, GPUTDP: 300,
		CPU:    [][]float64{{130, 10}, {100, 10}, {120, 10}, {110, 10}},
		GPU:    [][]float64{{20, 250}, {20, 280}, {20, 200}, {20, 290}},
		GPUJob: []bool{false, true}}
}

func state(now job.Time, queue []*policy.HPCJob, running []*policy.HPCRunning, seed uint64) *policy.HPCState {
	st := &policy.HPCState{Now: now, Queue: queue, Running: running, Free: []bool{true, true, true, true}, FreeCount: 4,
		IdleNode: 30, NodeTDP: 450, Rand: rand.New(rand.NewPCG(seed, 0))}
	for _, r := range running {
		for _, n := range r.Nodes {
			st.Free[n] = false
			st.FreeCount--
		}
	}
	st.Predicted = 4 * st.IdleNode
	return st
}

func mustNew(t *testing.T, a fcfs.Args) *fcfs.Policy {
	t.Helper()
	p, err := fcfs.New(a, policy.HPCDeps{Pred: nodes()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVariationAwareNodeChoice(t *testing.T) {
	cpuJob := &policy.HPCJob{ID: 0, Runtime: 1000, Nodes: 1, Type: 0}
	gpuJob := &policy.HPCJob{ID: 1, Runtime: 1000, Nodes: 1, Type: 1}
	// CGVA: the CPU job takes node 1 (least CPU power), the GPU job node 2 (least GPU power).
	s := mustNew(t, fcfs.Args{Variation: fcfs.FullAware}).ScheduleHPC(state(0, []*policy.HPCJob{cpuJob, gpuJob}, nil, 1))
	if len(s) != 2 || s[0].Nodes[0] != 1 || s[1].Nodes[0] != 2 {
		t.Fatalf("CGVA starts %+v, want job 0 on node 1 and job 1 on node 2", s)
	}
	// CVA: CPU jobs take the least-power node; GPU jobs random nodes, so over
	// seeds the GPU job lands on more than one node.
	seen := map[int]bool{}
	p := mustNew(t, fcfs.Args{Variation: fcfs.CPUAware})
	for seed := range uint64(40) {
		s := p.ScheduleHPC(state(0, []*policy.HPCJob{cpuJob, gpuJob}, nil, seed))
		if len(s) != 2 || s[0].Nodes[0] != 1 {
			t.Fatalf("CVA starts %+v, want the CPU job on node 1", s)
		}
		seen[s[1].Nodes[0]] = true
	}
	if len(seen) < 2 {
		t.Errorf("CVA put the GPU job on nodes %v over 40 seeds; want random placement", seen)
	}
}

func TestBlockingAndEASYBackfill(t *testing.T) {
	// Nodes 0 and 1 run a job until t = 10 s; nodes 2 and 3 are free.
	running := []*policy.HPCRunning{{Job: &policy.HPCJob{ID: 9, Nodes: 2}, End: 10_000, Nodes: []int{0, 1}}}
	head := &policy.HPCJob{ID: 0, Runtime: 5000, Nodes: 3}      // needs 3 nodes: reservation at 10 s, 1 spare node then
	short := &policy.HPCJob{ID: 1, Runtime: 8000, Nodes: 2}     // ends at 8 s, before the reservation
	long := &policy.HPCJob{ID: 2, Runtime: 60_000, Nodes: 2}    // would hold 2 nodes past 10 s: delays the head
	longOne := &policy.HPCJob{ID: 3, Runtime: 60_000, Nodes: 1} // fits on the spare node
	for _, tc := range []struct {
		name     string
		backfill bool
		queue    []*policy.HPCJob
		want     []int
	}{
		{"no backfill: the head blocks", false, []*policy.HPCJob{head, short}, nil},
		{"short job backfills", true, []*policy.HPCJob{head, short}, []int{1}},
		{"long job would delay the head", true, []*policy.HPCJob{head, long}, nil},
		{"long job on the spare node", true, []*policy.HPCJob{head, long, longOne}, []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := mustNew(t, fcfs.Args{Variation: fcfs.FullAware, Backfill: tc.backfill})
			var got []int
			for _, s := range p.ScheduleHPC(state(0, tc.queue, running, 1)) {
				got = append(got, s.Job)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("started %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPowerCapBlocks(t *testing.T) {
	j := &policy.HPCJob{ID: 0, Runtime: 1000, Nodes: 2, Type: 1}
	st := state(0, []*policy.HPCJob{j}, nil, 1)
	// Cheapest GPU nodes: 2 (200+10) and 0 (250+10) = 470 W; system 4*30 - 60 + 470 = 530 W.
	st.PowerLimit = 529
	if s := mustNew(t, fcfs.Args{Variation: fcfs.FullAware}).ScheduleHPC(st); len(s) != 0 {
		t.Fatalf("started %+v above the cap", s)
	}
	st.PowerLimit = 530
	if s := mustNew(t, fcfs.Args{Variation: fcfs.FullAware}).ScheduleHPC(st); len(s) != 1 || s[0].Pred != 470 {
		t.Fatalf("starts %+v, want one start predicted at 470 W", s)
	}
}

func TestLabelsAndValidate(t *testing.T) {
	for a, want := range map[fcfs.Args]string{
		{Variation: fcfs.Unaware}:                  "VU-FCFS",
		{Variation: fcfs.CPUAware, Backfill: true}: "CVA-FCFS-B",
		{Variation: fcfs.FullAware}:                "CGVA-FCFS",
	} {
		if a.Label() != want {
			t.Errorf("%+v: label %q, want %q", a, a.Label(), want)
		}
	}
	if err := (fcfs.Args{Variation: "gpu"}).Validate(); err == nil {
		t.Error("unknown variation: want an error")
	}
}
