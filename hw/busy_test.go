package hw

import (
	"strings"
	"testing"
)

// TestMeasuredBusy: with busy_w a GPU with any allocation draws busy_w
// (PWR's step at the measured level), an idle one idle_w; a model with
// its own curve keeps it; a model with neither is an error naming it.
func TestMeasuredBusy(t *testing.T) {
	c, err := Parse([]byte(`gpus:
  - {name: B, idle_w: 30, tdp_w: 300, busy_w: 172, busy_source: test, memory_gib: 16, source: test}
  - {name: C, idle_w: 50, tdp_w: 400, memory_gib: 80, source: test, curve: [{share: 0.5, watts: 300}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.MeasuredBusy()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.GPU("B")
	// 0 -> idle 30 W; one milli-GPU (0.001) and above -> 172 W, never the
	// 300 W TDP.
	for u, want := range map[float64]Watts{0: 30, 0.001: 172, 0.3: 172, 1: 172} {
		if got := b.At(u); got != want {
			t.Errorf("B.At(%v) = %v, want %v", u, got, want)
		}
	}
	// C's measured curve: 0.25 is halfway from idle 50 to 300 W = 175 W.
	if cc, _ := m.GPU("C"); cc.At(0.25) != 175 {
		t.Errorf("C.At(0.25) = %v, want its curve's 175", cc.At(0.25))
	}
	// The catalog it came from is unchanged: B draws its TDP.
	if b0, _ := c.GPU("B"); b0.At(0.3) != 300 {
		t.Errorf("original B.At(0.3) = %v, want 300", b0.At(0.3))
	}
	if _, err := Default().MeasuredBusy(); err != nil {
		t.Errorf("embedded catalog: %v", err)
	}
	c2, _ := Parse([]byte("gpus:\n  - {name: N, idle_w: 30, tdp_w: 300, memory_gib: 16, source: test}\n"))
	if _, err := c2.MeasuredBusy(); err == nil || !strings.Contains(err.Error(), "gpus[0] (N) has no busy_w") {
		t.Errorf("no busy_w: %v", err)
	}
}

func TestBusyErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"gpus:\n  - {name: X, idle_w: 30, tdp_w: 300, busy_w: 301, busy_source: s, source: s}\n":  "gpus[0] (X).busy_w: 301",
		"gpus:\n  - {name: X, idle_w: 30, tdp_w: 300, busy_w: 20, busy_source: s, source: s}\n":   "gpus[0] (X).busy_w: 20",
		"gpus:\n  - {name: X, idle_w: 30, tdp_w: 300, busy_w: 200, source: s}\n":                  "busy_source",
		"gpus:\n  - {name: X, idle_w: 30, tdp_w: 300, busy_source: s, source: s}\n":               "gpus[0] (X).busy_source: given without busy_w",
		"gpus:\n  - {name: X, idle_w: 30, tdp_w: 300, busy_w: .nan, busy_source: s, source: s}\n": "gpus[0] (X).busy_w: NaN",
	} {
		if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", doc, err, want)
		}
	}
}
