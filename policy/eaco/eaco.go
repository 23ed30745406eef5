// Package eaco is EaCO (Haghshenas and Hashemi, "EaCO: Resource Sharing
// Dynamics and Its Impact on Energy Efficiency for DNN Training"),
// Algorithms 1-2: place each queued job on the most utilised GPU set whose
// core and memory utilisation are under thresholds and whose free peak
// memory holds it, if the jobs' completion times predicted from history H
// meet every co-tenant's deadline and the energy/time cost (eq. 1) favours
// sharing; observe the set until every member has run one epoch, record
// the measurement in H, re-estimate, and keep or undo the placement. See
// docs/policies/eaco.md.
package eaco

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace/gavel"
)

// Name is the policy's registry name.
const Name = "eaco"

// Args configure EaCO.
type Args struct {
	// CoreThreshold and MemThreshold (percent) exclude GPUs whose observed
	// mean core or memory utilisation is above them (eqs. 3-4, Algorithm 2
	// line 4).
	CoreThreshold float64 `yaml:"core_threshold_pct"`
	MemThreshold  float64 `yaml:"mem_threshold_pct"`
	// Alpha weighs energy against average time per epoch (eq. 1).
	Alpha float64 `yaml:"alpha"`
	// MaxShare is the most jobs on one GPU set.
	MaxShare int `yaml:"max_share"`
	// ReserveGPUs keeps this many GPUs (at most a quarter of the cluster)
	// for high-priority jobs (priority > 0, which need immediate exclusive
	// GPUs): once no more are free,
	// other jobs share GPUs when deadlines allow, without the eq. 1 test,
	// or wait.
	ReserveGPUs int `yaml:"reserve_gpus"`
	// Lengths says where a job's length (steps) comes from: LengthsGiven
	// reads it from the job (the trace's exact step count), LengthsHistory
	// predicts it from the jobs that completed earlier in the run.
	Lengths string `yaml:"lengths"`
	// LengthPriorH is the length (hours alone) LengthsHistory predicts
	// before any job has completed.
	LengthPriorH float64 `yaml:"length_prior_h"`
	// Undo undoes a placement whose observation predicts a missed deadline
	// (Algorithm 1 lines 17-18; default: yes). Off, every observed
	// placement is kept (an ablation: what undo changes).
	Undo bool `yaml:"undo"`
	// SleepIdle puts nodes without jobs to sleep (default: yes).
	policy.SleepArg `yaml:",inline"`
}

// Where job lengths come from (Args.Lengths).
const (
	LengthsGiven   = "given"
	LengthsHistory = "history"
)

// MinSameType is the fewest completed jobs of a job's type whose mean
// length LengthsHistory uses; with fewer, the mean over every completed
// job.
const MinSameType = 3

// Default returns EaCO's defaults (docs/policies/eaco.md says why).
func (Args) Default() Args {
	return Args{CoreThreshold: 80, MemThreshold: 80, Alpha: 0.5, MaxShare: 4, ReserveGPUs: 8, Lengths: LengthsGiven, LengthPriorH: 10, Undo: true, SleepArg: policy.SleepArg{SleepIdle: true}}
}

// Validate names every bad field.
func (a Args) Validate() error {
	switch {
	case !(a.CoreThreshold > 0 && a.CoreThreshold <= 100):
		return fmt.Errorf("core_threshold_pct: %v, want in (0, 100]", a.CoreThreshold)
	case !(a.MemThreshold > 0 && a.MemThreshold <= 100):
		return fmt.Errorf("mem_threshold_pct: %v, want in (0, 100]", a.MemThreshold)
	case !(a.Alpha >= 0 && a.Alpha <= 1):
		return fmt.Errorf("alpha: %v, want in [0, 1]", a.Alpha)
	case a.MaxShare < 1 || a.MaxShare > 8:
		return fmt.Errorf("max_share: %d, want 1..8", a.MaxShare)
	case a.ReserveGPUs < 0:
		return fmt.Errorf("reserve_gpus: %d, want >= 0", a.ReserveGPUs)
	case a.Lengths != LengthsGiven && a.Lengths != LengthsHistory:
		return fmt.Errorf("lengths: %q, want %q or %q", a.Lengths, LengthsGiven, LengthsHistory)
	case !(a.LengthPriorH > 0 && a.LengthPriorH < 1e6):
		return fmt.Errorf("length_prior_h: %v, want in (0, 1e6)", a.LengthPriorH)
	}
	return nil
}

