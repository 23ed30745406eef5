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
// term in the order it was added. Every term is also booked to the hours of
// simulated time it falls in (Hourly), which is what prices and carbon
// intensities apply to.
type Ledger struct {
	names  []string
	comps  []component
	total  hw.Joules
	hourly []hw.Joules
}

// hourMs is one hour of simulated time.
const hourMs job.Time = 3600 * 1000

// book adds energy j, drawn at power w over [from, to), to the hours it
// falls in (a lump when from == to).
func (l *Ledger) book(j hw.Joules, w hw.Watts, from, to job.Time) {
	if j == 0 || from < 0 {
		return
	}
	h0, h1 := int(from/hourMs), int((to-1)/hourMs)
	if to <= from || h0 == h1 {
		l.grow(h0)
		l.hourly[h0] += j
		return
	}
	l.grow(h1)
	for h := h0; h <= h1; h++ {
		a, b := max(from, job.Time(h)*hourMs), min(to, job.Time(h+1)*hourMs)
		l.hourly[h] += Energy(w, b-a)
	}
}

func (l *Ledger) grow(h int) {
	if h >= len(l.hourly) {
		l.hourly = append(l.hourly, make([]hw.Joules, h+1-len(l.hourly))...)
	}
}

// Hourly is the energy of every component booked to each hour of simulated
// time since 0 (index h: [h, h+1) hours); its sum is Total up to rounding.
func (l *Ledger) Hourly() []hw.Joules { return l.hourly }

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
	l.book(j, p.w, p.at, now)
	p.at = now
	return j
}

// Accrue charges component c with power w drawn over [from, to) and
// returns the energy.
func (l *Ledger) Accrue(c int, w hw.Watts, from, to job.Time) hw.Joules {
	j := Energy(w, to-from)
	l.comps[c].j += j
	l.total += j
	l.book(j, w, from, to)
	return j
}

// Charge adds energy j to component c, drawn at time at.
func (l *Ledger) Charge(c int, j hw.Joules, at job.Time) {
	l.comps[c].j += j
	l.total += j
	l.book(j, 0, at, at)
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
