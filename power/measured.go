package power

import "github.com/wattsched/wattsched/hw"

// Scope says what a measured reading covers: a node's GPUs only (the DCGM
// exporter) or the whole node (Kepler's platform energy).
type Scope string

// The scopes of a measured reading.
const (
	ScopeGPU  Scope = "gpu"
	ScopeNode Scope = "node"
)

// Reading is a node's measured power: its watts and what they cover.
type Reading struct {
	Watts hw.Watts
	Scope Scope
}

// AtLeastMeasured is the power a gate counts for a node whose estimate is
// est when a fresh reading r exists: the larger of the measured and the
// estimated figure for the part the reading covers, plus the estimate of
// the rest. A GPU-only reading is compared with the GPU estimate and the
// CPU estimate is added; a whole-node reading is compared with the
// node's total estimate. Any other scope counts the estimate alone.
func AtLeastMeasured(est Breakdown, r Reading) hw.Watts {
	switch r.Scope {
	case ScopeGPU:
		return est.CPU + max(est.GPU, r.Watts)
	case ScopeNode:
		return max(est.Total(), r.Watts)
	}
	return est.Total()
}

// Readings is a fixed set of readings by node name: a meter for the
// simulator and for tests, and what a Prometheus source's snapshot holds.
type Readings map[string]Reading

// Reading returns node's reading.
func (m Readings) Reading(node string) (Reading, bool) {
	r, ok := m[node]
	return r, ok
}