// Policy is EaCO for one run (it accumulates history).
type Policy struct {
	policy.SleepArg
	a Args
	h *coloc.History
	// pending maps a set under observation to the job placed on it.
	pending map[int]int
	// tried maps a job to the sets its placement was undone on.
	tried map[int][]int
	// Finalised and Undone count outcomes of observation.
	Finalised, Undone int
	// Predictions are the factors predicted for each join and, once its
	// observation window ended, the factors observed, in decision order.
	Predictions []Prediction
	// Lengths learnt (LengthsHistory): jobs seen active, and the lengths
	// (seconds alone) of those that completed, per job type and in all.
	seen            map[int]*policy.ColocJob
	doneSec         map[string][]float64
	doneAll         []float64
	predLen, predAt map[int]float64
	// pred keeps H's predictions by the keys of a set's members in order
	// while H is unchanged; memo says which sets a job without deadline
	// fits in this decision.
	pred map[predKey][]float64
	memo map[memoKey]bool
	free [][]int // the decision's copy of FreeGPUs, kept for the next
	mbuf []*policy.ColocView
	kbuf []gavel.Key
	ibuf []int32
	// idx holds the sets a job may join as far as the set alone decides;
	// indexed says it follows the engine's changes (ColocState.Tracked).
	idx     candIndex
	indexed bool
	// The bound (blocked): joining jobs' classes (index among the classes
	// of their GPU count), keys by ID, the member combinations and shapes
	// of indexed sets, and the observations H has recorded (recs; allAt:
	// the last one that changed every prediction).
	classes map[jobClass]int
	nclass  map[int]int // GPU count -> classes
	keyIDs  map[gavel.Key]int32
	combos  map[comboKey]*combo
	shapes  map[shapeKey]*shape
	recs    uint64
	allAt   uint64
	// noBound turns the bound off (DisableBound).
	noBound bool
	// Bounds counts the bound's work.
	Bounds BoundStats
}

// BoundStats counts what the bound did: verdicts decided (a set and a
// joining job class, anew after H recorded the set's combination or it
// with the job's key), those that rejected, and the candidate sets
// skipped without testing them (fits).
type BoundStats struct {
	Decided, Blocked, Skipped int
}

// DisableBound makes p test every candidate set in full (fits), without
// the bound: the reference a bounded run must equal, to the last bit
// (tests and measurements).
func (p *Policy) DisableBound() { p.noBound = true }

// jobClass is what the bound reads of a joining job: its key and mean
// core utilisation.
type jobClass struct {
	k    gavel.Key
	core float64
}

// comboKey is a multiset of keys: their IDs sorted (at most 8 members:
// Args.MaxShare).
type comboKey struct {
	n   int
	ids [8]int32
}

// combo is a member combination of indexed sets and the last observation
// H recorded of it (all: its own predictions changed) and of it with one
// key more (with, by key ID: a joining job of that key is predicted
// anew). H's prediction for a set reads only the record of the set's own
// combination (coloc.History.Predict).
type combo struct {
	all  uint64
	with []uint64
	refs int // shapes of it
}

// shapeKey is what the bound reads of a set: its GPU count and its
// members' keys (IDs) and mean core utilisations, in order (at most 8
// members: Args.MaxShare).
type shapeKey struct {
	gpus, n int
	ids     [8]int32
	cores   [8]float64
}

// shape is the sets of one shapeKey: they share their members' key
// combination and the bound's verdicts, by joining job class.
type shape struct {
	key   shapeKey
	keys  []gavel.Key // the members' keys, in order
	ids   []int32     // and their IDs
	cores []float64   // and mean core utilisations
	combo *combo
	bound []verdict
	refs  int // indexed sets of this shape
}

// verdict is a bound decided for a joining job class: stamp is recs+1
// when it was decided (0: not yet); blocked says eq. 1 rejects every job
// of the class on the set.
type verdict struct {
	stamp   uint64
	blocked bool
}

// candIndex is the sets a job may join as far as the set alone decides
// (Algorithm 2 line 4's thresholds, a free share, no observation, no
// high-priority member), per GPU count, most utilised first (line 5:
// CoreUtil desc, then ID). It is kept from decision to decision from the
// sets the engine reports changed, so that a decision does not rank every
// set.
type candIndex struct {
	by map[int][]*cand // GPU count -> sets in order
	in map[int]*cand   // set ID -> its entry
}

