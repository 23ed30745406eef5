package tasks_test

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
)

func testEnv() *experiment.Env {
	return &experiment.Env{Version: "test", Registries: builtin.Registries(), Catalog: hw.Default()}
}

func expectedFGDSim(t *testing.T) map[uint64][]float64 {
	t.Helper()
	m, err := tasks.FGDSimPublished()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 10 {
		t.Fatalf("%d published seeds, want 10", len(m))
	}
	return m
}

func runScenario(t *testing.T, s *scenario.Scenario) *tasks.InflationResult {
	t.Helper()
	in, err := tasks.LoadInputs(s)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tasks.RunInflation(testEnv(), s, in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func fgdScenario(t *testing.T, compat string, seeds int) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(`
name: fgd-compat
trace: {pods: default}
compat: `+compat+`
seeds: `+strconv.Itoa(seeds)+`
first_seed: 42
target: 1.3
policies:
  - name: FGD
    scorers: [{policy: fgd, weight: 1000}]
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// In fgd-sim compat mode, FGD on the Default trace gives the public
// simulator's published allocated-GPU share at every integer percent of
// requested capacity, 0..130, for each of the seeds 42..51 it published.
func TestCompatFGDSimMatchesPublishedCurves(t *testing.T) {
	if testing.Short() {
		t.Skip("full-trace runs")
	}
	want := expectedFGDSim(t)
	s := fgdScenario(t, scenario.CompatFGDSim, len(want))
	res := runScenario(t, s)
	for _, run := range res.Runs {
		w, ok := want[run.Seed]
		if !ok {
			t.Fatalf("no published curve for seed %d", run.Seed)
		}
		bad := 0
		for k := range w {
			if math.IsNaN(run.FGDSimAlloc[k]) || math.Abs(run.FGDSimAlloc[k]-w[k]) > 1e-9 {
				if bad < 5 {
					t.Errorf("seed %d percent %d: got %.2f, want %.2f", run.Seed, k, run.FGDSimAlloc[k], w[k])
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("seed %d: %d of %d percents differ", run.Seed, bad, len(w))
		}
	}
}

// In the default mode (math/rand/v2 sampling with replacement, ties by node
// ID), FGD's allocated share averaged over 10 seeds stays within one
// percentage point of the simulator's published average at every percent.
func TestDefaultModeWithinOnePointOfFGDSim(t *testing.T) {
	if testing.Short() {
		t.Skip("full-trace runs")
	}
	s := fgdScenario(t, scenario.CompatNone, 10)
	res := runScenario(t, s)
	cmp, err := tasks.CompareFGDSim(res)
	if err != nil || cmp == nil {
		t.Fatalf("CompareFGDSim = %v, %v", cmp, err)
	}
	worst, at := float64(cmp.MaxAbsDiff), cmp.AtPercent
	t.Logf("largest gap to the simulator's mean curve: %.3f points at %d%%", worst, at)
	if worst > 1.0 {
		t.Errorf("mean allocated share differs by %.3f points at %d%% requested", worst, at)
	}
}

// The four baselines on the Default trace, and FGD and BestFit on the
// 5-column multi-GPU trace and on the GPU-constrained trace, also reproduce
// the FGD simulator's published curves exactly in compat mode (a sample of
// its rows).
func TestCompatSampleMatchesPublishedCurves(t *testing.T) {
	if testing.Short() {
		t.Skip("full-trace runs")
	}
	f, err := os.Open("testdata/fgdsim_expected_sample.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{"02-DotProd": "dotprod", "03-GpuClustering": "gpuclustering", "04-GpuPacking": "gpupacking", "05-BestFit": "bestfit", "06-FGD": "fgd"}
	for _, r := range rows[1:] {
		trace := strings.TrimPrefix(r[0], "openb_pod_list_")
		t.Run(trace+"/"+r[1]+"/"+r[3], func(t *testing.T) {
			s, err := scenario.Parse([]byte(fmt.Sprintf(
				"name: b\ntrace: {pods: %s}\ncompat: fgd-sim\nfirst_seed: %s\npolicies: [{name: X, scorers: [{policy: %s, weight: 1000}]}]\n",
				trace, r[3], policies[r[1]])), "b.yaml")
			if err != nil {
				t.Fatal(err)
			}
			got := runScenario(t, s).Runs[0].FGDSimAlloc
			for k, v := range r[5:] {
				w, _ := strconv.ParseFloat(v, 64)
				if math.Abs(got[k]-w) > 1e-9 {
					t.Fatalf("percent %d: got %.2f, want %.2f", k, got[k], w)
				}
			}
		})
	}
}
