package shadow

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
)

// Meter is where measured power comes from: prom.Meter, as PowerBudget's
// measured mode reads it (k8s/plugins/measured.go).
type Meter interface {
	Refresh(ctx context.Context) (*prom.Snapshot, error)
	Check(node string) (r power.Reading, reason string, ok bool)
}

// measured integrates each node's measured power over time: a reading
// counts from its refresh to the next one; a node without a fresh
// reading (no series, stale, a failed query) counts nothing until its
// next reading, and its covered seconds say so.
type measured struct {
	m Meter

	mu sync.Mutex
	// last reading of each node and its time.
	at    map[string]time.Time
	watts map[string]float64
	// joules and the seconds they cover, per node.
	joules  map[string]float64
	covered map[string]float64
	scope   power.Scope
}

func newMeasured(m Meter) *measured {
	return &measured{m: m, at: map[string]time.Time{}, watts: map[string]float64{}, joules: map[string]float64{},
		covered: map[string]float64{}}
}

// sample books, for each node, the interval since its last reading at the
// power of that reading, and takes this reading (after a Refresh).
func (ms *measured) sample(nodes []string, now time.Time) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for _, n := range nodes {
		if t, ok := ms.at[n]; ok {
			dt := now.Sub(t).Seconds()
			ms.joules[n] += ms.watts[n] * dt
			ms.covered[n] += dt
		}
		r, _, ok := ms.m.Check(n)
		if !ok {
			delete(ms.at, n)
			continue
		}
		ms.at[n], ms.watts[n], ms.scope = now, float64(r.Watts), r.Scope
	}
}

// MeasuredNode is one node's measured energy.
type MeasuredNode struct {
	Node     string  `json:"node"`
	GPUModel string  `json:"gpu_model"`
	KWh      float64 `json:"energy_kwh"`
	// Seconds is the time its readings cover.
	Seconds float64 `json:"covered_s"`
}

// snapshot is the energy so far by node, in name order.
func (ms *measured) snapshot(model func(string) string) ([]MeasuredNode, power.Scope) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var out []MeasuredNode
	for n, j := range ms.joules {
		out = append(out, MeasuredNode{Node: n, GPUModel: model(n), KWh: j / 3.6e6, Seconds: ms.covered[n]})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Node < out[b].Node })
	return out, ms.scope
}

// WithMeter integrates measured power from m (refreshed every period
// until ctx ends) into the ledger's Measured figures: what really ran, as
// DCGM or Kepler measured it.
func (s *Shadow) WithMeter(ctx context.Context, m Meter, period time.Duration) {
	ms := newMeasured(m)
	s.mu.Lock()
	s.measured = ms
	s.mu.Unlock()
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			if _, err := m.Refresh(ctx); err != nil {
				s.logf("measured power: %v", err)
			}
			s.mu.Lock()
			nodes := make([]string, 0, len(s.specs))
			for n := range s.specs {
				nodes = append(nodes, n)
			}
			s.mu.Unlock()
			sort.Strings(nodes)
			ms.sample(nodes, time.Now())
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}
