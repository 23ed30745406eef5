package vahrm

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/wattsched/wattsched/fit"
	"github.com/wattsched/wattsched/trace/gpuvar"
	"github.com/wattsched/wattsched/trace/lublin"
)

// A ratio to a baseline figure of 0 is undefined: null in summary.json,
// never +Inf (which JSON cannot encode: `reproduce vahrm --jobs 30`
// failed after computing everything).
func TestUndefinedRatioIsNull(t *testing.T) {
	base := &RunResult{System: "VU-FCFS", EnergyJ: 100, MeanTATS: 10, ThroughputPH: 5, MeanWaitS: 0}
	r := &RunResult{System: "VAHRM", EnergyJ: 90, MeanTATS: 12, ThroughputPH: 5, MeanWaitS: 3}
	rel := relative("x", r, base)
	b, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"waiting_ratio":null`) || !strings.Contains(string(b), `"turnaround_ratio":1.2`) {
		t.Errorf("%s", b)
	}
	base.MeanWaitS, r.MeanWaitS = 0, 0
	if b, _ := json.Marshal(relative("x", r, base)); !strings.Contains(string(b), `"waiting_ratio":1`) {
		t.Errorf("0/0 should be 1: %s", b)
	}
}

// arrivalStats pools the seeds of a load: two seeds with energy savings
// 0.02 and 0.04 (each the mean of its workloads) give mean 0.03 and
// sample sd sqrt(2 x 0.01^2 / 1) = 0.01414; the longest wait is the max.
func TestArrivalStatsPoolsSeeds(t *testing.T) {
	var rel []Relative
	for s, save := range map[int]float64{1: 0.02, 2: 0.04} {
		for w := 0; w < 3; w++ {
			rel = append(rel, Relative{Setting: arrivalLabel(0.7, s), System: "VAHRM+TSMVA", Workload: w, EnergySave: save,
				TATRatio: 1, ThroughRat: 1, WaitRatio: Num(save * 10), MaxWaitS: float64(100 * s)})
		}
	}
	st := arrivalStats(rel, []float64{0.7}, 2)
	if len(st) != 1 {
		t.Fatalf("%d stats, want 1: %+v", len(st), st)
	}
	a := st[0]
	if a.Seeds != 2 || math.Abs(float64(a.EnergySave)-0.03) > 1e-12 || math.Abs(float64(a.EnergySaveSD)-0.01414213562) > 1e-9 ||
		a.MaxWaitS != 200 || math.Abs(float64(a.WaitRatio)-0.3) > 1e-12 {
		t.Errorf("got %+v; want seeds 2, saving 0.03 +- 0.01414, waiting 0.3, max wait 200", a)
	}
	if n := len(pooled(rel, 0.7, 2)); n != 6 {
		t.Errorf("pooled %d runs, want 6", n)
	}
}

// The shrink ratio Arrivals uses gives exactly the offered load asked for.
func TestArrivalLoadRule(t *testing.T) {
	gen, err := lublin.Generate(lublin.Default(Nodes), 2000, 5)
	if err != nil {
		t.Fatal(err)
	}
	log, err := LogFrom(gen, LublinSource, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ArrivalLoads {
		if got := log.Utilization(l / log.Utilization(1)); math.Abs(got-l) > 1e-9 {
			t.Errorf("load %.2f: utilisation %.6f", l, got)
		}
	}
}

// The CPU half of the prediction table comes from the model fitted on
// simulated profiles, not from the truth: it differs from the truth, yet
// follows each CPU's variation (the truth spreads CPUs by 6%, three
// profile runs with 2% noise pin each CPU down to about 2%/sqrt(3)).
func TestFittedCPUFollowsDevices(t *testing.T) {
	runs, err := gpuvar.Longhorn()
	if err != nil {
		t.Fatal(err)
	}
	truth, _, err := Truth(runs, 42)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := FittedCPU(truth, 42)
	if err != nil {
		t.Fatal(err)
	}
	for k := range vahrmCPUMeanW {
		var p, a []float64
		same := 0
		for d := range truth.CPU {
			p, a = append(p, cf.Pred[d][k]), append(a, truth.CPU[d][k])
			if cf.Pred[d][k] == truth.CPU[d][k] {
				same++
			}
		}
		if same > len(a)/100 {
			t.Errorf("type %d: %d of %d predictions equal the truth exactly", k, same, len(a))
		}
		if c := stat.Correlation(p, a, nil); c < 0.8 {
			t.Errorf("type %d: correlation of predictions with the true per-CPU power %.3f, want >= 0.8", k, c)
		}
		if m := fit.MAPE(p, a); m > 3 {
			t.Errorf("type %d: MAPE vs truth %.2f%%, want <= 3%%", k, m)
		}
	}
	if cf.MAPE <= 0 || cf.MAPE > 5 {
		t.Errorf("fresh-run MAPE %.2f%%, want in (0, 5]", cf.MAPE)
	}
}

// Every GPU of the system gets its own TSMVA prediction: the 1,000-odd
// unmeasured GPUs have simulated profile history, so wherever a GPU's
// history differs from stage 1's application baseline its prediction
// differs from that baseline too, and the predictions follow the true
// per-GPU power (they are fitted, never the truth itself).
func TestFittedGPUEveryDevice(t *testing.T) {
	runs, err := gpuvar.Longhorn()
	if err != nil {
		t.Fatal(err)
	}
	truth, _, err := Truth(runs, 42)
	if err != nil {
		t.Fatal(err)
	}
	g, err := FittedGPU(runs, truth, 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Pred) != len(truth.GPU) {
		t.Fatalf("%d predicted GPUs, want %d", len(g.Pred), len(truth.GPU))
	}
	// Most pairs were never measured (172-392 GPUs per application).
	if g.Simulated < len(truth.GPU)*len(vahrmGPUApps)/2 {
		t.Errorf("%d simulated pairs of %d", g.Simulated, len(truth.GPU)*len(vahrmGPUApps))
	}
	for k, app := range vahrmGPUApps {
		if !(g.RunCV[k] > 0 && g.RunCV[k] < 0.2) {
			t.Errorf("%s: run-to-run variation %v, want a measured value in (0, 0.2)", app, g.RunCV[k])
		}
		var p, a []float64
		atBase, same := 0, 0
		for d := range truth.GPU {
			v := g.Pred[d][3+k]
			if v == g.Baseline[k] && math.Abs(g.HistMean[d][k]-g.Baseline[k]) > 1e-9 {
				atBase++
			}
			if v == truth.GPU[d][3+k] {
				same++
			}
			p, a = append(p, v), append(a, truth.GPU[d][3+k])
		}
		if atBase > 0 || g.AtBaseline > 0 {
			t.Errorf("%s: %d GPUs predicted at the stage-1 baseline %.2f W although their history differs (AtBaseline %d)", app, atBase, g.Baseline[k], g.AtBaseline)
		}
		if same > len(a)/100 {
			t.Errorf("%s: %d of %d predictions equal the truth exactly", app, same, len(a))
		}
		if c := stat.Correlation(p, a, nil); c < 0.6 {
			t.Errorf("%s: correlation of predictions with the true per-GPU power %.3f, want >= 0.6", app, c)
		}
	}
	if !(g.MAPE > 0 && g.MAPE < 10) {
		t.Errorf("fresh-run MAPE %.2f%%, want in (0, 10)", g.MAPE)
	}
}
