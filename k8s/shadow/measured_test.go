package shadow

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
)

// stepMeter serves, at its k-th sample, readings[k] (a node absent has no
// fresh reading).
type stepMeter struct {
	k        int
	readings []map[string]float64
}

func (m *stepMeter) Refresh(context.Context) (*prom.Snapshot, error) { return nil, nil }

func (m *stepMeter) Check(node string) (power.Reading, string, bool) {
	w, ok := m.readings[m.k][node]
	if !ok {
		return power.Reading{}, prom.ReasonNoSeries, false
	}
	return power.Reading{Watts: hw.Watts(w), Scope: power.ScopeGPU}, "", true
}

// TestMeasuredIntegration: a reading counts from its refresh to the next;
// a node without a fresh reading counts nothing until its next one.
func TestMeasuredIntegration(t *testing.T) {
	m := &stepMeter{readings: []map[string]float64{
		{"a": 100, "b": 300},
		{"a": 200, "b": 300},
		{"b": 300}, // a: no series
		{"a": 50, "b": 300},
		{"a": 50, "b": 300},
	}}
	ms := newMeasured(m)
	t0 := time.Unix(1_800_000_000, 0)
	for k := range m.readings {
		m.k = k
		ms.sample([]string{"a", "b"}, t0.Add(time.Duration(k)*10*time.Second))
	}
	got, scope := ms.snapshot(func(n string) string { return map[string]string{"a": "T4", "b": "G2"}[n] })
	want := []MeasuredNode{
		// a: 100 W x 10 s + 200 W x 10 s + (no reading at 20 s: nothing
		// until 30 s) + 50 W x 10 s = 3,500 J over 30 s.
		{Node: "a", GPUModel: "T4", KWh: 3500 / 3.6e6, Seconds: 30},
		// b: 300 W x 40 s = 12,000 J.
		{Node: "b", GPUModel: "G2", KWh: 12000 / 3.6e6, Seconds: 40},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("measured energy (-want +got):\n%s", diff)
	}
	if scope != power.ScopeGPU {
		t.Errorf("scope %q", scope)
	}
}
