package prom

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
)

// RecordedConfig says how to read a saved range-query answer as measured
// power. Zero fields take the exporter's defaults (Defaults).
type RecordedConfig struct {
	// Exporter picks the defaults: dcgm or kepler.
	Exporter Exporter
	// Metric keeps only the series whose __name__ is this (Unnamed: the
	// series without one); other series are left out. DCGM's default is
	// DCGM_FI_DEV_POWER_USAGE, so a file saved for calibrate (power and
	// utilisation) can be used as is; Kepler's is Unnamed (the irate
	// expression's result).
	Metric string
	// NodeLabel is the label holding the node name.
	NodeLabel string
	// Scope is what a node's sum covers: gpu or node.
	Scope power.Scope
	// StaleAfter: a node whose oldest series' latest point is older than
	// this falls back to the estimate.
	StaleAfter time.Duration
	// MaxSeriesWatts: a point above it is absurd, and its node falls back.
	MaxSeriesWatts float64
}

// Unnamed is the Metric that keeps the series without a __name__ label,
// as an expression's result (Kepler's irate) has none.
const Unnamed = "none"

// Defaults returns c with every zero field set from its exporter's
// defaults (those of the live Meter's Config; dcgm when none is named):
// Metric DCGM_FI_DEV_POWER_USAGE for dcgm, Unnamed for kepler.
func (c RecordedConfig) Defaults() RecordedConfig {
	if c.Exporter == "" {
		c.Exporter = DCGM
	}
	if c.Metric == "" {
		c.Metric = Unnamed
		if c.Exporter == DCGM {
			c.Metric = "DCGM_FI_DEV_POWER_USAGE"
		}
	}
	live := Config{Exporter: c.Exporter, NodeLabel: c.NodeLabel, Scope: c.Scope, MaxSeriesWatts: c.MaxSeriesWatts}.Defaults()
	c.NodeLabel, c.Scope, c.MaxSeriesWatts = live.NodeLabel, live.Scope, live.MaxSeriesWatts
	if c.StaleAfter == 0 {
		c.StaleAfter = time.Duration(live.StaleAfterSeconds * float64(time.Second))
	}
	return c
}

// Recorded replays a saved range-query answer (the JSON of
// /api/v1/query_range, ParseRange) as measured power. At a time t a
// node's reading follows the live Meter's rules with the answer's points
// standing for the samples: the sum over the node's series of each
// series' latest point at or before t; stale when the oldest of those
// points is older than StaleAfter; invalid when one of them is NaN,
// infinite, negative or absurd; no_series when no series of the node has
// a point at or before t. A Recorded is read-only and safe to share.
type Recorded struct {
	cfg   RecordedConfig
	nodes map[string][]Series
	// Ignored counts the series left out: another metric's, or without
	// the node label.
	Ignored     int
	first, last time.Time
	series      int
}

