package sim

import (
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// Energy is the energy of power w drawn for d: the one definition of
// energy in wattsched (power is piecewise constant between events, so
// energy is exact as a sum of these terms).
func Energy(w hw.Watts, d job.Time) hw.Joules { return hw.Joules(float64(w) * d.Seconds()) }

// Ledger integrates the piecewise-constant power of named components into
// energy. A component either draws a power that changes at events (Set,
// integrated lazily up to each change, so that only the components that
// change are touched) or is charged energy directly: Accrue for power
// drawn over an interval that the engine attributes itself (per job, say),
// Charge for lumps such as a node's power-on. Total is the sum of every
// term in the order it was added.
type Ledger struct {
	names []string
	comps []component
	total hw.Joules
}

type component struct {
	w  hw.Watts
	j  hw.Joules
	at job.Time // integrated up to here
}

// Add registers a component and returns its index.
func (l *Ledger) Add(name string) int {
	l.names = append(l.names, name)
	l.comps = append(l.comps, component{})
	return len(l.comps) - 1
}

// Set integrates component c up to now at its old power, then makes it
// draw w.
func (l *Ledger) Set(c int, now job.Time, w hw.Watts) {
	l.Advance(c, now)
	l.comps[c].w = w
}

// Advance integrates component c up to now and returns the energy added.
func (l *Ledger) Advance(c int, now job.Time) hw.Joules {
	p := &l.comps[c]
	j := Energy(p.w, now-p.at)
	p.j += j
	l.total += j
	p.at = now
	return j
}

// Accrue charges component c with power w drawn for d and returns the
// energy.
func (l *Ledger) Accrue(c int, w hw.Watts, d job.Time) hw.Joules {
	j := Energy(w, d)
	l.Charge(c, j)
	return j
}

// Charge adds energy j to component c.
func (l *Ledger) Charge(c int, j hw.Joules) {
	l.comps[c].j += j
	l.total += j
}

// Energy is component c's energy so far.
func (l *Ledger) Energy(c int) hw.Joules { return l.comps[c].j }

// Power is the power component c draws now (for Set components).
func (l *Ledger) Power(c int) hw.Watts { return l.comps[c].w }

// At is the time up to which component c is integrated.
func (l *Ledger) At(c int) job.Time { return l.comps[c].at }

// Name is component c's name.
func (l *Ledger) Name(c int) string { return l.names[c] }

// Len is the number of components.
func (l *Ledger) Len() int { return len(l.comps) }

// Total is the energy of every component.
func (l *Ledger) Total() hw.Joules { return l.total }
