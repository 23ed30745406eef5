package tasks

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/validate"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/scenario"
)

// TestModelErrorsAreTheStudys: the embedded error figures are what
// `validate power` measures on the shared traces (validate.Result.Bands).
func TestModelErrorsAreTheStudys(t *testing.T) {
	full := filepath.Join("..", "..", validate.DefaultTraces)
	if _, err := os.Stat(full); err != nil {
		t.Skipf("no shared traces at %s", full)
	}
	res, err := validate.Measure(full, hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	var got []modelErrorFigure
	for _, f := range res.Bands() {
		got = append(got, modelErrorFigure{PowerModel: f.PowerModel, Group: f.Group, Catalog: f.Catalog, Workloads: f.Workloads, Points: f.Points, P95Rel: f.P95RelPred, Bias: f.BiasRel})
	}
	if diff := cmp.Diff(modelErrors, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 })); diff != "" {
		t.Errorf("embedded figures (-want +got):\n%s", diff)
	}
}

func figure(pm, group string) modelErrorFigure {
	i := slices.IndexFunc(modelErrors, func(f modelErrorFigure) bool { return f.PowerModel == pm && f.Group == group })
	return modelErrors[i]
}

// TestModelErrorFor: a measured GPU model gets its group's figure, under
// either power model (measured-busy's catalog turns busy_w into a curve,
// which is still the measured figure); a model without measurements, or
// with an operator's curve, the pooled one, labelled.
func TestModelErrorFor(t *testing.T) {
	cat := hw.Default()
	mb, err := cat.MeasuredBusy()
	if err != nil {
		t.Fatal(err)
	}
	// Under pwr, a catalog whose P100 has a curve (here measured-busy's)
	// prices it by the curve, which no measurement checks.
	curved := mb
	for _, c := range []struct {
		name       string
		cat        *hw.Catalog
		pm, gpu    string
		want       modelErrorFigure
		wantPooled bool
	}{
		{"pwr V100", cat, "", "V100M16", figure("pwr", "V100"), false},
		{"pwr A100", cat, scenario.PowerModelPWR, "A100", figure("pwr", "A100"), false},
		{"pwr H100", cat, "", "H100", figure("pwr", pooledGroup), true},
		{"measured-busy P100", mb, scenario.PowerModelMeasuredBusy, "P100", figure("measured-busy", "P100"), false},
		{"measured-busy H100", mb, scenario.PowerModelMeasuredBusy, "H100", figure("measured-busy", pooledGroup), true},
		{"pwr P100 with a curve", curved, "", "P100", figure("pwr", pooledGroup), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := modelErrorFor(c.cat, c.pm, c.gpu)
			if got.P95Rel != c.want.P95Rel || got.Bias != c.want.Bias || strings.HasPrefix(got.Source, "pooled") != c.wantPooled {
				t.Errorf("got %+v, want p95 %v bias %v pooled %v", got, c.want.P95Rel, c.want.Bias, c.wantPooled)
			}
		})
	}
}

// TestBandAndVerdictByHand: the reference's busy-GPU energy is 10 kWh on
// GPU model A (p95 0.5) and 2 kWh on B (p95 0.25); the other system's 8
// and 4 kWh. Bands: reference 10x0.5 + 2x0.25 = 5.5, other 8x0.5 + 4x0.25
// = 5. Priced by the same model, the bound of the difference is |8-10|x0.5
// + |4-2|x0.25 = 1.5 kWh: a difference of 1 kWh is within it, of 2 kWh
// beyond. Priced by different models nothing cancels: 5 + 5.5 = 10.5,
// and 2 kWh is within.
func TestBandAndVerdictByHand(t *testing.T) {
	sys := func(energy float64, a, b experiment.Num) CompareSummary {
		return CompareSummary{Metrics: map[string]experiment.MeanCI{"energy_kwh": {Mean: experiment.Num(energy)}},
			ByGPUModel: []ModelUsage{{Model: "A", GPUBusyKWh: a, ModelP95Rel: 0.5}, {Model: "B", GPUBusyKWh: b, ModelP95Rel: 0.25}, {Model: NoGPUModel}}}
	}
	ref := sys(100, 10, 2)
	if b := usageBand(ref.ByGPUModel); math.Abs(float64(b)-5.5) > 1e-12 {
		t.Errorf("reference band %v, want 5.5", b)
	}
	for _, c := range []struct {
		energy    float64
		same      bool
		bound     float64
		verdict   string
		explained string
	}{
		{101, true, 1.5, WithinModelError, "1 <= 1.5"},
		{98, true, 1.5, BeyondModelError, "2 > 1.5"},
		{98, false, 10.5, WithinModelError, "2 <= 5 + 5.5"},
	} {
		v := judgeModelError(sys(c.energy, 8, 4), ref, c.same)
		if math.Abs(float64(v.BoundKWh)-c.bound) > 1e-12 || v.Verdict != c.verdict || math.Abs(float64(v.DiffKWh)-(c.energy-100)) > 1e-12 {
			t.Errorf("%s: got %+v, want bound %v, %q", c.explained, v, c.bound, c.verdict)
		}
	}
}