// cand is an indexed set: its view, its members' views (in its Jobs
// order) and its shape (which holds the bound's verdicts).
type cand struct {
	s       *policy.ColocSet
	members []*policy.ColocView
	sh      *shape
}

// cmpCand is line 5's order: most utilised first, then by ID.
func cmpCand(a, b *cand) int {
	if a.s.CoreUtil != b.s.CoreUtil {
		if a.s.CoreUtil > b.s.CoreUtil {
			return -1
		}
		return 1
	}
	return a.s.ID - b.s.ID
}

// eligible says whether a job may join s as far as s alone decides.
func (p *Policy) eligible(st *policy.ColocState, s *policy.ColocSet) bool {
	return !s.Observing && len(s.Jobs) < p.a.MaxShare &&
		s.CoreUtil <= p.a.CoreThreshold && s.MemUtil <= p.a.MemThreshold && // Algorithm 2 line 4
		!holdsPriority(st, s) // a high-priority job keeps its GPUs to itself (Sec. 4.2)
}

// index brings the candidate index up to date: from the sets changed
// since the last decision when the engine tracks them, else from every
// set.
func (p *Policy) index(st *policy.ColocState) {
	ids := st.Changed
	if !st.Tracked || !p.indexed {
		for _, c := range p.idx.in {
			p.release(c)
		}
		p.idx = candIndex{by: map[int][]*cand{}, in: map[int]*cand{}}
		ids = nil
		for _, s := range st.Sets {
			ids = append(ids, s.ID)
		}
		p.indexed = st.Tracked
	}
	for _, id := range ids {
		if old, ok := p.idx.in[id]; ok {
			b := p.idx.by[len(old.s.GPUs)]
			i, _ := slices.BinarySearchFunc(b, old, cmpCand)
			p.idx.by[len(old.s.GPUs)] = slices.Delete(b, i, i+1)
			delete(p.idx.in, id)
			p.release(old)
		}
		if s := st.Set(id); s != nil && p.eligible(st, s) {
			c := &cand{s: s, members: make([]*policy.ColocView, len(s.Jobs))}
			for k, j := range s.Jobs {
				c.members[k] = st.View(j)
			}
			p.hold(c)
			b := p.idx.by[len(s.GPUs)]
			i, _ := slices.BinarySearchFunc(b, c, cmpCand)
			p.idx.by[len(s.GPUs)] = slices.Insert(b, i, c)
			p.idx.in[id] = c
		}
	}
}

var _ policy.ColocScheduler = (*Policy)(nil)

// New builds EaCO.
func New(a Args, d policy.ColocDeps) (*Policy, error) {
	if d.History == nil {
		return nil, fmt.Errorf("eaco needs a history H")
	}
	return &Policy{SleepArg: a.SleepArg, a: a, h: d.History(), pending: map[int]int{}, tried: map[int][]int{},
		seen: map[int]*policy.ColocJob{}, doneSec: map[string][]float64{}, predLen: map[int]float64{}, predAt: map[int]float64{},
		classes: map[jobClass]int{}, nclass: map[int]int{}, keyIDs: map[gavel.Key]int32{}, combos: map[comboKey]*combo{}, shapes: map[shapeKey]*shape{}}, nil
}

// Prediction is one join: the set's members (new job last), the factors
// H predicted for them, and the factors observed at the end of the
// window (nil if the window never ended, e.g. the set emptied first).
type Prediction struct {
	Keys      []gavel.Key
	Predicted []float64
	Observed  []float64
	// Job is the job that joined; Undone says its placement was undone.
	Job    int
	Undone bool
	set    int
}

// LengthPrediction is a completed job's predicted length at its first
// decision and its real one (seconds alone).
type LengthPrediction struct {
	Job                 int
	PredictedS, ActualS float64
}

// Lengths returns the length predictions of the jobs that completed, by
// job ID (LengthsHistory only).
func (p *Policy) Lengths() []LengthPrediction {
	var out []LengthPrediction
	for id, a := range p.predAt {
		out = append(out, LengthPrediction{Job: id, PredictedS: p.predLen[id], ActualS: a})
	}
	slices.SortFunc(out, func(a, b LengthPrediction) int { return a.Job - b.Job })
	return out
}

