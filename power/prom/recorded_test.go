package prom_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
)

var base = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func ser(labels map[string]string, pts ...float64) prom.Series {
	s := prom.Series{Labels: labels}
	for i := 0; i+1 < len(pts); i += 2 {
		s.Points = append(s.Points, prom.Point{Time: base.Add(time.Duration(pts[i]) * time.Second), Value: pts[i+1]})
	}
	return s
}

func dcgm(node, gpu string) map[string]string {
	return map[string]string{"__name__": "DCGM_FI_DEV_POWER_USAGE", "Hostname": node, "gpu": gpu}
}

// A Recorded reading at t sums each series' latest point at or before t
// and falls back by the live meter's rules.
func TestRecordedStatus(t *testing.T) {
	series := []prom.Series{
		ser(dcgm("n1", "0"), 0, 100, 60, 110, 120, math.NaN()),
		ser(dcgm("n1", "1"), 90, 55, 0, 50), // out of order: sorted on reading
		ser(dcgm("n2", "0"), 30, -3),
		ser(dcgm("n4", "0"), 0, 3000),
		ser(map[string]string{"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "n3"}, 0, 40), // another metric
		ser(map[string]string{"__name__": "DCGM_FI_DEV_POWER_USAGE"}, 0, 70),                // no node label
	}
	rec, err := prom.NewRecorded(series, prom.RecordedConfig{StaleAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Series() != 4 || rec.Ignored != 2 {
		t.Errorf("kept %d series, ignored %d; want 4 and 2", rec.Series(), rec.Ignored)
	}
	if first, last := rec.Span(); !first.Equal(base) || !last.Equal(base.Add(120*time.Second)) {
		t.Errorf("span %v..%v", first, last)
	}
	for _, c := range []struct {
		node   string
		at     float64 // seconds after base
		watts  hw.Watts
		reason string
	}{
		{"n1", -1, 0, prom.ReasonNoSeries}, // no point yet
		{"n1", 0, 150, ""},                 // 100 + 50
		{"n1", 59, 150, ""},                // both points 59 s old, within 60 s
		{"n1", 61, 0, prom.ReasonStale},    // gpu 1's latest point (0 s) is 61 s old
		{"n1", 90, 165, ""},                // 110 + 55, oldest 30 s
		{"n1", 120, 0, prom.ReasonInvalid}, // gpu 0 NaN
		{"n2", 30, 0, prom.ReasonInvalid},  // negative
		{"n4", 0, 0, prom.ReasonInvalid},   // 3000 W over DCGM's 2000 W limit
		{"n3", 0, 0, prom.ReasonNoSeries},  // only another metric's series
		{"zzz", 0, 0, prom.ReasonNoSeries},
	} {
		at := base.Add(time.Duration(c.at * float64(time.Second)))
		st := rec.Status(c.node, at)
		r, reason, ok := rec.Check(c.node, at)
		if st.OK != (c.reason == "") || st.Reason != c.reason || st.Reading.Watts != c.watts || ok != st.OK || reason != st.Reason || r != st.Reading {
			t.Errorf("%s at %v s: %+v (check %v %q %v), want %v W / %q", c.node, c.at, st, r, reason, ok, c.watts, c.reason)
		}
		if st.OK && st.Reading.Scope != power.ScopeGPU {
			t.Errorf("%s: scope %q", c.node, st.Reading.Scope)
		}
		if !st.OK && st.Detail == "" {
			t.Errorf("%s at %v s: no detail", c.node, c.at)
		}
	}
}

// Kepler's defaults keep the unnamed series (the irate expression's
// result) of the instance label, as whole-node readings.
func TestRecordedKepler(t *testing.T) {
	rec, err := prom.NewRecorded([]prom.Series{
		ser(map[string]string{"instance": "k1"}, 0, 180),
		ser(map[string]string{"__name__": "kepler_node_platform_joules_total", "instance": "k1"}, 0, 1e7),
	}, prom.RecordedConfig{Exporter: prom.Kepler})
	if err != nil {
		t.Fatal(err)
	}
	if st := rec.Status("k1", base); !st.OK || st.Reading != (power.Reading{Watts: 180, Scope: power.ScopeNode}) {
		t.Errorf("k1: %+v, want 180 W for the node", st)
	}
}

// Bad recordings are errors that say what is wrong.
func TestRecordedErrors(t *testing.T) {
	for _, c := range []struct {
		series []prom.Series
		cfg    prom.RecordedConfig
		want   string
	}{
		{[]prom.Series{ser(dcgm("n", "0"), 0, 1, 5, 2, 0, 3)}, prom.RecordedConfig{}, "data.result[0]: two points at 2026-11-01T00:00:00Z"},
		{[]prom.Series{ser(map[string]string{"__name__": "DCGM_FI_DEV_GPU_UTIL", "Hostname": "n"}, 0, 1), ser(map[string]string{"instance": "x"}, 0, 1)}, prom.RecordedConfig{},
			`no series with __name__ "DCGM_FI_DEV_POWER_USAGE" and the Hostname label among 2 series (metrics found: [DCGM_FI_DEV_GPU_UTIL none])`},
		{[]prom.Series{ser(dcgm("n", "0"), 0, 1)}, prom.RecordedConfig{Exporter: prom.Kepler}, `no series with no __name__ (an expression's result) and the instance label`},
		{nil, prom.RecordedConfig{Exporter: "dgcm"}, `exporter: "dgcm"`},
		{nil, prom.RecordedConfig{Scope: "rack"}, `scope: "rack"`},
	} {
		_, err := prom.NewRecorded(c.series, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