// NewRecorded indexes series by node. It is an error when no series is
// left after the metric and node-label filters (the message lists the
// metric names found), or when a series' points repeat a time.
func NewRecorded(series []Series, cfg RecordedConfig) (*Recorded, error) {
	cfg = cfg.Defaults()
	switch {
	case cfg.Exporter != DCGM && cfg.Exporter != Kepler:
		return nil, fmt.Errorf("exporter: %q, want %q or %q", cfg.Exporter, DCGM, Kepler)
	case cfg.Scope != power.ScopeGPU && cfg.Scope != power.ScopeNode:
		return nil, fmt.Errorf("scope: %q, want %q or %q", cfg.Scope, power.ScopeGPU, power.ScopeNode)
	case !(cfg.StaleAfter > 0):
		return nil, fmt.Errorf("stale after: %v, want > 0", cfg.StaleAfter)
	case !(cfg.MaxSeriesWatts > 0) || math.IsInf(cfg.MaxSeriesWatts, 0):
		return nil, fmt.Errorf("max series watts: %v, want a positive number", cfg.MaxSeriesWatts)
	}
	r := &Recorded{cfg: cfg, nodes: map[string][]Series{}}
	names := map[string]bool{}
	for i, s := range series {
		name, ok := s.Labels["__name__"]
		if !ok {
			name = Unnamed
		}
		names[name] = true
		node := s.Labels[cfg.NodeLabel]
		if name != cfg.Metric || node == "" {
			r.Ignored++
			continue
		}
		pts := slices.Clone(s.Points)
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].Time.Before(pts[b].Time) })
		for j := 1; j < len(pts); j++ {
			if pts[j].Time.Equal(pts[j-1].Time) {
				return nil, fmt.Errorf("data.result[%d]: two points at %s", i, pts[j].Time.Format(time.RFC3339Nano))
			}
		}
		if len(pts) == 0 {
			r.Ignored++
			continue
		}
		if r.series == 0 || pts[0].Time.Before(r.first) {
			r.first = pts[0].Time
		}
		if r.series == 0 || pts[len(pts)-1].Time.After(r.last) {
			r.last = pts[len(pts)-1].Time
		}
		r.series++
		r.nodes[node] = append(r.nodes[node], Series{Labels: s.Labels, Points: pts})
	}
	if r.series == 0 {
		found := make([]string, 0, len(names))
		for n := range names {
			found = append(found, n)
		}
		sort.Strings(found)
		want := fmt.Sprintf("__name__ %q", cfg.Metric)
		if cfg.Metric == Unnamed {
			want = "no __name__ (an expression's result)"
		}
		return nil, fmt.Errorf("no series with %s and the %s label among %d series (metrics found: %v)", want, cfg.NodeLabel, len(series), found)
	}
	return r, nil
}

// Config is the recorded meter's configuration, with defaults filled in.
func (r *Recorded) Config() RecordedConfig { return r.cfg }

// Span is the time of the first and the last point kept.
func (r *Recorded) Span() (first, last time.Time) { return r.first, r.last }

// Series is the number of series kept.
func (r *Recorded) Series() int { return r.series }

// Nodes lists the nodes with series, sorted.
func (r *Recorded) Nodes() []string {
	out := make([]string, 0, len(r.nodes))
	for n := range r.nodes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Status is node's reading at t, or why it falls back (a Reason...
// constant) with details.
func (r *Recorded) Status(node string, t time.Time) Status { return r.status(node, t, true) }

// Check is Status without the details: the cheap call for every node at
// every decision.
func (r *Recorded) Check(node string, t time.Time) (rd power.Reading, reason string, ok bool) {
	st := r.status(node, t, false)
	return st.Reading, st.Reason, st.OK
}

func (r *Recorded) status(node string, t time.Time, detail bool) Status {
	d := func(format string, args ...any) string {
		if !detail {
			return ""
		}
		return fmt.Sprintf(format, args...)
	}
	series, ok := r.nodes[node]
	if !ok {
		return Status{Reason: ReasonNoSeries, Detail: d("no series with %s=%q", r.cfg.NodeLabel, node)}
	}
	var watts float64
	var oldest time.Time
	found := false
	for _, s := range series {
		// The latest point at or before t.
		i := sort.Search(len(s.Points), func(i int) bool { return s.Points[i].Time.After(t) }) - 1
		if i < 0 {
			continue
		}
		p := s.Points[i]
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) || p.Value < 0 || p.Value > r.cfg.MaxSeriesWatts {
			return Status{Reason: ReasonInvalid, Detail: d("%s at %s", badWatts(p.Value, r.cfg.MaxSeriesWatts, "the limit"), p.Time.Format(time.RFC3339))}
		}
		watts += p.Value
		if !found || p.Time.Before(oldest) {
			oldest = p.Time
		}
		found = true
	}
	if !found {
		return Status{Reason: ReasonNoSeries, Detail: d("no point of %s=%q at or before %s", r.cfg.NodeLabel, node, t.Format(time.RFC3339))}
	}
	age := t.Sub(oldest)
	if age > r.cfg.StaleAfter {
		return Status{Reason: ReasonStale, Age: age, Detail: d("latest point %s old, over the %s limit", age.Round(time.Second), r.cfg.StaleAfter)}
	}
	return Status{Reading: power.Reading{Watts: hw.Watts(watts), Scope: r.cfg.Scope}, OK: true, Age: age}
}
