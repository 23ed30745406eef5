package prom

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/power"
)

// Exporter names a built-in set of queries and labels.
type Exporter string

// The built-in exporters.
const (
	// DCGM is NVIDIA's DCGM exporter: DCGM_FI_DEV_POWER_USAGE (W) per
	// GPU, the node in the Hostname label; readings cover the GPUs.
	DCGM Exporter = "dcgm"
	// Kepler is Kepler's node platform energy counter
	// (kepler_node_platform_joules_total, J), as watts by irate; the node
	// in the instance label; readings cover the whole node.
	Kepler Exporter = "kepler"
)

// Config says where and how to read measured power. Zero fields take the
// exporter's defaults (Defaults).
type Config struct {
	// URL is the Prometheus server (http://host:9090).
	URL string `json:"url"`
	// Exporter picks the built-in queries and labels: dcgm or kepler.
	Exporter Exporter `json:"exporter"`
	// PowerQuery is PromQL giving watts per series; a node's power is the
	// sum of its series (one per GPU for DCGM).
	PowerQuery string `json:"powerQuery,omitempty"`
	// TimestampQuery is PromQL giving the time (Unix seconds) of each
	// series' newest sample; a node's age is that of its oldest series.
	TimestampQuery string `json:"timestampQuery,omitempty"`
	// NodeLabel is the label holding the Kubernetes node name.
	NodeLabel string `json:"nodeLabel,omitempty"`
	// Scope is what a node's sum covers: gpu or node.
	Scope power.Scope `json:"scope,omitempty"`
	// StaleAfterSeconds: a node whose oldest series is older than this
	// falls back to the estimate.
	StaleAfterSeconds float64 `json:"staleAfterSeconds,omitempty"`
	// TimeoutSeconds bounds each HTTP request.
	TimeoutSeconds float64 `json:"timeoutSeconds,omitempty"`
	// MaxSeriesWatts: a series above it is absurd, and its node falls
	// back to the estimate.
	MaxSeriesWatts float64 `json:"maxSeriesWatts,omitempty"`
}

// Defaults returns c with every zero field set from its exporter's
// defaults (dcgm when none is named).
func (c Config) Defaults() Config {
	if c.Exporter == "" {
		c.Exporter = DCGM
	}
	set := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	switch c.Exporter {
	case DCGM:
		set(&c.PowerQuery, "DCGM_FI_DEV_POWER_USAGE")
		set(&c.TimestampQuery, "timestamp(DCGM_FI_DEV_POWER_USAGE)")
		set(&c.NodeLabel, "Hostname")
		if c.Scope == "" {
			c.Scope = power.ScopeGPU
		}
		if c.MaxSeriesWatts == 0 {
			c.MaxSeriesWatts = 2000
		}
	case Kepler:
		set(&c.PowerQuery, "sum without (mode) (irate(kepler_node_platform_joules_total[1m]))")
		set(&c.TimestampQuery, "min without (mode) (timestamp(kepler_node_platform_joules_total))")
		set(&c.NodeLabel, "instance")
		if c.Scope == "" {
			c.Scope = power.ScopeNode
		}
		if c.MaxSeriesWatts == 0 {
			c.MaxSeriesWatts = 50000
		}
	}
	if c.StaleAfterSeconds == 0 {
		c.StaleAfterSeconds = 60
	}
	if c.TimeoutSeconds == 0 {
		c.TimeoutSeconds = 2
	}
	return c
}

