package validate

import (
	"math"
	"testing"
)

// TestRelErrorByHand: workload a has two points, b one; each workload
// weighs 1/2, so a's points 1/4 each. Errors relative to the prediction
// (100 W): a at 90 W (+0.1) and 50 W (+0.5), b at 120 W (-0.2). Sorted by
// size: 0.1 (cum 0.25), 0.2 (0.75), 0.5 (1.0): the p95 is 0.5. Bias:
// 0.25*0.1 + 0.25*0.5 + 0.5*(-0.2) = 0.05.
func TestRelErrorByHand(t *testing.T) {
	pts := []scored{{Point{GPU: "P100", Workload: "a", Watts: 90}, PWR, 100}, {Point{GPU: "P100", Workload: "a", Watts: 50}, PWR, 100},
		{Point{GPU: "P100", Workload: "b", Watts: 120}, PWR, 100}}
	n, p95, bias := relError(pts)
	if n != 2 || math.Abs(p95-0.5) > 1e-12 || math.Abs(bias-0.05) > 1e-12 {
		t.Errorf("workloads %d, p95 %v, bias %v; want 2, 0.5, 0.05", n, p95, bias)
	}
}
