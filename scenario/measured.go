package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/wattsched/wattsched/grid"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/userfile"
)

// MeasuredSpec replays recorded measured power into the power gate (mode
// replay, under a power limit): the gate counts max(measured, estimated)
// for the running tasks of each node with a fresh reading, the rule of
// the Kubernetes PowerBudget plugin's measured mode (docs/measured-power.md).
type MeasuredSpec struct {
	// File is a saved Prometheus range-query answer (the JSON of
	// /api/v1/query_range), relative to the scenario file.
	File string `yaml:"file" json:"file"`
	// Exporter picks the defaults below: dcgm (default) or kepler.
	Exporter string `yaml:"exporter" json:"exporter,omitempty"`
	// Metric keeps the series with this __name__ ("none": the series
	// without one); default DCGM_FI_DEV_POWER_USAGE (dcgm), none (kepler).
	Metric string `yaml:"metric" json:"metric,omitempty"`
	// NodeLabel holds the node name, which must match the node list's
	// names; default Hostname (dcgm), instance (kepler).
	NodeLabel string `yaml:"node_label" json:"node_label,omitempty"`
	// Scope is what a node's sum covers: gpu (dcgm) or node (kepler).
	Scope string `yaml:"scope" json:"scope,omitempty"`
	// Start is the time simulated time 0 stands for, "YYYY-MM-DD
	// hh:mm:ss" UTC or RFC 3339; default: the file's first point.
	Start string `yaml:"start" json:"start,omitempty"`
	// StaleAfterS: a node whose oldest series' latest point is older than
	// this falls back to its estimate (default 60).
	StaleAfterS float64 `yaml:"stale_after_s" json:"stale_after_s,omitempty"`
	// MaxSeriesW: a point above it is absurd, and its node falls back
	// (default 2000 for dcgm, 50000 for kepler).
	MaxSeriesW float64 `yaml:"max_series_w" json:"max_series_w,omitempty"`
}

// startLayout is the layout of Start besides RFC 3339 (grid.start's).
const startLayout = "2006-01-02 15:04:05"

func parseStart(s string) (time.Time, error) {
	t, err := time.Parse(startLayout, s)
	if err != nil {
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			return time.Time{}, fmt.Errorf("%q, want \"YYYY-MM-DD hh:mm:ss\" (UTC) or RFC 3339", s)
		}
	}
	if t = t.UTC(); t.Before(grid.TimeMin) || !t.Before(grid.TimeMax) {
		return time.Time{}, fmt.Errorf("%q is outside 1970-01-01 00:00:00..2100-01-01 00:00:00 (UTC; exclusive end)", s)
	}
	return t, nil
}

// checkStart adds a problem when a start time (grid.start, elastic.start)
// that parses lies outside 1970..2100; one that does not parse is left to
// its reader, whose message names the layout it wants.
func checkStart(field, v string, bad *problems) {
	if _, err := parseStart(v); err != nil && strings.Contains(err.Error(), "is outside") {
		bad.add("%s: %v", field, err)
	}
}

func (m *MeasuredSpec) validate(s *Scenario, bad *problems) {
	if m == nil {
		return
	}
	if s.Mode != Replay {
		bad.add("measured: only for mode replay (the readings stand at times of a replayed trace)")
	}
	if s.PowerLimit == nil {
		bad.add("measured: needs power_limit (the readings feed the power gate, which only exists under a limit)")
	}
	if m.File == "" {
		bad.add("measured.file: empty")
	}
	if m.Exporter != "" && m.Exporter != string(prom.DCGM) && m.Exporter != string(prom.Kepler) {
		bad.add("measured.exporter: %q, want %q or %q", m.Exporter, prom.DCGM, prom.Kepler)
	}
	if m.Scope != "" && m.Scope != string(power.ScopeGPU) && m.Scope != string(power.ScopeNode) {
		bad.add("measured.scope: %q, want %q or %q", m.Scope, power.ScopeGPU, power.ScopeNode)
	}
	if m.Start != "" {
		if _, err := parseStart(m.Start); err != nil {
			bad.add("measured.start: %v", err)
		}
	}
	if m.StaleAfterS != 0 && !(m.StaleAfterS > 0 && m.StaleAfterS <= 24*3600) {
		bad.add("measured.stale_after_s: %v, want (0, 86400]", m.StaleAfterS)
	}
	if m.MaxSeriesW != 0 && !(m.MaxSeriesW > 0 && finite(m.MaxSeriesW)) {
		bad.add("measured.max_series_w: %v, want a positive number", m.MaxSeriesW)
	}
}

// Recorded reads the scenario's measured-power file (nil without a
// measured section) and the time simulated time 0 stands for. Errors
// name the section, the file and the JSON path.
func (s *Scenario) Recorded() (*prom.Recorded, time.Time, error) {
	m := s.Measured
	if m == nil {
		return nil, time.Time{}, nil
	}
	path := s.Path(m.File)
	b, err := userfile.ReadFile(path, userfile.Document)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("measured.file: %w", err)
	}
	series, err := prom.ParseRange(b)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("measured.file %s: %w", path, err)
	}
	rec, err := prom.NewRecorded(series, prom.RecordedConfig{Exporter: prom.Exporter(m.Exporter), Metric: m.Metric,
		NodeLabel: m.NodeLabel, Scope: power.Scope(m.Scope), StaleAfter: time.Duration(m.StaleAfterS * float64(time.Second)),
		MaxSeriesWatts: m.MaxSeriesW})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("measured.file %s: %w", path, err)
	}
	start, _ := rec.Span()
	if m.Start != "" {
		if start, err = parseStart(m.Start); err != nil {
			return nil, time.Time{}, fmt.Errorf("measured.start: %w", err)
		}
	}
	return rec, start, nil
}
