package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Gavel's round-based timing (scenario key timing: gavel-rounds), as its
// simulator (scheduler.py, Scheduler.simulate) runs a trace:
//
//   - Decisions happen only at round boundaries. A round runs every chosen
//     combination (a job alone or a pair) for floor(rate x round) steps
//     (fewer if fewer remain); it ends when the last of them ends. Jobs that
//     arrive during a round join at its end; an idle cluster waits for the
//     next arrival.
//   - The policy's allocation (a time share per combination) is recomputed
//     only when jobs arrived or ended since the last recomputation and
//     Reset has passed since it (or the last reset was at time 0, or the
//     cluster ran dry with no arrival left). A job that arrives in between
//     has no share and waits, even on free GPUs.
//   - Each round, combinations are taken in order of priority (share over
//     the fraction of time received since the reset; never-run ones first),
//     then deficit, then share, ties in the order the scheduler first saw
//     them, until the GPUs are used; a combination the allocation has not
//     seen uses GPUs in that count but does not run.
//   - GPUs are assigned per round as Gavel's worker assignment does: largest
//     GPU count first, a job keeping last round's GPUs where it can, others
//     filling servers in order (a job may span servers).
//   - Failed rounds (Gavel's micro-task failure, _done_callback): each of a
//     job's GPUs reports steps // scale_factor of the job's steps in the
//     round (the last GPU the rest); a report of 0 steps fails the round
//     for the whole combination: no step and no time is credited, and the
//     allocation is recomputed at the next reset. A job running alone that
//     fails MaxFailedAttempts rounds in a row is removed without a
//     completion time (Dropped): left out of the averages; the time of its
//     removal still counts in the makespan (Gavel's "Total duration" is the
//     time its loop ends). So a job with 1 to scale_factor-1 steps left
//     never finishes. RoundTiming.IgnoreFailures turns the rule off.
//
// The engine keeps Gavel's clock in float seconds (its decisions compare
// these values) and posts kernel events at the millisecond at or after
// each; results are in milliseconds.

type roundEvent struct {
	kind int // rkArrive, rkTaskDone
	id   int // job or task
}

const (
	rkArrive = iota
	rkTaskDone
)

type rjob struct {
	j        *policy.ColocJob
	done     float64 // steps completed
	started  bool
	ran      float64 // seconds holding GPUs
	paired   bool
	failures int // failed rounds alone in a row
}

// MaxFailedAttempts is Gavel's MAX_FAILED_ATTEMPTS (scheduler.py): a job
// whose rounds fail this many times in a row is removed.
const MaxFailedAttempts = 5

type gpuRef struct{ node, gpu int }

// combo is Gavel's bookkeeping of one combination: its priority, deficit,
// time run since the last reset (Gavel's _job_time_so_far), share in the
// allocation (allocated: the allocation has seen it) and rates.
type combo struct {
	c             policy.Combo
	prio, deficit float64
	timeSince     float64
	share         float64
	allocated     bool
	rate          [2]float64
	prev          []gpuRef // its GPUs in round prevRound
	prevRound     int
	ran           bool
}

type rtask struct {
	c      policy.Combo
	gpus   []gpuRef
	steps  [2]float64
	finish float64 // seconds (the later member's end)
	start  float64
}

type roundEngine struct {
	k     Kernel[roundEvent]
	o     ColocOptions
	a     policy.RoundAllocator
	rules policy.RoundRules
	round float64 // seconds
	reset float64

	jobs    []rjob
	next    int   // next job to add (arrival order)
	active  []int // active job IDs, ascending
	clock   float64
	forced  bool
	tasks   []rtask
	pending int

	// Gavel's per-combination bookkeeping, in the order the scheduler
	// first saw each combination (its priorities' order), and by key.
	order     []*combo
	byKey     map[policy.Combo]*combo
	workerSec float64
	lastReset float64
	dirty     bool
	// roundStart/roundEnd follow Gavel's round bounds: a task's time is
	// counted from the end of the last round that ran anything.
	roundStart, roundEnd float64
	haveEnd              bool
	rounds               int // schedule passes so far

	gpuUtil [][]float64 // node, gpu -> core utilisation (%), -1 free
	gpuJobs [][]int     // node, gpu -> jobs on it
	colocNodes
	res *ColocResult

	busyGPUms, coreGPUms float64
}