// learnLengths records the jobs that completed since the last decision
// (seen active before, not now) and notes the jobs that arrived.
func (p *Policy) learnLengths(st *policy.ColocState) {
	if p.a.Lengths != LengthsHistory {
		return
	}
	var gone []int
	for id := range p.seen {
		if st.View(id) == nil {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone) // the means must not depend on map order
	for _, id := range gone {
		j := p.seen[id]
		sec := j.Steps / j.IsoRate // known once it has completed
		p.doneSec[j.Key.Type] = insertSorted(p.doneSec[j.Key.Type], sec)
		p.doneAll = insertSorted(p.doneAll, sec)
		delete(p.seen, id)
		if _, ok := p.predLen[id]; ok {
			p.predAt[id] = sec
		}
	}
	for _, v := range st.Jobs {
		if _, ok := p.seen[v.Job.ID]; !ok {
			p.seen[v.Job.ID] = v.Job
			p.predLen[v.Job.ID] = p.lengthSec(v.Job)
		}
	}
}

// lengthSec predicts a job's length in seconds alone: the median of the
// completed jobs of its type (at least MinSameType), else of all
// completed jobs, else the prior. The median, not the mean: lengths are
// heavy-tailed, and a mean above most jobs' lengths would predict nearly
// every deadline job to miss.
func (p *Policy) lengthSec(j *policy.ColocJob) float64 {
	if d := p.doneSec[j.Key.Type]; len(d) >= MinSameType {
		return median(d)
	}
	if len(p.doneAll) > 0 {
		return median(p.doneAll)
	}
	return p.a.LengthPriorH * 3600
}

// median of xs (kept sorted: insertSorted).
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// insertSorted inserts x into the sorted xs.
func insertSorted(xs []float64, x float64) []float64 {
	i, _ := slices.BinarySearch(xs, x)
	return slices.Insert(xs, i, x)
}

// remaining is the steps v has left at now as the policy knows it: exact
// with LengthsGiven; with LengthsHistory the predicted length less what
// is done, at least one epoch (a job predicted to have finished is
// expected to run another epoch).
func (p *Policy) remaining(v *policy.ColocView, now job.Time) float64 {
	if p.a.Lengths != LengthsHistory {
		return v.Job.Steps - v.DoneAt(now)
	}
	return math.Max(p.lengthSec(v.Job)*v.Job.IsoRate-v.DoneAt(now), v.Job.EpochSteps)
}

// History is the policy's H.
func (p *Policy) History() *coloc.History { return p.h }

// completion is when a job with rem steps left finishes at rate.
func completion(now job.Time, rem, rate float64) float64 {
	if !(rate > 0) {
		return math.Inf(1)
	}
	return float64(now) + 1000*rem/rate
}

func (p *Policy) meets(v *policy.ColocView, now job.Time, f float64) bool {
	if v.Job.Deadline == policy.NoDeadline {
		return f > 0
	}
	return completion(now, p.remaining(v, now), v.Job.IsoRate*f) <= float64(v.Job.Deadline)
}

// ScheduleColoc implements policy.ColocScheduler.
func (p *Policy) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	var d policy.ColocDecision
	undone := map[int]bool{}
	if p.pred == nil {
		p.pred, p.memo = map[predKey][]float64{}, map[memoKey]bool{}
	}
	// H's predictions are kept while H stays as it is: all dropped when it
	// records an observation (below), and at every decision of a state
	// built by hand.
	if !st.Tracked || len(st.Observed) > 0 {
		clear(p.pred)
	}
	clear(p.memo) // fits of this decision's jobs: they depend on the time
	p.learnLengths(st)
	// Lines 12-20: a finished observation is recorded in H, then every
	// member's JCT is re-estimated from what was measured.
	for _, o := range st.Observed {
		p.h.Record(o.Keys, o.Factors)
		p.recorded(o.Keys)
		j, ok := p.pending[o.Set]
		if !ok {
			continue
		}
		delete(p.pending, o.Set)
		pr := p.prediction(o.Set, j)
		if pr != nil {
			pr.Observed = observedIn(pr.Keys, o)
		}
		keep := true
		for i, id := range o.Jobs {
			if v := st.View(id); v != nil && !p.meets(v, st.Now, o.Factors[i]) {
				keep = false
			}
		}
		if keep || !p.a.Undo || !slices.Contains(o.Jobs, j) {
			p.Finalised++
			continue
		}
		p.Undone++
		if pr != nil {
			pr.Undone = true
		}
		p.tried[j] = append(p.tried[j], o.Set)
		undone[o.Set] = true
		d.Actions = append(d.Actions, policy.ColocAction{Kind: policy.ColocUndo, Job: j})
	}
	for set := range p.pending {
		if st.Set(set) == nil {
			delete(p.pending, set)
		}
	}
	free := append(p.free[:0], st.FreeGPUs...) // policy.CopyFree into a kept buffer
	defer func() { p.free = free[:0] }()
	// Sets a job may join this round, most utilised first (line 5): the
	// index, less the sets under observation and those just undone.
	p.index(st)
	left := len(p.idx.in)
	for id := range p.pending {
		if _, ok := p.idx.in[id]; ok {
			left--
		}
	}
	for id := range undone {
		if _, ok := p.idx.in[id]; ok {
			if _, busy := p.pending[id]; !busy {
				left--
			}
		}
	}
	taken := func(s *policy.ColocSet) bool {
		_, busy := p.pending[s.ID]
		return busy || undone[s.ID]
	}
	nfree := 0
	for _, f := range free {
		nfree += len(f)
	}
	// The reserve is at most a quarter of the cluster, and none while
	// nothing runs (a job must never wait for nothing).
	reserve := min(p.a.ReserveGPUs, st.Nodes*st.GPUsPerNode/4)
	if len(st.Sets) == 0 {
		reserve = 0
	}
	memo := p.memo
	for _, v := range st.Waiting() {
		if left == 0 && nfree == 0 {
			break // nothing left to place on
		}
		placed := false
		excl := policy.PackNode(free, v.Job.Key.Scale, st.GPUsPerNode)
		if v.Job.Priority <= 0 && nfree-v.Job.Key.Scale < reserve {
			excl = -1 // the reserve is for high-priority jobs
		}
		var cands []*cand
		if v.Job.Priority <= 0 { // high priority: exclusive (Sec. 4.2)
			cands = p.idx.by[v.Job.Key.Scale]
		}
		tried, cls, kid := p.tried[v.Job.ID], -1, p.keyID(v.Job.Key)
		if excl >= 0 && !p.noBound && !math.IsNaN(v.Job.CoreAvg) {
			cls = p.class(v.Job)
		}
		for _, c := range cands {
			s := c.s
			// Every test below only rejects, so their order is free: the
			// cheapest first.
			if cls >= 0 && p.blocked(st, c, v, cls, kid) {
				p.Bounds.Skipped++
				continue
			}
			if taken(s) || slices.Contains(tried, s.ID) {
				continue
			}
			// Algorithm 2 lines 7-9: free memory after the members' peaks.
			if (100-s.MemPeak)/100*st.GPUMemGiB*float64(len(s.GPUs)) < v.Job.MemGiB*float64(len(s.GPUs)) {
				continue
			}
			mk := memoKey{v.Job.Key, s.ID}
			nd := v.Job.Deadline == policy.NoDeadline && excl < 0
			if nd {
				if ok, seen := memo[mk]; seen && !ok {
					continue
				}
			}
			ok := p.fits(st, v, kid, c, excl >= 0)
			if nd {
				memo[mk] = ok
			}
			if ok {
				d.Actions = append(d.Actions, policy.ColocAction{Kind: policy.ColocJoin, Job: v.Job.ID, Set: s.ID, Observe: true})
				left--
				p.pending[s.ID] = v.Job.ID // taken for the rest of the decision
				p.logJoin(st, s, v)
				placed = true
				break
			}
		}
		if placed || excl < 0 {
			continue
		}
		gpus := policy.Take(free, excl, v.Job.Key.Scale)
		nfree -= len(gpus)
		d.Actions = append(d.Actions, policy.ColocAction{Kind: policy.ColocStart, Job: v.Job.ID, Node: excl, GPUs: gpus})
	}
	return d
}

