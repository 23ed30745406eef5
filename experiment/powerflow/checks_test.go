package powerflow

import (
	"strings"
	"testing"

	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace"
)

func baseEnv(t *testing.T) *Env {
	t.Helper()
	env, err := newBaseEnv(builtin.Registries(), DefaultSetup())
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// A job that runs on more GPUs than a cluster has is left out of a
// reproduction's runs on it, with a note naming it; the rest keep their
// order and DNNs and are renumbered 0..n-1. Nothing changes when every job
// fits.
func TestFitJobs(t *testing.T) {
	env := baseEnv(t)
	gj := []trace.GPUJob{
		{ID: "1", GPUs: 1, DurationSec: 100, Line: 2},
		{ID: "2", GPUs: 64, DurationSec: 100, SubmitSec: 1, Line: 3},
		{ID: "3", GPUs: 2, DurationSec: 100, SubmitSec: 2, Line: 4},
	}
	jobs := env.Jobs(gj, 42)
	if got, note := fitJobs(gj, jobs, 8); len(got) != 3 || note != "" {
		t.Fatalf("8 nodes (64 GPUs): %d jobs, note %q; want all 3, no note", len(got), note)
	}
	// On one node (8 GPUs) job 2 runs on min(64, its DNN's largest count) > 8.
	got, note := fitJobs(gj, jobs, 1)
	if len(got) != 2 || got[0].ID != 0 || got[1].ID != 1 || got[0].DNN != jobs[0].DNN || got[1].DNN != jobs[2].DNN {
		t.Fatalf("1 node: %+v; want jobs 1 and 3 renumbered 0, 1 with their DNNs", got)
	}
	for _, w := range []string{"skipped 1 of 3 jobs", "1-node cluster (8 GPUs)", "job 2 (line 3) asks for 64 GPUs"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q lacks %q", note, w)
		}
	}
}

// CheckSystem refuses before any run what would make every job wait
// forever or the policy fail to build: a limit below the least job's draw
// (7 x 50 W + 150.5 W = 500.5 W) and a frequency outside the A100's 855-1410 MHz.
func TestCheckSystem(t *testing.T) {
	env := baseEnv(t)
	for _, tc := range []struct {
		name string
		sys  scenario.System
		want string
	}{
		{"preset", scenario.System{Name: "G", Policy: "gandiva"}, ""},
		// 7 idle GPUs x 50 W + the least busy GPU, 150.5 W = 500.5 W
		{"limit 1 W", scenario.System{Name: "P", Policy: "powerflow", Predictions: "fitted", PowerLimit: &scenario.Limit{Watts: 1}}, "power limit 1 W is below the least power any job draws, 500.5 W (one node: 7 idle GPUs x 50 W and one busy GPU at 150.5 W)"},
		{"limit 500 W", scenario.System{Name: "P", Policy: "powerflow", Predictions: "fitted", PowerLimit: &scenario.Limit{Watts: 500}}, "power limit 500 W is below"},
		{"limit 501 W", scenario.System{Name: "P", Policy: "powerflow", Predictions: "fitted", PowerLimit: &scenario.Limit{Watts: 501}}, ""},
		// 0.001 x 32 GPUs x 400 W = 12.8 W
		{"eta tiny", scenario.System{Name: "P", Policy: "powerflow", Predictions: "fitted", PowerLimit: &scenario.Limit{TDPFraction: 0.001}}, "power limit 12.8 W"},
		{"no predictions", scenario.System{Name: "P", Policy: "powerflow"}, "no predictor"},
		{"freq", scenario.System{Name: "G", Policy: "gandiva", Args: map[string]any{"freq_mhz": 99999}}, "855-1410 MHz"},
		{"zeus base freq", scenario.System{Name: "Z", Policy: "zeus", Args: map[string]any{"base": map[string]any{"policy": "tiresias", "args": map[string]any{"freq_mhz": 99999}}}}, "855-1410 MHz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := env.CheckSystem(tc.sys, 4)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}

// On one node (8 GPUs) eta 0.15 gives 0.15 x 8 x 400 = 480 W, below the
// least job's 500.5 W: left out (its run used to end with every job
// unfinished); eta 0.16 gives 512 W: kept.
func TestFeasibleEtas(t *testing.T) {
	env := baseEnv(t)
	rep := &Reproduction{}
	got := env.feasibleEtas([]float64{0.1, 0.15, 0.16, 0.3}, 1, rep)
	if len(got) != 2 || got[0] != 0.16 || got[1] != 0.3 {
		t.Errorf("kept %v, want [0.16 0.3]", got)
	}
	if len(rep.Skipped) != 1 || !strings.Contains(rep.Skipped[0], "eta [0.1 0.15]") {
		t.Errorf("notes %q", rep.Skipped)
	}
	if got := env.feasibleEtas(Etas, 24, nil); len(got) != len(Etas) {
		t.Errorf("24 nodes: kept %v of %v", got, Etas)
	}
}