func runRounds(jobs []policy.ColocJob, a policy.RoundAllocator, o ColocOptions) (*ColocResult, error) {
	if o.Rates == nil || !(o.Rounds.Round > 0) || o.Rounds.Reset < 0 {
		return nil, fmt.Errorf("sim: round-based timing needs pair rates, a round > 0 and a reset interval >= 0")
	}
	gpus := o.Nodes * o.GPUsPerNode
	e := &roundEngine{o: o, a: a, rules: a.RoundRules(), round: o.Rounds.Round.Seconds(), reset: o.Rounds.Reset.Seconds(),
		byKey: map[policy.Combo]*combo{},
		res:   &ColocResult{Jobs: make([]ColocJobResult, len(jobs))}, colocNodes: newColocNodes(o.Nodes)}
	e.gpuUtil, e.gpuJobs = make([][]float64, o.Nodes), make([][]int, o.Nodes)
	for n := range e.gpuUtil {
		e.gpuUtil[n] = slices.Repeat([]float64{-1}, o.GPUsPerNode)
		e.gpuJobs[n] = make([]int, o.GPUsPerNode)
	}
	e.jobs = make([]rjob, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		if j.ID != i {
			return nil, fmt.Errorf("sim: job %d has ID %d", i, j.ID)
		}
		if !(j.Steps > 0) || !(j.IsoRate > 0) || j.Key.Scale < 1 || j.Key.Scale > gpus || j.Submit < 0 {
			return nil, fmt.Errorf("sim: job %d: needs steps, an isolated rate, 1..%d GPUs and a submit time >= 0", i, gpus)
		}
		if i > 0 && j.Submit < jobs[i-1].Submit {
			return nil, fmt.Errorf("sim: job %d arrives before job %d: round-based timing takes jobs in arrival order", i, i-1)
		}
		if math.Floor(j.IsoRate*e.round) < 1 {
			return nil, fmt.Errorf("sim: job %d: %.3g steps/s does no step in a %.0f s round", i, j.IsoRate, e.round)
		}
		e.jobs[i] = rjob{j: j}
		e.res.Jobs[i] = ColocJobResult{ID: i, Submit: j.Submit, Deadline: j.Deadline}
		e.k.Post(j.Submit, roundEvent{kind: rkArrive, id: i})
	}
	e.k.Track(len(jobs))
	e.power()
	if err := e.k.Run(e); err != nil {
		return nil, err
	}
	if e.k.Open() > 0 {
		return nil, fmt.Errorf("sim: %d jobs never finished under round-based timing (nothing could run)", e.k.Open())
	}
	return e.finish(), nil
}

func (e *roundEngine) stale(roundEvent) bool { return false }

func (e *roundEngine) advance(from, to job.Time) {
	e.accrue(from, to, e.o.SleepIdle)
	ms := float64(to - from)
	for n := range e.nodeW {
		for _, u := range e.gpuUtil[n] {
			if u >= 0 {
				e.busyGPUms += ms
				e.coreGPUms += ms * u
			}
		}
	}
}

func (e *roundEngine) handle(ev roundEvent) (bool, error) {
	switch ev.kind {
	case rkArrive:
		if e.pending == 0 {
			e.clock = e.k.Now().Seconds()
			return true, nil
		}
		return false, nil
	case rkTaskDone:
		if err := e.taskDone(&e.tasks[ev.id]); err != nil {
			return false, err
		}
		e.pending--
		if e.pending == 0 {
			e.clock = e.roundEnd
			e.tasks = e.tasks[:0]
			return true, nil
		}
		return false, nil
	}
	return false, fmt.Errorf("unknown round event %d", ev.kind)
}