// holdsPriority reports whether a member of s is a high-priority job: the
// paper's high-priority jobs "require immediate, exclusive resource
// allocation" (Sec. 4.2), so no job joins them.
func holdsPriority(st *policy.ColocState, s *policy.ColocSet) bool {
	for _, id := range s.Jobs {
		if v := st.View(id); v != nil && v.Job.Priority > 0 {
			return true
		}
	}
	return false
}

type memoKey struct {
	k   gavel.Key
	set int
}

// fits is lines 6-10 with eq. 1: the predicted JCT of every job on s with
// v meets its deadline and, when v could instead run alone (alone), the
// weighted energy/time cost of sharing is no worse than running alone.
func (p *Policy) fits(st *policy.ColocState, v *policy.ColocView, kid int32, c *cand, alone bool) bool {
	s := c.s
	members := append(p.mbuf[:0], c.members...)
	defer func() { p.mbuf = members[:0] }()
	nBefore := len(members)
	members = append(members, v)
	keys, ids := p.joined(c.sh, v, kid)
	after := p.predict(keys, ids)
	for i, m := range members {
		if !p.meets(m, st.Now, after[i]) {
			return false
		}
	}
	if !alone {
		return true
	}
	before := p.predict(keys[:nBefore], ids[:nBefore])
	// Eq. 1 relative to running v alone: energy of the set's GPUs (and
	// its share of the server) until its last job ends, plus v's own GPUs
	// when alone; average time per epoch of the affected jobs.
	setW := func(core float64, jobs int) hw.Watts { return setWatts(st, len(s.GPUs), core, jobs) }
	var core float64
	var tAfter, tBefore, tpeA, tpeB float64
	for i, m := range members {
		rem := p.remaining(m, st.Now)
		tA := rem / (m.Job.IsoRate * after[i])
		tAfter = math.Max(tAfter, tA)
		tpeA += m.Job.EpochSteps / (m.Job.IsoRate * after[i])
		if i < len(before) {
			core += m.Job.CoreAvg
			tB := rem / (m.Job.IsoRate * before[i])
			tBefore = math.Max(tBefore, tB)
			tpeB += m.Job.EpochSteps / (m.Job.IsoRate * before[i])
		}
	}
	tv := p.remaining(v, st.Now) / v.Job.IsoRate
	tpeB += v.Job.EpochSteps / v.Job.IsoRate
	eShared := float64(setW(math.Min(core+v.Job.CoreAvg, 100), len(members))) * tAfter
	eAlone := float64(setW(math.Min(core, 100), len(members)-1))*tBefore + float64(setW(v.Job.CoreAvg, 1))*tv
	cost := p.a.Alpha*eShared/eAlone + (1-p.a.Alpha)*tpeA/tpeB
	return cost <= 1
}

