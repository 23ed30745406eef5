package experiment_test

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/internal/cli"
)

// expectedFGDSim reads the FGD simulator's published curves by seed.
func expectedFGDSim(t *testing.T) map[uint64][]float64 {
	t.Helper()
	f, err := os.Open("testdata/fgdsim_expected_default_fgd.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint64][]float64{}
	for _, r := range rows[1:] {
		seed, _ := strconv.ParseUint(r[3], 10, 64)
		var v []float64
		for _, s := range r[5:] {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			v = append(v, x)
		}
		out[seed] = v
	}
	return out
}

func fgdScenario(t *testing.T, compat string, seeds int) *experiment.Scenario {
	t.Helper()
	s, err := experiment.Parse([]byte(`
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
	s := fgdScenario(t, experiment.CompatFGDSim, len(want))
	in, err := experiment.LoadInputs(s.Trace)
	if err != nil {
		t.Fatal(err)
	}
	r := &experiment.Runner{Registry: cli.Registry(), Catalog: hw.Default()}
	res, err := r.RunInflation(s, in)
	if err != nil {
		t.Fatal(err)
	}
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
