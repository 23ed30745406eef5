package sim

import (
	"errors"
	"fmt"

	"github.com/wattsched/wattsched/job"
)

// ErrPolicy marks a decision an engine refused: a policy bug is an error,
// never a silent fix.
var ErrPolicy = errors.New("invalid policy action")

// Kernel is the event core every engine runs on: the clock, the queue of
// events ordered by (time, insertion sequence), the run counters and the
// check that every job ends exactly once. An engine keeps only its own job
// model and implements model; Run drives it by one rule:
//
//  1. Stale events at the head of the queue (the model says an event no
//     longer applies, e.g. the completion of a configuration that has
//     since changed) are dropped: they neither move the clock nor count.
//  2. The clock jumps to the earliest remaining event; the model integrates
//     power and progress over the interval (advance).
//  3. Every event at that time, including any posted while handling them,
//     is handled in sequence order (stale ones dropped); each says whether
//     it asks for a scheduling decision.
//  4. If any did, the model decides once (a model may loop its scheduler
//     to a fixpoint inside decide). Then settled records the state.
//  5. The run ends when the queue is empty or the model reports that every
//     job has ended (events left then are moot, such as wake-ups).
//
// A Kernel is single-goroutine; run seeds in parallel with separate kernels.
type Kernel[E any] struct {
	now   job.Time
	seq   uint64
	q     []entry[E]
	err   error
	ended []bool
	open  int
	// Events counts the events handled (stale ones excluded); Decisions
	// counts scheduler calls (the models count them, since only they know
	// when a call is moot).
	Events, Decisions int
}

type entry[E any] struct {
	at  job.Time
	seq uint64
	ev  E
}

// model is an engine's job model as the kernel drives it.
type model[E any] interface {
	// stale reports whether ev no longer applies.
	stale(ev E) bool
	// advance integrates power and job progress over [from, to).
	advance(from, to job.Time)
	// handle applies ev at the kernel's current time and reports whether
	// it asks for a scheduling decision.
	handle(ev E) (decide bool, err error)
	// decide calls the scheduler and applies what it returns.
	decide() error
	// finished reports that every job has ended.
	finished() bool
	// settled is called after each time step (its events and decision).
	settled() error
}

// Now is the current simulated time.
func (k *Kernel[E]) Now() job.Time { return k.now }

// Post schedules ev at time at, which must not be before now.
func (k *Kernel[E]) Post(at job.Time, ev E) {
	if at < k.now {
		if k.err == nil {
			k.err = fmt.Errorf("sim: event posted at %d ms, before now (%d ms)", at, k.now)
		}
		return
	}
	k.q = append(k.q, entry[E]{at: at, seq: k.seq, ev: ev})
	k.seq++
	k.up(len(k.q) - 1)
}

// Track starts the ended-once check for jobs 0..n-1.
func (k *Kernel[E]) Track(n int) {
	k.ended, k.open = make([]bool, n), n
}

// End records that job i ended; ending a job twice is an engine error.
func (k *Kernel[E]) End(i int) error {
	if i < 0 || i >= len(k.ended) {
		return fmt.Errorf("sim: job %d ended but is not tracked", i)
	}
	if k.ended[i] {
		return fmt.Errorf("sim: job %d ended twice", i)
	}
	k.ended[i] = true
	k.open--
	return nil
}

// Open is the number of tracked jobs that have not ended.
func (k *Kernel[E]) Open() int { return k.open }

// Ended reports whether job i has ended.
func (k *Kernel[E]) Ended(i int) bool { return k.ended[i] }

// Run drives m until the queue empties or every job has ended.
func (k *Kernel[E]) Run(m model[E]) error {
	for {
		for len(k.q) > 0 && m.stale(k.q[0].ev) {
			k.pop()
		}
		if k.err != nil {
			return k.err
		}
		if len(k.q) == 0 || m.finished() {
			return nil
		}
		t := k.q[0].at
		if t > k.now {
			m.advance(k.now, t)
			k.now = t
		}
		decide := false
		for len(k.q) > 0 && k.q[0].at == t {
			ev := k.pop()
			if m.stale(ev) {
				continue
			}
			k.Events++
			d, err := m.handle(ev)
			if err != nil {
				return fmt.Errorf("sim: t=%d ms: %w", t, err)
			}
			decide = decide || d
		}
		if decide {
			if err := m.decide(); err != nil {
				return fmt.Errorf("sim: t=%d ms: %w", t, err)
			}
		}
		if err := m.settled(); err != nil {
			return fmt.Errorf("sim: t=%d ms: %w", t, err)
		}
	}
}

func (k *Kernel[E]) less(i, j int) bool {
	a, b := &k.q[i], &k.q[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (k *Kernel[E]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !k.less(i, p) {
			return
		}
		k.q[i], k.q[p] = k.q[p], k.q[i]
		i = p
	}
}

func (k *Kernel[E]) pop() E {
	ev := k.q[0].ev
	n := len(k.q) - 1
	k.q[0] = k.q[n]
	k.q = k.q[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && k.less(r, l) {
			m = r
		}
		if !k.less(m, i) {
			break
		}
		k.q[i], k.q[m] = k.q[m], k.q[i]
		i = m
	}
	return ev
}
