package sim_test

import (
	"errors"
	"math"
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fcfs"
	"github.com/wattsched/wattsched/policy/vahrm"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// threeNodes: 1 CPU + 1 GPU per node; type 0 = CPU job, type 1 = GPU job.
// Node n's CPU draws 100+10n W on a CPU job; GPUs draw 200 W on GPU jobs.
func threeNodes() *power.HPCNodes {
	return &power.HPCNodes{CPUsPerNode: 1, GPUsPerNode: 1, CPUIdle: 10, GPUIdle: 20, CPUTDP: 150, GPUTDP: 300,
		CPU: [][]float64{{100, 10}, {110, 10}, {120, 10}}, GPU: [][]float64{{20, 200}, {20, 200}, {20, 200}},
		GPUJob: []bool{false, true}}
}

func hpcJobs() []policy.HPCJob {
	return []policy.HPCJob{
		{ID: 0, Runtime: 10000, Nodes: 2, Type: 0},
		{ID: 1, Runtime: 5000, Nodes: 2, Type: 0},
		{ID: 2, Runtime: 3000, Nodes: 1, Type: 0},
	}
}

func starts(r *sim.HPCResult) []job.Time {
	var out []job.Time
	for _, j := range r.Jobs {
		out = append(out, j.Start)
	}
	return out
}

func TestHPCSchedulers(t *testing.T) {
	truth := threeNodes()
	mk := func(s policy.HPCScheduler, err error) policy.HPCScheduler {
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name string
		s    policy.HPCScheduler
		want []job.Time
	}{
		// FCFS: job 1 (2 nodes) waits for job 0; job 2 waits behind it until 10 s.
		{"VU-FCFS", mk(fcfs.New(fcfs.Args{Variation: fcfs.Unaware}, policy.HPCDeps{Pred: truth})), []job.Time{0, 10000, 10000}},
		// EASY: job 2 (3 s) ends before job 1's reservation at 10 s, so it backfills at 0.
		{"VU-FCFS-B", mk(fcfs.New(fcfs.Args{Variation: fcfs.Unaware, Backfill: true}, policy.HPCDeps{Pred: truth})), []job.Time{0, 10000, 0}},
		// VAHRM: job 1 does not fit and is skipped, job 2 starts at 0.
		{"VAHRM", mk(vahrm.New(vahrm.Args{}.Default(), policy.HPCDeps{Pred: truth})), []job.Time{0, 10000, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := sim.RunHPC(hpcJobs(), tc.s, sim.HPCOptions{Truth: truth, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := starts(r)
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("starts %v, want %v", got, tc.want)
				}
			}
			for _, j := range r.Jobs {
				if j.End-j.Start != hpcJobs()[j.ID].Runtime {
					t.Fatalf("job %+v", j)
				}
			}
		})
	}
}

// VAHRM puts a CPU job on the lowest-power node; energy is the exact
// integral; the power cap holds for predictions.
func TestVAHRMPicksCheapNodesAndEnergy(t *testing.T) {
	truth := threeNodes()
	s, _ := vahrm.New(vahrm.Args{}.Default(), policy.HPCDeps{Pred: truth})
	jobs := []policy.HPCJob{{ID: 0, Runtime: 10000, Nodes: 1, Type: 0}}
	r, err := sim.RunHPC(jobs, s, sim.HPCOptions{Truth: truth})
	if err != nil {
		t.Fatal(err)
	}
	// Node 0 is cheapest (100 W CPU + 20 W idle GPU = 120 W). System: 2 idle nodes
	// (30 W each) + 120 W for 10 s = 1800 J.
	if r.Jobs[0].Actual != 120 || math.Abs(float64(r.Energy)-1800) > 1e-9 {
		t.Errorf("job power %v W, energy %v J; want 120 W and 1800 J", r.Jobs[0].Actual, r.Energy)
	}
	// A cap of 150 W: idle system (90 W) + 90 W more would be 180 W: the job never starts.
	if _, err := sim.RunHPC(jobs, s, sim.HPCOptions{Truth: truth, PowerLimit: 150}); err == nil {
		t.Error("a job above the cap must never start (and the run report it)")
	}
}

type cheater struct{}

func (cheater) ScheduleHPC(st *policy.HPCState) []policy.HPCStart {
	return []policy.HPCStart{{Job: st.Queue[0].ID, Nodes: []int{0, 1}, Pred: 1e6}}
}

func TestHPCRefusesStartsAboveCap(t *testing.T) {
	_, err := sim.RunHPC(hpcJobs(), cheater{}, sim.HPCOptions{Truth: threeNodes(), PowerLimit: 1000})
	if !errors.Is(err, sim.ErrPolicy) {
		t.Fatalf("err = %v, want ErrPolicy", err)
	}
}

func TestFirstRunProfilingOverhead(t *testing.T) {
	truth := threeNodes()
	s, _ := vahrm.New(vahrm.Args{}.Default(), policy.HPCDeps{Pred: truth})
	jobs := []policy.HPCJob{{ID: 0, Runtime: 10000, Nodes: 1, Type: 1, FirstRun: true}}
	r, err := sim.RunHPC(jobs, s, sim.HPCOptions{Truth: truth, ProfileOverhead: 0.05, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// 10 s + 5% profiling; predicted at node TDP 150 + 300 = 450 W.
	if j := r.Jobs[0]; j.End != 10500 || !j.Profiled || j.Pred != 450 {
		t.Errorf("first-run job %+v", j)
	}
}

// EASY backfilling under a binding power cap: the head's reservation
// counts power as well as nodes. Three nodes idle at 30 W each (90 W). A
// (1 node, GPU job: 210 W) runs until 10 s; the head H (2 nodes, GPU job)
// needs 90 + 360 W: it cannot start beside A under 500 W, but can when A
// ends (450 W). B (1 node, CPU job, +90..110 W, 60 s) has a node but would
// still run at 10 s and take 540 W with H: backfilling it on nodes alone
// delayed H to 62 s. Now H starts at 10 s and B after H.
func TestEASYBackfillRespectsThePowerCap(t *testing.T) {
	truth := threeNodes()
	jobs := []policy.HPCJob{
		{ID: 0, Submit: 0, Runtime: 10000, Nodes: 1, Type: 1},
		{ID: 1, Submit: 1000, Runtime: 5000, Nodes: 2, Type: 1},
		{ID: 2, Submit: 2000, Runtime: 60000, Nodes: 1, Type: 0},
	}
	for _, v := range []fcfs.Variation{fcfs.Unaware, fcfs.FullAware} {
		s, err := fcfs.New(fcfs.Args{Variation: v, Backfill: true}, policy.HPCDeps{Pred: truth})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sim.RunHPC(jobs, s, sim.HPCOptions{Truth: truth, PowerLimit: 500})
		if err != nil {
			t.Fatal(err)
		}
		if got := starts(res); got[1] != 10000 || got[2] != 15000 {
			t.Errorf("%s: starts %v, want the head at 10 s and the long job after it (15 s)", v, got)
		}
	}
}
