package vahrm

import (
	"encoding/json"
	"strings"
	"testing"
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