// TestModelUsageBand: the fixture's H100 nodes (d, a) had 1 and 3 kWh of
// busy GPUs, the L40S node 2 kWh: under pwr neither model is measured, so
// both take the pooled p95: bands 4 x p and 2 x p, the run's 6 x p.
func TestModelUsageBand(t *testing.T) {
	nodes, pods, res := usageFixture()
	kwh := func(x float64) hw.Joules { return hw.Joules(x * 3.6e6) }
	res.GPUBusyEnergy = []hw.Joules{kwh(1), 0, kwh(2), kwh(3)}
	us := modelUsage(nodes, pods, res, runErrors(nil, ""))
	p := figure("pwr", pooledGroup).P95Rel
	for i, want := range []float64{4, 2, 0} {
		if math.Abs(float64(us[i].GPUBusyKWh)-want) > 1e-9 || math.Abs(float64(us[i].ModelBandKWh)-want*p) > 1e-9 {
			t.Errorf("%s: busy %v band %v, want %v and %v", us[i].Model, us[i].GPUBusyKWh, us[i].ModelBandKWh, want, want*p)
		}
	}
	if b := usageBand(us); math.Abs(float64(b)-6*p) > 1e-9 {
		t.Errorf("run band %v, want %v", b, 6*p)
	}
}

// TestEOPCModelErrorByHand: at 0.5 requested FGD draws 1,000 W of EOPC,
// 400 W of it busy GPUs of model 0 (p95 0.5) and 100 W of model 1 (p95
// 0.2); PWR 200 and 250 W. Bands: FGD 400x0.5 + 100x0.2 = 220 W, PWR
// 200x0.5 + 250x0.2 = 150 W. Saving bound: (|200-400|x0.5 + |250-100|x0.2)
// / 1,000 = 0.13: PWR at 900 W saves 0.1, within; at 800 W 0.2, beyond.
func TestEOPCModelErrorByHand(t *testing.T) {
	s, err := scenario.Builtin("pwr-default")
	if err != nil {
		t.Fatal(err)
	}
	s.Policies = s.Policies[:2]
	if s.ReferencePolicy() != "FGD" || s.Policies[1].Name != "PWR" {
		t.Fatalf("policies %v, reference %s", s.PolicyNames(), s.ReferencePolicy())
	}
	for _, c := range []struct {
		pwrW, saving float64
		verdict      string
	}{{900, 0.1, WithinModelError}, {800, 0.2, BeyondModelError}} {
		// A grid from 0 to 0.5 (index k at ratio k/100, as grid writes it).
		run := func(name string, last GridPoint) *Run {
			r := &Run{Policy: name}
			for k := 0; k < 50; k++ {
				r.Grid = append(r.Grid, GridPoint{Ratio: float64(k) / 100, EOPCW: 1})
			}
			r.Grid = append(r.Grid, last)
			return r
		}
		r := &InflationResult{Scenario: s, ModelErrors: []ModelError{{P95Rel: 0.5}, {P95Rel: 0.2}}, Runs: []*Run{
			run("FGD", GridPoint{Ratio: 0.5, EOPCW: 1000, BusyGPUW: []hw.Watts{400, 100}}),
			run("PWR", GridPoint{Ratio: 0.5, EOPCW: hw.Watts(c.pwrW), BusyGPUW: []hw.Watts{200, 250}})}}
		got := eopcModelErrors(r, r.Curves())
		if len(got) != 2 || math.Abs(float64(got[0].BandW)-220) > 1e-9 || math.Abs(float64(got[1].BandW)-150) > 1e-9 ||
			math.Abs(float64(got[1].Saving)-c.saving) > 1e-12 || math.Abs(float64(got[1].Bound)-0.13) > 1e-12 || got[1].Verdict != c.verdict || got[0].Verdict != "" {
			t.Errorf("PWR at %v W: %+v", c.pwrW, got)
		}
	}
}
