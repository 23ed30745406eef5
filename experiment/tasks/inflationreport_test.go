package tasks

import (
	"math"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/scenario"
)

// Costs are printed with cents and thousands separators.
func TestUSDCents(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{273003.789, "273,003.79"}, // rounds to the cent
		{999.995, "1,000.00"},      // 999.995 is stored just above: rounds up, gains a separator
		{12.5, "12.50"},
		{0, "0.00"},
		{-0.001, "0.00"}, // no "-0.00"
		{-1234567.5, "-1,234,567.50"},
		{math.NaN(), "-"},
	} {
		if got := usdCents(c.v); got != c.want {
			t.Errorf("usdCents(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// fakeInflation is two policies, one seed, with grid points at 0, 0.5
// and 1.0 requested: FGD draws 1000 W at 0.5 and places every GPU, PWR
// 800 W and places 90% at 1.0 (first below 1 at 1.0).
func fakeInflation() *InflationResult {
	s := &scenario.Scenario{Name: "fake", Seeds: 1, Target: 1, Trace: scenario.TraceSpec{Pods: "default"},
		Policies: []scenario.PolicySpec{{Name: "FGD", Scorers: []scenario.ScorerSpec{{Policy: "fgd", Weight: 1000}}},
			{Name: "PWR", Scorers: []scenario.ScorerSpec{{Policy: "pwr", Weight: 1000}}}}}
	grid := func(w50 hw.Watts, grar100 float64) []GridPoint {
		out := make([]GridPoint, 101)
		for k := range out {
			out[k] = GridPoint{Ratio: float64(k) / 100, EOPCW: 500 + w50*hw.Watts(k)/50, GRAR: 1, AllocShare: float64(k) / 100}
		}
		out[100].GRAR = grar100
		return out
	}
	return &InflationResult{Scenario: s, Nodes: 2, TotalGPUMilli: 16000, Runs: []*Run{
		{Policy: "FGD", Seed: 1, Grid: grid(500, 1)}, {Policy: "PWR", Seed: 1, Grid: grid(300, 0.9)}}}
}

// The summary names the policy of every value it gives: PWR's 800 W at
// 0.5 is 1 - 800/1000 = 20% below FGD's, the first unplaced request is
// PWR's at 100%, and PWR's GRAR at 1.0 (90%) stands beside FGD's (100%).
// Without a grid there is no money sentence.
func TestInflationSummaryLabelsValues(t *testing.T) {
	r := fakeInflation()
	curves := r.Curves()
	got := inflationSummary(r, curves, r.Summaries(curves))
	for _, want := range []string{
		"On 2 nodes with 16 GPUs",
		"PWR drew the least estimated power (EOPC): 0.8 kW, 20.0% less than FGD (1.0 kW)",
		"the first to leave a request unplaced: PWR",
		"PWR placed 90.0% of the requested GPUs (FGD: 100.0%)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "USD") {
		t.Errorf("money without a grid:\n%s", got)
	}
}
