package tasks

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/sim"
)

// A gang is one job in the waits: two pods of gang g (wait 10 s) and a
// task of its own (wait 2 s) give a mean wait of (10 + 2) / 2 = 6 s over
// the jobs, not (10 + 10 + 2) / 3 over the pods.
func TestGangWaitsPerJob(t *testing.T) {
	res := &sim.Result{
		Tasks: []sim.TaskResult{
			{Name: "g-0", Gang: "g", Submit: 0, Start: 10000, End: 20000},
			{Name: "g-1", Gang: "g", Submit: 0, Start: 10000, End: 20000},
			{Name: "solo", Submit: 1000, Start: 3000, End: 4000},
		},
		Gangs: []sim.GangResult{
			{Name: "g", Pods: 2, GPUMilli: 16000, Submit: 0, Start: 10000, End: 20000, FragWait: 4000},
			{Name: "h", Pods: 3, GPUMilli: 3000, Submit: 5000, Start: -1, End: -1, FragWait: 6000},
		},
	}
	wait, jct := taskTimes(res)
	if diff := cmp.Diff([]float64{2, 10}, wait); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{3, 20}, jct); diff != "" {
		t.Errorf("JCTs (-want +got):\n%s", diff)
	}
	got := summarizeGangs(res.Gangs)
	// Started: g only (wait 10 s); fragmentation: 4 s (g) and 6 s (h,
	// never started) over 2 gangs = 5 s; share over the started: 4/10.
	want := &GangSummary{Gangs: 2, Started: 1, MeanWaitS: 10, P50WaitS: 10, P95WaitS: 10, FragWaited: 2, FragWaitS: 5, FragShare: 0.4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if summarizeGangs(nil) != nil {
		t.Error("a summary without gangs")
	}
	none := summarizeGangs([]sim.GangResult{{Name: "x", Start: -1, End: -1}})
	if !math.IsNaN(float64(none.MeanWaitS)) || !math.IsNaN(float64(none.FragShare)) {
		t.Errorf("no gang started: mean wait %v, frag share %v, want NaN (null)", none.MeanWaitS, none.FragShare)
	}
}