// setWatts is eq. 1's power of a set of gpus GPUs at core utilisation
// core (percent) holding jobs jobs: its GPUs and its share of the server.
func setWatts(st *policy.ColocState, gpus int, core float64, jobs int) hw.Watts {
	pw := st.Power
	n := float64(gpus)
	share := n / float64(st.GPUsPerNode)
	return hw.Watts(n)*pw.GPU(core) + hw.Watts(share)*pw.Server(pw.CPUPerJobPct*float64(jobs)*share)
}

// boundMargin is how far above 1 the bound must be to reject: far above
// the rounding of either computation (about 1e-15 relative).
const boundMargin = 1e-9

// blocked reports whether eq. 1 rejects every job of class cls (v's, of
// key ID kid) on c's set while the set and H's predictions for it stay as
// they are, deciding it once per shape and class (bound).
func (p *Policy) blocked(st *policy.ColocState, c *cand, v *policy.ColocView, cls int, kid int32) bool {
	sh := c.sh
	if cls >= len(sh.bound) {
		sh.bound = append(sh.bound, make([]verdict, p.nclass[sh.key.gpus]-len(sh.bound))...)
	}
	b := &sh.bound[cls]
	cb := sh.combo
	if b.stamp != 0 && b.stamp > p.allAt && b.stamp > cb.all && (int(kid) >= len(cb.with) || b.stamp > cb.with[kid]) {
		return b.blocked
	}
	*b = verdict{stamp: p.recs + 1, blocked: p.bound(st, sh, v, kid) > 1+boundMargin}
	p.Bounds.Decided++
	if b.blocked {
		p.Bounds.Blocked++
	}
	return b.blocked
}