// Validate names every bad field (after Defaults).
func (c Config) Validate() error {
	var errs []error
	if _, err := NewClient(c.URL, time.Second); err != nil {
		errs = append(errs, fmt.Errorf("url: %w", err))
	}
	if c.Exporter != DCGM && c.Exporter != Kepler {
		errs = append(errs, fmt.Errorf("exporter: %q, want %q or %q", c.Exporter, DCGM, Kepler))
	}
	if c.PowerQuery == "" || c.TimestampQuery == "" || c.NodeLabel == "" {
		errs = append(errs, fmt.Errorf("powerQuery, timestampQuery, nodeLabel: must not be empty"))
	}
	if c.Scope != power.ScopeGPU && c.Scope != power.ScopeNode {
		errs = append(errs, fmt.Errorf("scope: %q, want %q or %q", c.Scope, power.ScopeGPU, power.ScopeNode))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"staleAfterSeconds", c.StaleAfterSeconds}, {"timeoutSeconds", c.TimeoutSeconds}, {"maxSeriesWatts", c.MaxSeriesWatts}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("%s: %v, want a positive number", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

// Why a node has no reading: the fallback reasons, also metric label values.
const (
	ReasonNoSeries     = "no_series"     // no series carries the node's name
	ReasonStale        = "stale"         // its newest sample is older than the limit
	ReasonInvalid      = "invalid"       // NaN, infinite, negative or absurd watts
	ReasonQueryFailed  = "query_failed"  // the last refresh failed (unreachable, slow, error)
	ReasonNotRefreshed = "not_refreshed" // no refresh has succeeded yet
)

type nodeSample struct {
	watts   float64
	oldest  time.Time // oldest series' newest sample
	invalid string    // why the node's watts are unusable ("" when fine)
}

// Snapshot is the result of one refresh.
type Snapshot struct {
	// At is when the queries were evaluated.
	At    time.Time
	nodes map[string]nodeSample
	// Unlabelled counts series without the node label (ignored).
	Unlabelled int
	// expiries are the instants, in order, after which the nodes with a
	// usable reading go stale (oldest plus the staleness limit).
	expiries []time.Time
}

// Meter keeps the latest readings from Prometheus. Refresh queries the
// server (call it periodically, outside the scheduling cycle); Status and
// Reading answer from memory. It implements policy.Meter.
type Meter struct {
	cfg    Config
	client *Client
	now    func() time.Time

	mu     sync.RWMutex
	snap   *Snapshot
	refErr error
	gen    uint64 // refreshes so far, failed ones included
}

// NewMeter validates cfg (after Defaults) and returns a meter with no
// readings yet.
func NewMeter(cfg Config) (*Meter, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := NewClient(cfg.URL, time.Duration(cfg.TimeoutSeconds*float64(time.Second)))
	if err != nil {
		return nil, err
	}
	return &Meter{cfg: cfg, client: c, now: time.Now}, nil
}

// Config is the meter's configuration, with defaults filled in.
func (m *Meter) Config() Config { return m.cfg }

// SetClock replaces the wall clock used for staleness (tests).
func (m *Meter) SetClock(now func() time.Time) { m.now = now }

// Refresh queries the server for the nodes' power and sample times. On
// error the previous readings are kept but not used: every node falls
// back (ReasonQueryFailed) until a refresh succeeds.
func (m *Meter) Refresh(ctx context.Context) (*Snapshot, error) {
	s, err := m.query(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.refErr = err
	if err != nil {
		return nil, err
	}
	m.snap = s
	return s, nil
}

func (m *Meter) query(ctx context.Context) (*Snapshot, error) {
	at := m.now()
	watts, err := m.client.Query(ctx, m.cfg.PowerQuery, at)
	if err != nil {
		return nil, err
	}
	times, err := m.client.Query(ctx, m.cfg.TimestampQuery, at)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{At: at, nodes: map[string]nodeSample{}}
	for _, x := range watts {
		node, ok := x.Labels[m.cfg.NodeLabel]
		if !ok || node == "" {
			s.Unlabelled++
			continue
		}
		n := s.nodes[node]
		if why := badWatts(x.Value, m.cfg.MaxSeriesWatts, "maxSeriesWatts"); why != "" {
			n.invalid = why
		} else {
			n.watts += x.Value
		}
		s.nodes[node] = n
	}
	seen := map[string]bool{}
	for _, x := range times {
		node := x.Labels[m.cfg.NodeLabel]
		n, ok := s.nodes[node]
		if !ok || math.IsNaN(x.Value) || math.IsInf(x.Value, 0) {
			continue
		}
		sec, frac := math.Modf(x.Value)
		t := time.Unix(int64(sec), int64(frac*1e9))
		if !seen[node] || t.Before(n.oldest) {
			n.oldest = t
		}
		seen[node] = true
		s.nodes[node] = n
	}
	limit := time.Duration(m.cfg.StaleAfterSeconds * float64(time.Second))
	for node, n := range s.nodes {
		if !seen[node] && n.invalid == "" {
			n.invalid = "no sample time (timestampQuery returned none for it)"
			s.nodes[node] = n
		}
		if n.invalid == "" {
			s.expiries = append(s.expiries, n.oldest.Add(limit))
		}
	}
	slices.SortFunc(s.expiries, time.Time.Compare)
	return s, nil
}

// Answers says how long every node's Check answer stays what it is now
// (its reading or its reason; not its Age): until the meter's next
// Refresh, which changes gen, and no later than until, the instant after
// which the next node whose reading is fresh now goes stale (the zero
// time when none will). now is the meter's clock at the call. A caller
// that keeps what Check answered can reuse it while gen is the same and
// now is not after until.
func (m *Meter) Answers() (gen uint64, now, until time.Time) {
	m.mu.RLock()
	snap, gen := m.snap, m.gen
	m.mu.RUnlock()
	now = m.now()
	if snap == nil {
		return gen, now, time.Time{}
	}
	i, _ := slices.BinarySearchFunc(snap.expiries, now, time.Time.Compare)
	if i < len(snap.expiries) {
		until = snap.expiries[i]
	}
	return gen, now, until
}

// badWatts says why one series' value cannot be counted (NaN, infinite,
// negative, or above max, the field limit names), or "".
func badWatts(v, max float64, limit string) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprintf("a series is %v", v)
	case v < 0:
		return fmt.Sprintf("a series is negative (%g W)", v)
	case v > max:
		return fmt.Sprintf("a series reads %g W, over %s %g", v, limit, max)
	}
	return ""
}

// Status is a node's reading, or why it has none (a Reason... constant)
// with details.
type Status struct {
	Reading power.Reading
	OK      bool
	Reason  string
	Detail  string
	// Age is how old the node's oldest series was (with OK or ReasonStale).
	Age time.Duration
}

// Check is Status without the details: the cheap call for every node
// in every scheduling cycle.
func (m *Meter) Check(node string) (r power.Reading, reason string, ok bool) {
	st := m.status(node, false)
	return st.Reading, st.Reason, st.OK
}

// Status returns node's reading now, or the reason it falls back.
func (m *Meter) Status(node string) Status { return m.status(node, true) }

func (m *Meter) status(node string, detail bool) Status {
	m.mu.RLock()
	snap, refErr := m.snap, m.refErr
	m.mu.RUnlock()
	d := func(format string, args ...any) string {
		if !detail {
			return ""
		}
		return fmt.Sprintf(format, args...)
	}
	switch {
	case refErr != nil:
		return Status{Reason: ReasonQueryFailed, Detail: d("%v", refErr)}
	case snap == nil:
		return Status{Reason: ReasonNotRefreshed, Detail: d("no refresh has succeeded yet")}
	}
	n, ok := snap.nodes[node]
	if !ok {
		return Status{Reason: ReasonNoSeries, Detail: d("no series with %s=%q", m.cfg.NodeLabel, node)}
	}
	if n.invalid != "" {
		return Status{Reason: ReasonInvalid, Detail: n.invalid}
	}
	age := m.now().Sub(n.oldest)
	limit := time.Duration(m.cfg.StaleAfterSeconds * float64(time.Second))
	if age > limit {
		return Status{Reason: ReasonStale, Age: age, Detail: d("newest sample %s old, over the %s limit", age.Round(time.Second), limit)}
	}
	return Status{Reading: power.Reading{Watts: hw.Watts(n.watts), Scope: m.cfg.Scope}, OK: true, Age: age}
}

// Reading implements policy.Meter: node's fresh reading, if any.
func (m *Meter) Reading(node string) (power.Reading, bool) {
	r, _, ok := m.Check(node)
	return r, ok
}