// taskDone credits a finished task's steps and time (Gavel's done
// callback) and removes the jobs it completed or, after MaxFailedAttempts
// failed rounds, dropped.
func (e *roundEngine) taskDone(t *rtask) error {
	ids := e.members(t.c)
	if !e.o.Rounds.IgnoreFailures && failed(t, e.scale(t.c)) {
		for _, id := range ids {
			e.jobs[id].ran += t.finish - t.start
		}
		e.freeGPUs(t)
		e.dirty = true // Gavel: _need_to_update_allocation
		if t.c.IsPair() {
			return nil // a pair's failure counts against neither job
		}
		j := &e.jobs[t.c.A]
		if j.failures++; j.failures < MaxFailedAttempts {
			return nil
		}
		r := &e.res.Jobs[t.c.A]
		r.End, r.Dropped = job.Time(math.Round(t.finish*1000)), true
		r.Run = job.Time(math.Round(j.ran * 1000))
		r.Missed = r.Deadline != policy.NoDeadline // it never completes
		e.res.Dropped++
		e.remove(t.c.A)
		return e.k.End(t.c.A)
	}
	var ended []int
	for i, id := range ids {
		j := &e.jobs[id]
		j.done += t.steps[i]
		j.ran += t.finish - t.start
		if !t.c.IsPair() {
			j.failures = 0
		}
		if j.done >= j.j.Steps {
			ended = append(ended, id)
		}
	}
	e.freeGPUs(t)
	if k, ok := e.byKey[t.c]; ok {
		d := t.finish - e.roundStart
		k.timeSince += d
		e.workerSec += d
	}
	for _, id := range ended {
		r := &e.res.Jobs[id]
		r.End = job.Time(math.Round(t.finish * 1000))
		r.Run = job.Time(math.Round(e.jobs[id].ran * 1000))
		r.Missed = r.End > r.Deadline
		e.remove(id)
		if err := e.k.End(id); err != nil {
			return err
		}
	}
	return nil
}