// bound is a lower bound of eq. 1's cost (fits) of v joining a set of
// shape sh that holds whatever the members' and v's remaining steps and
// epoch lengths: it reads of the set only its shape and of v only its key
// and mean core utilisation, so it holds for every job of v's class on
// every set of the shape at every time while H's predictions for it stay.
// With a_i and b_i the members' factors after and before v joins (a_v
// v's), W_A, W_B and W_v the powers setWatts gives the set after, before
// and v alone, T_i = rem_i/(rate_i b_i) and rho = min_i b_i/a_i: the time
// after is at least max(rho max_i T_i, t_v/a_v) and the time before
// max_i T_i, so that over every max_i T_i >= 0 the energy ratio is at
// least W_A/(W_B/rho + W_v a_v); the time per epoch ratio
// (sum_i e_i/a_i + e_v/a_v)/(sum_i e_i/b_i + e_v), e epoch times alone, is
// at least min(rho, 1/a_v). It returns 0 (no bound) where a factor or
// power is not a positive finite number, except that a factor after of 0
// or less gives +Inf: fits then rejects v (meets).
func (p *Policy) bound(st *policy.ColocState, sh *shape, v *policy.ColocView, kid int32) float64 {
	n := len(sh.keys)
	keys, ids := p.joined(sh, v, kid)
	after := p.predict(keys, ids)
	before := p.predict(keys[:n], ids[:n])
	for _, f := range after {
		if !(f > 0) {
			return math.Inf(1)
		}
	}
	finite := func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
	var core float64
	rho := math.Inf(1)
	for i := range n {
		if !finite(after[i]) || !finite(before[i]) {
			return 0
		}
		core += sh.cores[i]
		rho = math.Min(rho, before[i]/after[i])
	}
	av := after[n]
	wa := float64(setWatts(st, sh.key.gpus, math.Min(core+v.Job.CoreAvg, 100), n+1))
	wb := float64(setWatts(st, sh.key.gpus, math.Min(core, 100), n))
	wv := float64(setWatts(st, sh.key.gpus, v.Job.CoreAvg, 1))
	if !finite(av) || !finite(rho) || !finite(wa) || !finite(wb) || !finite(wv) {
		return 0
	}
	lb := p.a.Alpha*wa/(wb/rho+wv*av) + (1-p.a.Alpha)*math.Min(rho, 1/av)
	if math.IsNaN(lb) {
		return 0
	}
	return lb
}

// joined is the keys and key IDs of a set of shape sh with v (of key ID
// kid) joining, in p's buffers.
func (p *Policy) joined(sh *shape, v *policy.ColocView, kid int32) ([]gavel.Key, []int32) {
	p.kbuf = append(append(p.kbuf[:0], sh.keys...), v.Job.Key)
	p.ibuf = append(append(p.ibuf[:0], sh.ids...), kid)
	return p.kbuf, p.ibuf
}

// class is the index of j's class among those of its GPU count.
func (p *Policy) class(j *policy.ColocJob) int {
	k := jobClass{j.Key, j.CoreAvg}
	i, ok := p.classes[k]
	if !ok {
		i = p.nclass[j.Key.Scale]
		p.classes[k] = i
		p.nclass[j.Key.Scale]++
	}
	return i
}

// keyID is k's ID (given in order of first use).
func (p *Policy) keyID(k gavel.Key) int32 {
	id, ok := p.keyIDs[k]
	if !ok {
		id = int32(len(p.keyIDs))
		p.keyIDs[k] = id
	}
	return id
}

// comboOf is the multiset of keys (ok false: more than comboKey holds).
func (p *Policy) comboOf(keys []gavel.Key) (comboKey, bool) {
	var k comboKey
	if len(keys) > len(k.ids) {
		return k, false
	}
	k.n = len(keys)
	for i, key := range keys {
		k.ids[i] = p.keyID(key)
	}
	slices.Sort(k.ids[:k.n])
	return k, true
}

