package vahrm

import (
	"strings"
	"testing"

	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/swf"
)

// `reproduce vahrm --jobs 1` failed with "event posted at
// -9223372036854775808 ms": a one-job Lublin stream has no submission
// span, its own load is +Inf, the shrink ratio load/+Inf = 0 and the
// submit time 0 x 1000 / 0 = NaN became the smallest int64. Such a seed
// is now skipped with a reason; two- and three-job streams run.
func TestArrivalsFewJobs(t *testing.T) {
	reg := builtin.Registries()
	systems := mustSystems("VAHRM+TSMVA")
	vu := mustSystems("VU-FCFS")[0]
	for _, tc := range []struct {
		jobs    int
		skipped bool
	}{{1, true}, {2, false}, {3, false}} {
		e, err := NewEnvIdeal(reg, tc.jobs, 42)
		if err != nil {
			t.Fatal(err)
		}
		e.Workloads = Workloads()[:1]
		rel, stats, skipped, err := e.Arrivals(DefaultSetting(), []float64{0.9}, 1, systems, vu, 1, nil)
		if err != nil {
			t.Fatalf("%d jobs: %v", tc.jobs, err)
		}
		if tc.skipped {
			if len(skipped) != 1 || !strings.Contains(skipped[0], "arrive at one instant") || rel != nil || stats != nil {
				t.Errorf("%d jobs: skipped %q, %d runs, %d stats; want one reason and no runs", tc.jobs, skipped, len(rel), len(stats))
			}
			continue
		}
		if len(skipped) != 0 || len(rel) != 1 || len(stats) != 1 {
			t.Errorf("%d jobs: skipped %q, %d runs, %d stats; want none skipped, 1 run, 1 stat", tc.jobs, skipped, len(rel), len(stats))
		}
	}
}

func TestReproduceOneJob(t *testing.T) {
	rep, err := Reproduce("test", Options{Registries: builtin.Registries(), Jobs: 1, Quick: true, Seed: 42, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 1 || len(rep.Arrivals) != 0 {
		t.Errorf("skipped %q, %d arrival runs; want the genuine-arrivals study skipped with its reason", rep.Skipped, len(rep.Arrivals))
	}
	if _, err := Results(rep); err != nil {
		t.Errorf("results of a one-job reproduction: %v", err)
	}
}

// nodes is ceil(processors / ppn) capped at the system's 540, without the
// overflow of processors + ppn - 1 at a huge ppn.
func TestNodesPerJob(t *testing.T) {
	for _, tc := range []struct {
		procs int64
		ppn   int
		want  int
	}{
		{1, 1, 1}, {128, 1, 128}, {1000, 1, Nodes}, // capped at 540
		{9, 4, 3},                     // ceil(9/4) = 3
		{8, 4, 2},                     // 8/4 = 2
		{1e7, swf.MaxProcs, 1},        // the largest valid ppn: one node
		{1e7, 1<<62 + (1<<62 - 1), 1}, // ppn near MaxInt64: one node, not a negative count
	} {
		l := &Log{ProcsPerNode: tc.ppn}
		if got := l.nodes(swf.Job{AllocProcs: tc.procs}); got != tc.want {
			t.Errorf("%d processors, %d per node: %d nodes, want %d", tc.procs, tc.ppn, got, tc.want)
		}
	}
}

// CheckSR refuses a ratio that stretches the log's span past the SWF
// reader's bound: the NASA log's first 100 jobs span s seconds, so SR
// s/1e9 is the smallest allowed.
func TestCheckSR(t *testing.T) {
	log, err := LoadLog(100)
	if err != nil {
		t.Fatal(err)
	}
	span := float64(log.Jobs[len(log.Jobs)-1].Submit - log.Jobs[0].Submit)
	lo := span / swf.MaxSeconds
	for _, tc := range []struct {
		sr   float64
		want string
	}{
		{1, ""}, {1000, ""}, {lo * 1.01, ""},
		{lo * 0.99, "above 1e+09 s"}, {1e-300, "above 1e+09 s"},
		{0, "want a positive number"}, {-1, "want a positive number"},
	} {
		err := log.CheckSR(tc.sr)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sr %g: %v, want %q", tc.sr, err, tc.want)
		}
	}
}

// The scenario's bound on procs_per_node is the SWF reader's.
func TestScenarioProcsBound(t *testing.T) {
	y := "name: t\nhpc:\n  swf: nasa-ipsc\n  procs_per_node: 10000000\n"
	if _, err := scenario.Parse([]byte(y), "t.yaml"); err != nil {
		t.Fatalf("procs_per_node at swf.MaxProcs (%g): %v", float64(swf.MaxProcs), err)
	}
	y = "name: t\nhpc:\n  swf: nasa-ipsc\n  procs_per_node: 10000001\n"
	if _, err := scenario.Parse([]byte(y), "t.yaml"); err == nil || !strings.Contains(err.Error(), "hpc.procs_per_node: 10000001") {
		t.Fatalf("procs_per_node above swf.MaxProcs: %v", err)
	}
}
