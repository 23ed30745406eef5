package cedla

import (
	"bytes"
	"crypto/sha256"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/solver"
)

// runFiles runs CE-DLA (both problems) on a slotted scenario of the
// --quick size (10 nodes per type, 96 slots, a 24-slot window, 20 jobs at
// 1e4 requests/min, seed 1) and returns what a run writes: runs.csv,
// plans.csv and the jobs and timeline of each run.
func runFiles(t *testing.T) map[string][]byte {
	t.Helper()
	tb, err := EmbeddedTable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSetup(tb, 10, 96, 24, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	var runs []*Metrics
	for _, sys := range []string{"CE-DLA soft", "CE-DLA hard"} {
		m, err := s.Run(Case{System: sys, Jobs: 20, ReqPerMin: 1e4, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, m)
	}
	files := map[string][]byte{"runs.csv": RunsCSV(runs), "plans.csv": PlansCSV(runs)}
	for _, m := range runs {
		var jobs, timeline [][]string
		for _, j := range m.result.Jobs {
			jobs = append(jobs, []string{report.F(float64(j.ID)), report.F(float64(j.Finish)), report.F(j.Left), report.F(float64(j.Starts))})
		}
		for _, smp := range m.result.Samples {
			timeline = append(timeline, []string{report.F(float64(smp.Slot)), report.F(float64(smp.Power)), report.F(float64(smp.Training)), report.F(float64(smp.Serving))})
		}
		files[m.System+" jobs"], files[m.System+" timeline"] = report.CSV(jobs), report.CSV(timeline)
	}
	return files
}

// The same slotted scenario gives byte-identical files run alone and run
// beside a CPU-bound goroutine pool (four busy goroutines per CPU, with
// GOMAXPROCS raised to match), so that no plan depends on how fast the
// machine is at the time (issue 39). A wall-clock limit that decides
// plans makes them differ.
func TestSameFilesUnderLoad(t *testing.T) {
	if !solver.Available() {
		t.Skip("built without HiGHS (build tag highs): make test runs this test")
	}
	if testing.Short() {
		t.Skip("-short: two runs of a --quick-sized scenario, one under load")
	}
	alone := runFiles(t)
	var stop atomic.Bool
	var wg sync.WaitGroup
	busy := 4 * runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(busy + 1))
	for k := range busy {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.Sum256([]byte{byte(k)})
			for !stop.Load() {
				h = sha256.Sum256(h[:])
			}
		}()
	}
	loaded := runFiles(t)
	stop.Store(true)
	wg.Wait()
	if len(alone["plans.csv"]) == 0 || bytes.Count(alone["plans.csv"], []byte("\n")) < 10 {
		t.Fatalf("plans.csv has fewer than 10 plans:\n%s", alone["plans.csv"])
	}
	for name, want := range alone {
		if got := loaded[name]; !bytes.Equal(got, want) {
			t.Errorf("%s differs under load:\nalone:\n%s\nloaded:\n%s", name, want, got)
		}
	}
}

// A run under the second plan reading that reuses the first reading's plans
// (RunReadings, Memo) writes the same runs.csv row and plans as a run
// under that reading alone, which plans every state itself: the reading
// never changes a planner's state.
func TestReadingsReusePlans(t *testing.T) {
	if !solver.Available() {
		t.Skip("built without HiGHS (build tag highs): make test runs this test")
	}
	if testing.Short() {
		t.Skip("-short: three runs of a --quick-sized CE-DLA hard")
	}
	tb, err := EmbeddedTable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSetup(tb, 10, 96, 24, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := Case{System: "CE-DLA hard", Jobs: 20, ReqPerMin: 1e4, Seed: 1}
	both, err := s.RunReadings(c, policy.PlanReadings)
	if err != nil {
		t.Fatal(err)
	}
	c.Reading = policy.AsPlanned
	alone, err := s.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func([]*Metrics) []byte{"runs.csv": RunsCSV, "plans.csv": PlansCSV} {
		if got, want := f(both[1:]), f([]*Metrics{alone}); !bytes.Equal(got, want) {
			t.Errorf("%s of the reused plans differs from a run alone:\n%s\nalone:\n%s", name, got, want)
		}
	}
}