// hold gives c its shape (made if new) and the shape its combination.
func (p *Policy) hold(c *cand) {
	n := len(c.members)
	k := shapeKey{gpus: len(c.s.GPUs), n: n}
	shared := n <= len(k.ids)
	for i, m := range c.members {
		if shared {
			k.ids[i], k.cores[i] = p.keyID(m.Job.Key), m.Job.CoreAvg
			shared = !math.IsNaN(m.Job.CoreAvg) // a NaN key is never found again
		}
	}
	if sh := p.shapes[k]; shared && sh != nil {
		sh.refs++
		c.sh = sh
		return
	}
	sh := &shape{key: k, keys: make([]gavel.Key, n), ids: make([]int32, n), cores: make([]float64, n), refs: 1}
	for i, m := range c.members {
		sh.keys[i], sh.ids[i], sh.cores[i] = m.Job.Key, p.keyID(m.Job.Key), m.Job.CoreAvg
	}
	c.sh = sh
	ck, ok := p.comboOf(sh.keys)
	if !shared || !ok {
		sh.combo = &combo{} // never shared: every record reaches it through allAt
		return
	}
	p.shapes[k] = sh
	cb := p.combos[ck]
	if cb == nil {
		cb = &combo{}
		p.combos[ck] = cb
	}
	cb.refs++
	sh.combo = cb
}

// release drops c's hold on its shape, forgetting the shape with the last
// set of it, and the combination with the last shape of it.
func (p *Policy) release(c *cand) {
	sh := c.sh
	if p.shapes[sh.key] != sh {
		return // never shared
	}
	if sh.refs--; sh.refs > 0 {
		return
	}
	delete(p.shapes, sh.key)
	ck, _ := p.comboOf(sh.keys)
	if sh.combo.refs--; sh.combo.refs == 0 {
		delete(p.combos, ck)
	}
}

// recorded notes that H recorded an observation of keys: H's predictions
// change for that combination only, so the bounds to decide anew are
// those of the sets that hold it and, for a joining job of one of its
// keys, of those that hold it less that key.
func (p *Policy) recorded(keys []gavel.Key) {
	p.recs++
	k, ok := p.comboOf(keys)
	if !ok {
		p.allAt = p.recs
		return
	}
	if cb := p.combos[k]; cb != nil {
		cb.all = p.recs
	}
	for i := range k.n {
		id := k.ids[i]
		if i > 0 && k.ids[i-1] == id {
			continue // the same combination less the same key
		}
		var rest comboKey
		rest.n = k.n - 1
		copy(rest.ids[:], k.ids[:i])
		copy(rest.ids[i:], k.ids[i+1:k.n])
		if cb := p.combos[rest]; cb != nil {
			if int(id) >= len(cb.with) {
				cb.with = append(cb.with, make([]uint64, int(id)+1-len(cb.with))...)
			}
			cb.with[id] = p.recs
		}
	}
}

// predKey is a set's member keys' IDs in order (at most 8:
// Args.MaxShare).
type predKey struct {
	n int
	k [8]int32
}

// predict is H's prediction for a set of keys in order (of IDs ids), kept
// in pred while H is unchanged (the same keys in the same order give the
// same factors).
func (p *Policy) predict(keys []gavel.Key, ids []int32) []float64 {
	if len(keys) > len(predKey{}.k) {
		return p.h.Predict(keys)
	}
	k := predKey{n: len(keys)}
	copy(k.k[:], ids)
	f, ok := p.pred[k]
	if !ok {
		f = p.h.Predict(keys)
		p.pred[k] = f
	}
	return f
}

// logJoin logs the factors H predicted for s with v joining (as fits used
// them).
func (p *Policy) logJoin(st *policy.ColocState, s *policy.ColocSet, v *policy.ColocView) {
	pr := Prediction{Job: v.Job.ID, set: s.ID}
	for _, id := range s.Jobs {
		pr.Keys = append(pr.Keys, st.View(id).Job.Key)
	}
	pr.Keys = append(pr.Keys, v.Job.Key)
	ids := make([]int32, len(pr.Keys))
	for i, k := range pr.Keys {
		ids[i] = p.keyID(k)
	}
	pr.Predicted = slices.Clone(p.predict(pr.Keys, ids))
	p.Predictions = append(p.Predictions, pr)
}

// prediction is the latest logged join of job j on set.
func (p *Policy) prediction(set, j int) *Prediction {
	for i := len(p.Predictions) - 1; i >= 0; i-- {
		if pr := &p.Predictions[i]; pr.set == set && pr.Job == j {
			return pr
		}
	}
	return nil
}

// observedIn is o's factors for the members of keys (nil if the set's
// members changed during the window, so that the two do not compare).
func observedIn(keys []gavel.Key, o policy.ColocObservation) []float64 {
	if len(o.Keys) != len(keys) {
		return nil
	}
	for i := range keys {
		if o.Keys[i] != keys[i] {
			return nil
		}
	}
	return slices.Clone(o.Factors)
}
