package powerflow

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/trace/philly"
)

func pfQuick(t *testing.T) *Reproduction {
	t.Helper()
	gj, err := philly.Day()
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSetup()
	s.Nodes = 4
	rep, err := Reproduce("test", Options{Registries: builtin.Registries(), Setup: s, Quick: true, Jobs: gj[:200], JobsSource: "first 200 jobs of the Philly day"})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestPowerFlowReproductionInvariants(t *testing.T) {
	rep := pfQuick(t)
	c := rep.Checks
	if c.Runs == 0 || c.MaxPredOverLimit > 1+1e-9 || c.MaxAccountingErr > 1e-9 {
		t.Fatalf("checks %+v: predicted power above the limit or energy parts not adding up", c)
	}
	for _, m := range rep.Models {
		if m.ThroughputMAPE >= 0.10 || m.EnergyMAPE >= 0.10 {
			t.Errorf("%s: MAPE %.3f / %.3f, want under 10%% (Table 2)", m.DNN, m.ThroughputMAPE, m.EnergyMAPE)
		}
	}
	seen := map[string]bool{}
	for _, r := range rep.Curves {
		seen[r.System] = true
		if r.AvgJCTh <= 0 || r.EnergyMWh <= 0 {
			t.Errorf("%s %v: JCT %v h, energy %v MWh", r.System, r.Param, r.AvgJCTh, r.EnergyMWh)
		}
	}
	for _, s := range Systems {
		if !seen[s] {
			t.Errorf("no curve for %s", s)
		}
	}
	dir := t.TempDir()
	write(t, dir, rep)
	for _, f := range []string{"summary.json", "curves.csv", "improvement.csv", "models.csv", "timeline.csv", "oracle.csv", "sensitivity.csv", "jct_vs_energy.svg", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty", f)
		}
	}
	// Same inputs, same bytes.
	dir2 := t.TempDir()
	write(t, dir2, pfQuick(t))
	for _, f := range []string{"summary.json", "curves.csv", "timeline.csv", "sensitivity.csv"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(dir2, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two identical runs", f)
		}
	}
}

func write(t *testing.T, dir string, rep *Reproduction) {
	t.Helper()
	res, err := Results(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
}

func TestCurveInterpolation(t *testing.T) {
	runs := []RunResult{{System: "A", EnergyMWh: 2, AvgJCTh: 10}, {System: "A", EnergyMWh: 4, AvgJCTh: 6}, {System: "B", EnergyMWh: 3, AvgJCTh: 1}}
	// Halfway between (2, 10) and (4, 6): 8.
	if v := curveAt(runs, "A", 3); v != 8 {
		t.Fatalf("got %v, want 8", v)
	}
	// An energy budget past every run: the system's fastest run, which
	// uses less, flagged as such.
	if v, beyond := curveAtBudget(runs, "A", 5); v != 6 || !beyond {
		t.Fatalf("past every run: got %v (beyond %v), want 6, true", v, beyond)
	}
	if _, beyond := curveAtBudget(runs, "A", 3); beyond {
		t.Fatal("inside the curve flagged as beyond it")
	}
}

// A dominated point (more energy and a longer JCT than another point of the
// same system) must not bend the curve: the sensitivity study compared
// PowerFlow with a baseline through such points.
func TestCurveOnParetoFrontierOnly(t *testing.T) {
	runs := []RunResult{
		{System: "A", EnergyMWh: 2, AvgJCTh: 10},
		{System: "A", EnergyMWh: 3, AvgJCTh: 30}, // dominated by (2, 10)
		{System: "A", EnergyMWh: 4, AvgJCTh: 6},
		{System: "A", EnergyMWh: 5, AvgJCTh: 9}, // dominated by (4, 6)
	}
	if got := frontier(runs, "A"); len(got) != 2 || got[0].EnergyMWh != 2 || got[1].EnergyMWh != 4 {
		t.Fatalf("frontier %+v, want (2, 10) and (4, 6)", got)
	}
	// Through the dominated point the old helper gave 20 at 2.5 MWh.
	if v := curveAt(runs, "A", 2.5); v != 9 {
		t.Fatalf("at 2.5 MWh: %v, want 9 (between (2, 10) and (4, 6))", v)
	}
	// Past the frontier, up to the last run's energy: the lowest JCT.
	if v := curveAt(runs, "A", 4.5); v != 6 {
		t.Fatalf("at 4.5 MWh: %v, want 6", v)
	}
	if v := curveAt(runs, "A", 1); v == v {
		t.Fatalf("below the frontier: %v, want NaN", v)
	}
}

func TestLoadPhillyJobsWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "philly.csv")
	os.WriteFile(path, []byte("timestamp,duration,num_gpus,gpu_time,cluster\n"+
		"2017-10-12 23:00:00,100,1,100,c\n2017-10-13 00:30:00,200,2,400,c\n2017-10-13 03:00:00,300,4,1200,c\n"), 0o644)
	got, err := LoadPhillyJobs(path, "2017-10-13 00:00:00", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].SubmitSec != 1800 || got[0].GPUs != 2 || got[0].DurationSec != 200 {
		t.Errorf("window: %+v, want the one job at 1800 s", got)
	}
	if all, err := LoadPhillyJobs(path, "", 24); err != nil || len(all) != 3 || all[0].SubmitSec != 0 {
		t.Errorf("from the earliest job: %+v %v", all, err)
	}
	if _, err := LoadPhillyJobs(path, "13/10/2017", 24); err == nil {
		t.Error("bad start accepted")
	}
}