// failed reports whether Gavel fails t: a member's steps split over its
// scale GPUs (steps // scale each, the last GPU the rest) give some GPU
// no step.
func failed(t *rtask, scale int) bool {
	for i := range 1 + btoi(t.c.IsPair()) {
		if math.Floor(t.steps[i]/float64(scale)) < 1 {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (e *roundEngine) freeGPUs(t *rtask) {
	for _, g := range t.gpus {
		e.gpuUtil[g.node][g.gpu], e.gpuJobs[g.node][g.gpu] = -1, 0
	}
}

func (e *roundEngine) members(c policy.Combo) []int {
	if c.IsPair() {
		return []int{c.A, c.B}
	}
	return []int{c.A}
}

// add is Gavel's add_job: the job alone, and with pair rules each pair
// with an active job of its GPU count, enter the bookkeeping.
func (e *roundEngine) add(id int) {
	j := &e.jobs[id]
	alone := e.see(policy.Alone(id))
	alone.timeSince, alone.rate = e.round/2, [2]float64{j.j.IsoRate, 0}
	if e.rules.Pairs {
		for _, o := range e.active {
			if e.jobs[o].j.Key.Scale != j.j.Key.Scale {
				continue
			}
			k := e.see(policy.PairOf(o, id))
			ra, rb, known := e.o.Rates(e.jobs[k.c.A].j.Key, e.jobs[k.c.B].j.Key)
			if known {
				k.rate = [2]float64{ra, rb}
			}
		}
	}
	e.active = append(e.active, id)
	e.dirty = true
}

// see adds c, priority and deficit 0, at the end of the order.
func (e *roundEngine) see(c policy.Combo) *combo {
	k := &combo{c: c, prevRound: -1}
	e.order = append(e.order, k)
	e.byKey[c] = k
	return k
}

// remove is Gavel's remove_job.
func (e *roundEngine) remove(id int) {
	i, _ := slices.BinarySearch(e.active, id)
	e.active = slices.Delete(e.active, i, i+1)
	e.order = slices.DeleteFunc(e.order, func(k *combo) bool {
		if k.c.Has(id) {
			delete(e.byKey, k.c)
			return true
		}
		return false
	})
	e.dirty = true
}

// rates is a tracked combination's rates (0, 0 if it is not tracked).
func (e *roundEngine) rates(c policy.Combo) (float64, float64) {
	if k, ok := e.byKey[c]; ok {
		return k.rate[0], k.rate[1]
	}
	return 0, 0
}

func (k *combo) runnable() bool {
	return k.rate[0] > 0 && (!k.c.IsPair() || k.rate[1] > 0)
}

// decide is one pass of Gavel's simulation loop at a round boundary (or
// an arrival on an idle cluster).
func (e *roundEngine) decide() error {
	e.k.Decisions++
	for {
		for e.next < len(e.jobs) && e.jobs[e.next].j.Submit.Seconds() <= e.clock {
			e.add(e.next)
			e.next++
		}
		if limit := cmp.Or(e.o.Rounds.MaxTracked, DefaultMaxTracked); len(e.order) > limit {
			return fmt.Errorf("sim: %d jobs are active at once under round-based timing: %d jobs and pairs tracked, above %d (the policy pairs every two active jobs of one GPU count); run fewer jobs or more nodes",
				len(e.active), len(e.order), limit)
		}
		if err := e.schedule(); err != nil {
			return err
		}
		if e.pending > 0 {
			e.forced = false
			return nil
		}
		if e.next < len(e.jobs) {
			next := e.jobs[e.next].j.Submit
			if next > e.k.Now() {
				return nil // wait for the next arrival (its event decides)
			}
			// It arrived within this millisecond but after Gavel's clock:
			// Gavel jumps to it.
			e.clock = next.Seconds()
			continue
		}
		if len(e.active) == 0 {
			return nil
		}
		if e.forced {
			return fmt.Errorf("%w: %d jobs wait and the allocation runs none of them", ErrPolicy, len(e.active))
		}
		// Gavel forces an allocation reset when nothing ran and nothing is
		// left to arrive.
		e.lastReset, e.forced = 0, true
	}
}

// priorities is Gavel's _update_priorities, with the allocation reset.
func (e *roundEngine) priorities() {
	now := e.clock
	if e.dirty && (now-e.lastReset >= e.reset || e.lastReset == 0) {
		elapsed := now - e.lastReset
		half := e.round / 2
		e.workerSec = 0
		for _, k := range e.order {
			// A combination the last allocation did not see should have
			// received nothing (its share is 0).
			k.deficit += k.share*elapsed - (k.timeSince - half)
			k.timeSince = half
			e.workerSec += half
		}
		e.lastReset = now
		e.allocate()
		e.dirty = false
	}
	for _, k := range e.order {
		switch {
		case !k.allocated || k.share == 0 || !k.runnable():
			k.prio = 0
		case e.workerSec > 0 && k.timeSince > 0:
			k.prio = k.share / (k.timeSince / e.workerSec)
		default:
			k.prio = k.share * 1e9
		}
	}
}

func (e *roundEngine) allocate() {
	st := &policy.RoundState{Now: job.Time(math.Round(e.clock * 1000)), GPUs: e.o.Nodes * e.o.GPUsPerNode,
		Rates: e.rates, IsoRate: func(id int) float64 { return e.jobs[id].j.IsoRate }}
	for _, id := range e.active {
		st.Jobs = append(st.Jobs, policy.RoundJob{ID: id, Key: e.jobs[id].j.Key})
	}
	for _, k := range e.order {
		st.Combos = append(st.Combos, k.c)
		k.allocated, k.share = true, 0
	}
	slices.SortFunc(st.Combos, policy.CmpCombo)
	for _, s := range e.a.AllocateRound(st) {
		if k, ok := e.byKey[s.Combo]; ok {
			k.share = s.Frac
		}
	}
}

func (e *roundEngine) scale(c policy.Combo) int { return e.jobs[c.A].j.Key.Scale }

// schedule picks and places the next round's combinations and starts them.
func (e *roundEngine) schedule() error {
	e.priorities()
	ents := slices.Clone(e.order)
	slices.SortStableFunc(ents, func(x, y *combo) int {
		if c := cmp.Compare(y.prio, x.prio); c != 0 {
			return c
		}
		if c := cmp.Compare(y.deficit, x.deficit); c != 0 {
			return c
		}
		return cmp.Compare(y.share, x.share)
	})
	left := e.o.Nodes * e.o.GPUsPerNode
	taken := map[int]bool{}
	type pick struct {
		k     *combo
		c     policy.Combo
		scale int
	}
	var picks []pick
	for _, k := range ents {
		c := k.c
		if left == 0 || taken[c.A] || (c.IsPair() && taken[c.B]) || !k.runnable() {
			continue
		}
		if e.rules.AllocatedOnly && k.prio <= 0 {
			continue
		}
		sf := e.scale(c)
		if c.IsPair() && e.jobs[c.B].j.Key.Scale != sf || sf > left {
			continue
		}
		left -= sf
		taken[c.A] = true
		if c.IsPair() {
			taken[c.B] = true
		}
		picks = append(picks, pick{k, c, sf})
	}
	slices.SortStableFunc(picks, func(x, y pick) int { return y.scale - x.scale })
	// Gavel's worker assignment: servers in order, largest count first,
	// last round's GPUs kept where all are still free.
	used := make([][]bool, e.o.Nodes)
	for n := range used {
		used[n] = make([]bool, e.o.GPUsPerNode)
	}
	place := map[policy.Combo][]gpuRef{}
	srv, pos := 0, 0
	for i := 0; i < len(picks); {
		sf := picks[i].scale
		k := i
		for k < len(picks) && picks[k].scale == sf {
			k++
		}
		for _, p := range picks[i:k] {
			prev := p.k.prev
			if p.k.prev == nil || p.k.prevRound != e.rounds-1 || slices.ContainsFunc(prev, func(g gpuRef) bool { return used[g.node][g.gpu] }) {
				continue
			}
			place[p.c] = prev
			for _, g := range prev {
				used[g.node][g.gpu] = true
			}
		}
		for _, p := range picks[i:k] {
			if !p.k.allocated {
				continue
			}
			if _, ok := place[p.c]; ok {
				continue
			}
			var gs []gpuRef
			for len(gs) < sf && srv < e.o.Nodes {
				if pos == e.o.GPUsPerNode {
					srv, pos = srv+1, 0
					continue
				}
				if !used[srv][pos] {
					gs = append(gs, gpuRef{srv, pos})
					used[srv][pos] = true
				}
				pos++
			}
			if len(gs) != sf {
				return fmt.Errorf("%w: no %d GPUs left for %v (Gavel's worker assignment)", ErrPolicy, sf, p.c)
			}
			place[p.c] = gs
		}
		i = k
	}
	for _, p := range picks {
		if gs, ok := place[p.c]; ok {
			p.k.prev, p.k.prevRound = gs, e.rounds
		}
	}
	e.rounds++
	// Start the placed combinations in pick order.
	now := e.clock
	maxEnd := now
	e.tasks = e.tasks[:0]
	for _, p := range picks {
		gs, ok := place[p.c]
		if !ok {
			continue
		}
		if len(gs) != p.scale {
			return fmt.Errorf("sim: round placement gave %v %d GPUs, it needs %d", p.c, len(gs), p.scale)
		}
		t := rtask{c: p.c, gpus: gs, start: now, finish: now}
		ra, rb := p.k.rate[0], p.k.rate[1]
		for i, id := range e.members(p.c) {
			r := ra
			if i == 1 {
				r = rb
				e.jobs[p.c.A].paired, e.jobs[id].paired = true, true
			}
			j := &e.jobs[id]
			t.steps[i] = math.Min(math.Floor(r*e.round), j.j.Steps-j.done)
			t.finish = math.Max(t.finish, now+t.steps[i]/r)
			if !j.started {
				j.started = true
				e.res.Jobs[id].Start = job.Time(math.Round(now * 1000))
			}
		}
		util := 0.0
		for _, id := range e.members(p.c) {
			util += e.jobs[id].j.CoreAvg
		}
		for _, g := range gs {
			e.gpuUtil[g.node][g.gpu], e.gpuJobs[g.node][g.gpu] = math.Min(util, 100), len(e.members(p.c))
		}
		if p.c.IsPair() && !p.k.ran {
			e.res.Joins++ // pairs that ran at least one round
		}
		p.k.ran = true
		maxEnd = math.Max(maxEnd, t.finish)
		e.tasks = append(e.tasks, t)
	}
	e.pending = len(e.tasks)
	if e.pending > 0 {
		if e.haveEnd {
			e.roundStart = e.roundEnd
		}
		e.roundEnd, e.haveEnd = maxEnd, true
		for i, t := range e.tasks {
			// The kernel's clock is whole milliseconds; every task of the
			// round ends at or before the round's end.
			at := job.Time(math.Ceil(t.finish*1000 - 1e-6))
			e.k.Post(max(at, e.k.Now()), roundEvent{kind: rkTaskDone, id: i})
		}
	}
	return nil
}

func (e *roundEngine) finished() bool { return e.k.Open() == 0 }

// power recomputes every node's power (eq. 5) from the GPUs in use.
func (e *roundEngine) power() {
	p := e.o.Power
	u := make([]float64, e.o.GPUsPerNode)
	for n := range e.nodeW {
		busy, cpu := false, 0.0
		for g, x := range e.gpuUtil[n] {
			u[g] = 0
			if x >= 0 {
				busy = true
				u[g] = x
				cpu += p.CPUPerJobPct * float64(e.gpuJobs[n][g]) / float64(e.o.GPUsPerNode)
			}
		}
		e.nodeBusy[n] = busy
		switch {
		case busy:
			e.nodeW[n] = p.Node(cpu, u)
		case e.o.SleepIdle:
			e.nodeW[n] = p.Sleep
		default:
			e.nodeW[n] = p.Node(0, u)
		}
	}
}

func (e *roundEngine) settled() error {
	e.power()
	if e.o.Timeline {
		pt := ColocPoint{At: e.k.Now()}
		for n := range e.nodeW {
			pt.Power += e.nodeW[n]
			if e.nodeBusy[n] {
				pt.ActiveNodes++
			}
		}
		running := map[int]bool{}
		for _, t := range e.tasks {
			for _, id := range e.members(t.c) {
				running[id] = true
			}
			if t.c.IsPair() {
				pt.SharedSets++
			}
		}
		pt.Running = len(running)
		pt.Waiting = len(e.active) - pt.Running
		e.point(e.res, pt)
	}
	return nil
}

func (e *roundEngine) finish() *ColocResult {
	r := e.res
	for i := range r.Jobs {
		r.Jobs[i].MaxShare = 1
		if e.jobs[i].paired {
			r.Jobs[i].MaxShare = 2
		}
	}
	r.totals(&e.colocNodes)
	if e.busyGPUms > 0 {
		r.MeanCoreUtil = e.coreGPUms / e.busyGPUms
	}
	r.Events, r.Decisions = e.k.Events, e.k.Decisions
	r.Hourly = e.led.Hourly()
	return r
}
