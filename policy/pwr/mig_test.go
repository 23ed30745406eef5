package pwr

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
)

func TestMIGPower(t *testing.T) {
	geo, _ := hw.MIGFor("A100")
	a100, err := hw.Default().GPU("A100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := cluster.NewMIGGPU(geo, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	// Catalog A100: idle 50 W, TDP 400 W.
	if got := MIGPower(&a100, m); got != 50 {
		t.Errorf("idle MIG GPU: %v W, want 50", got)
	}
	// A 3g adds 3/7 of 350 W = 150 W.
	inc, ok := MIGIncrease(&a100, m, "3g.40gb")
	if !ok || math.Abs(float64(inc)-150) > 1e-9 {
		t.Errorf("3g increase %v, %v; want 150 W", inc, ok)
	}
	if err := m.Take("3g.40gb", 4, 1); err != nil {
		t.Fatal(err)
	}
	// 50 W + 3/7 of 350 W = 200 W.
	if got := MIGPower(&a100, m); math.Abs(float64(got)-200) > 1e-9 {
		t.Errorf("3g busy: %v W, want 200", got)
	}
	if err := m.Take("4g.40gb", 0, 2); err != nil {
		t.Fatal(err)
	}
	// 3g + 4g = 7 of 7 compute slices: the TDP.
	if got := MIGPower(&a100, m); math.Abs(float64(got)-400) > 1e-9 {
		t.Errorf("full MIG GPU: %v W, want 400", got)
	}
	if _, ok := MIGIncrease(&a100, m, "1g.10gb"); ok {
		t.Error("a full GPU offers no 1g placement")
	}
}
