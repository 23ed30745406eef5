package powerflow

import (
	"math"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/trace"
)

func pt(sys string, param, mwh, jct float64) RunResult {
	r := RunResult{System: sys, Param: param, EnergyMWh: mwh, AvgJCTh: jct}
	if sys != NamePowerFlow {
		r.Baselines = BaselinesPaper
	}
	return r
}

// The headline factor is JCT at equal energy on each curve's own Pareto
// frontier: a baseline point with more energy and a longer JCT than
// another of its points is dropped before any factor is taken.
func TestFactorAtEqualEnergyOnFrontier(t *testing.T) {
	runs := []RunResult{
		pt(NamePowerFlow, 0.3, 11, 2), pt(NamePowerFlow, 0.95, 13, 1.5),
		// PowerFlow at 0.5: more energy, longer JCT than at 0.95: dominated.
		pt(NamePowerFlow, 0.5, 13.5, 3),
		pt(NameGandiva, 1410, 10, 5), pt(NameGandiva, 1305, 12, 4),
		// Dominated (more energy, longer JCT than 1305): off the frontier.
		pt(NameGandiva, 1020, 14, 4.5),
	}
	f := factorOf(factors(runs), NameGandiva, BaselinesPaper)
	// At PowerFlow's 11 MWh Gandiva's frontier reads 5 + (11-10)/(12-10)
	// x (4-5) = 4.5 h: 4.5 / 2 = 2.25x. PowerFlow's 13 MWh lies past the
	// frontier's 12 MWh: no factor (with the dominated 14 MWh point it
	// would read 4.25 h, 2.83x).
	if got := float64(f.Equal); math.Abs(got-2.25) > 1e-12 || float64(f.EnergyMWh) != 11 {
		t.Fatalf("factor %v at %v MWh (%s), want 2.25x at 11 MWh", got, float64(f.EnergyMWh), f.At)
	}
	if !math.IsNaN(float64(f.Nearest)) {
		t.Errorf("nearest %v, want NaN where the energies overlap", float64(f.Nearest))
	}
	imp := improvements(runs)
	// Two PowerFlow frontier points (the dominated 0.5 is dropped), one baseline.
	if len(imp) != 2 || !math.IsNaN(float64(imp[1].Factor)) {
		t.Fatalf("improvements %+v, want 2 rows, the second outside Gandiva's frontier (NaN)", imp)
	}
}

// Where PowerFlow's and a baseline's frontier energies do not overlap,
// the nearest points are given with their energy ratio, flagged, and the
// claim is not counted as holding.
func TestFactorNoOverlapIsFlaggedAndFails(t *testing.T) {
	runs := []RunResult{
		pt(NamePowerFlow, 0.5, 4, 3), pt(NamePowerFlow, 0.95, 5, 2),
		pt(NameTiresias, 1410, 10, 5), pt(NameTiresias, 1020, 12, 6),
	}
	f := factorOf(factors(runs), NameTiresias, BaselinesPaper)
	// Frontier of Tiresias: only (10 MWh, 5 h). Nearest to it: PowerFlow's
	// (5 MWh, 2 h): 5 / 2 = 2.5x at energy ratio 10 / 5 = 2.
	if !math.IsNaN(float64(f.Equal)) || float64(f.Nearest) != 2.5 || float64(f.EnergyRatio) != 2 {
		t.Fatalf("equal %v nearest %v ratio %v, want NaN, 2.5, 2", float64(f.Equal), float64(f.Nearest), float64(f.EnergyRatio))
	}
	if !strings.Contains(f.At, "NOT at equal energy") || !strings.Contains(f.String(), "not equal energy") {
		t.Errorf("not flagged: %q / %q", f.At, f.String())
	}
	rep := &Reproduction{Factors: factors(runs)}
	for _, c := range pfClaims(rep) {
		if strings.Contains(c.What, NameTiresias+" at equal") && c.Holds {
			t.Errorf("%q holds on the nearest points (%s)", c.What, c.Measured)
		}
	}
}

// Capping trims only the jobs longer than the cap.
func TestCapJobs(t *testing.T) {
	in := []trace.GPUJob{{DurationSec: 10}, {DurationSec: 100 * 3600}, {DurationSec: 72 * 3600}, {DurationSec: 73 * 3600}}
	gj, n := capJobs(in, 72)
	if in[1].DurationSec != 100*3600 {
		t.Fatal("capJobs changed its input")
	}
	if n != 2 || gj[0].DurationSec != 10 || gj[1].DurationSec != 72*3600 || gj[2].DurationSec != 72*3600 || gj[3].DurationSec != 72*3600 {
		t.Fatalf("capped %d: %+v", n, gj)
	}
}

// PowerFlow runs with the power correction and its guard, the oracle
// without the guard; both are recorded.
func TestPowerSettings(t *testing.T) {
	ps, err := powerSettings()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || !ps[0].CorrectPower || ps[0].UnmeteredGuard != 0.03 || ps[1].System != NameOracle || ps[1].UnmeteredGuard != 0 {
		t.Fatalf("%+v, want PowerFlow with the 3%% guard, the oracle without", ps)
	}
	if !strings.Contains(powerNote(ps), "unmetered_guard=0.03") {
		t.Errorf("note %q", powerNote(ps))
	}
}

// Every claim of the reproduction is decided by its check and can fail.
func TestPowerFlowClaimsFalsifiable(t *testing.T) {
	for _, c := range pfClaims(&Reproduction{}) {
		if err := experiment.Falsify(c); err != nil {
			t.Error(err)
		}
	}
}
