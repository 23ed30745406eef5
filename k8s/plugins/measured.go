package plugins

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
)

// MeasuredArgs switch PowerBudget to measured mode: the power counted
// for the running pods is, node by node, the larger of the measured and
// the estimated power; the pod being admitted is counted by its estimated
// increase (policy.PowerGate, the simulator's rule too). The fields of
// prom.Config (url, exporter, powerQuery, timestampQuery, nodeLabel,
// scope, staleAfterSeconds, timeoutSeconds, maxSeriesWatts) say where and
// how to read; refreshSeconds how often (default 5).
type MeasuredArgs struct {
	prom.Config
	RefreshSeconds float64 `json:"refreshSeconds,omitempty"`
}

// statusMeter is what the plugin reads measured power from: prom.Meter,
// or a fixed set of readings in tests.
type statusMeter interface {
	// Check is the per-cycle call; Status adds the details for a log line.
	Check(node string) (r power.Reading, reason string, ok bool)
	Status(node string) prom.Status
}

// answerer is a meter that says how long its answers hold
// (prom.Meter.Answers); PowerBudget keeps each node's counted power
// while they do.
type answerer interface {
	Answers() (gen uint64, now, until time.Time)
}

// refresher is a meter that must be refreshed periodically.
type refresher interface {
	Refresh(ctx context.Context) (*prom.Snapshot, error)
}

// meterFor builds the meter for measured mode (prom.NewMeter; tests swap it).
type meterFor func(MeasuredArgs) (statusMeter, error)

func promMeter(a MeasuredArgs) (statusMeter, error) { return prom.NewMeter(a.Config) }

// fixedMeter serves fixed readings: every other node has no series.
type fixedMeter power.Readings

func (f fixedMeter) Status(node string) prom.Status {
	if r, ok := f[node]; ok {
		return prom.Status{Reading: r, OK: true}
	}
	return prom.Status{Reason: prom.ReasonNoSeries, Detail: "no fixed reading"}
}

// Answers implements answerer: fixed readings never change.
func (f fixedMeter) Answers() (gen uint64, now, until time.Time) { return 0, time.Now(), time.Time{} }

func (f fixedMeter) Check(node string) (power.Reading, string, bool) {
	st := f.Status(node)
	return st.Reading, st.Reason, st.OK
}

// watchedMeter is the gate's policy.Meter in measured mode: it answers
// from the meter's memory and counts
// and logs each node's switch to the estimate (and back) once.
type watchedMeter struct {
	m statusMeter

	mu       sync.Mutex
	fallback map[string]string // node -> reason it currently falls back
}

func newWatchedMeter(m statusMeter) *watchedMeter {
	return &watchedMeter{m: m, fallback: map[string]string{}}
}

// Reading implements policy.Meter.
func (w *watchedMeter) Reading(node string) (power.Reading, bool) {
	r, reason, ok := w.m.Check(node)
	w.mu.Lock()
	prev, was := w.fallback[node]
	switch {
	case ok && was:
		delete(w.fallback, node)
	case !ok && (!was || prev != reason):
		w.fallback[node] = reason
	}
	w.mu.Unlock()
	if ok {
		if was {
			klog.InfoS("PowerBudget: measured power available again", "node", node, "watts", float64(r.Watts))
		}
		return r, true
	}
	if !was || prev != reason {
		measuredFallbacks.WithLabelValues(reason).Inc()
		klog.InfoS("PowerBudget: no usable measured power, using the estimate", "node", node, "reason", reason, "detail", w.m.Status(node).Detail)
	}
	return power.Reading{}, false
}

// answers is the meter's answerer's Answers; ok is false when the
// meter cannot say how long its answers hold (they are then read afresh
// every cycle).
func (w *watchedMeter) answers() (gen uint64, now, until time.Time, ok bool) {
	a, ok := w.m.(answerer)
	if !ok {
		return 0, time.Time{}, time.Time{}, false
	}
	gen, now, until = a.Answers()
	return gen, now, until, true
}

// refreshLoop refreshes r every period until ctx ends; each refresh is
// bounded by the meter's timeout, so a slow server never blocks the
// scheduling cycle (which reads only memory).
func refreshLoop(ctx context.Context, r refresher, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		if _, err := r.Refresh(ctx); err != nil {
			measuredRefreshErrors.Inc()
			klog.InfoS("PowerBudget: measured power refresh failed; every node uses its estimate", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (a *MeasuredArgs) validate() error {
	if a.RefreshSeconds == 0 {
		a.RefreshSeconds = 5
	}
	if !(a.RefreshSeconds > 0) || math.IsInf(a.RefreshSeconds, 0) {
		return fmt.Errorf("measured.refreshSeconds: %v, want a positive number", a.RefreshSeconds)
	}
	a.Config = a.Config.Defaults()
	if err := a.Config.Validate(); err != nil {
		return fmt.Errorf("measured: %w", err)
	}
	return nil
}

var (
	gateClusterPower = metrics.NewGauge(&metrics.GaugeOpts{Subsystem: "wattsched", Name: "gate_cluster_power_watts",
		Help: "The cluster power PowerBudget counted at the last admission decision (the estimate, or per node max(measured, estimated) in measured mode).", StabilityLevel: metrics.ALPHA})
	measuredFallbacks = metrics.NewCounterVec(&metrics.CounterOpts{Subsystem: "wattsched", Name: "measured_power_fallbacks_total",
		Help: "Times a node switched to its estimate, by reason: no_series, stale, invalid, query_failed, not_refreshed.", StabilityLevel: metrics.ALPHA}, []string{"reason"})
	measuredRefreshErrors = metrics.NewCounter(&metrics.CounterOpts{Subsystem: "wattsched", Name: "measured_power_refresh_errors_total",
		Help: "Failed refreshes of measured power from Prometheus (unreachable, slow, error answers).", StabilityLevel: metrics.ALPHA})
)

func init() {
	legacyregistry.MustRegister(gateClusterPower, measuredFallbacks, measuredRefreshErrors)
}
