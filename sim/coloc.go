package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace/gavel"
)

// ColocOptions configure a co-location replay (EaCO Section 6.2): nodes of
// GPUsPerNode GPUs where DL training jobs space-share GPU sets.
type ColocOptions struct {
	Nodes, GPUsPerNode int
	GPUMemGiB          float64
	// Power is eq. 5 (server part from CPU utilisation, one term per GPU
	// from its utilisation); SleepIdle puts nodes without jobs to sleep.
	Power     coloc.Power
	SleepIdle bool
	// Truth gives a job's real factor next to a co-tenant (measured
	// pairs); sets of three or more follow coloc.SetFactors.
	Truth coloc.PairFunc
	// TruthSet, when set, replaces Truth and the rule: every member's real
	// factor in a set (the EaCO paper's calibration, coloc.PaperInterference).
	TruthSet coloc.SetFunc
	// MaxShare is the most jobs one GPU set may hold (the paper measured
	// up to four).
	MaxShare int
	Timeline bool
	// Progress, if set, is called each time another twentieth of the jobs
	// has ended (with the count ended and the total): a long run's sign of
	// life, decided by the jobs, never by the clock.
	Progress func(ended, total int)
	// Rounds, when set, replaces event-driven decisions by Gavel's
	// round-based timing (see RunColoc); the scheduler must then be a
	// policy.RoundAllocator.
	Rounds *RoundTiming
	// ObsNoise, when > 0, is the measurement noise of an observation
	// window: each member's observed factor is multiplied by
	// exp(ObsNoise * z), z standard normal from a source seeded by
	// ObsSeed; the rates the engine runs are unchanged.
	ObsNoise float64
	ObsSeed  uint64
	// Rates gives two jobs' measured rates (steps/s) when they share a GPU
	// set, uncapped (Gavel's pair throughputs); needed with Rounds.
	Rates func(a, b gavel.Key) (ra, rb float64, ok bool)
}

// RoundTiming is Gavel's round-based timing: rounds of Round, the
// allocation recomputed at most every Reset (and when the cluster runs
// dry), a job's GPUs spanning servers as Gavel places them.
type RoundTiming struct {
	Round, Reset job.Time
	// IgnoreFailures turns Gavel's failed-round rule off (see runRounds):
	// a job whose per-GPU share of a round's steps rounds to 0 runs its
	// last steps and finishes like any other.
	IgnoreFailures bool
	// MaxTracked bounds the jobs and pairs tracked at once (Gavel tracks
	// every pair of active jobs of one GPU count, so a long queue grows
	// them quadratically); 0: DefaultMaxTracked.
	MaxTracked int
}

// DefaultMaxTracked is the default bound on tracked jobs and pairs: about
// 1,400 active jobs of one GPU count under a pairing policy, some 200 MB.
const DefaultMaxTracked = 1_000_000

// GavelRounds is Gavel's default timing: 360 s rounds, allocation reset
// at most every 1,920 s (scheduler.py's time_per_iteration and
// minimum_time_between_allocation_resets).
var GavelRounds = RoundTiming{Round: 360_000, Reset: 1_920_000}

// ColocJobResult is one job's outcome.
type ColocJobResult struct {
	ID                 int
	Submit, Start, End job.Time
	Deadline           job.Time
	// Run is the time it held GPUs; Missed says End > Deadline.
	Run    job.Time
	Missed bool
	// Dropped says Gavel's failed-round rule removed the job without a
	// completion (timing gavel-rounds): End is when it was removed.
	Dropped bool
	Undos   int
	// MaxShare is the most jobs its set held while it ran.
	MaxShare int
	// Utilisation (%) of the GPUs it ran on, time-weighted over its run
	// (mean of the set's summed mean core and memory utilisation) and the
	// highest summed peaks of its set.
	MeanCore, PeakCore, MeanMem, PeakMem float64
}

// ColocSetResult is one GPU set from its first job to its release.
type ColocSetResult struct {
	ID, Node, GPUs int
	Start, End     job.Time
	// Jobs counts the jobs that ran on it; MaxJobs the most at once.
	Jobs, MaxJobs int
	// Utilisation (%) per GPU: time-weighted mean and highest peak sums.
	MeanCore, PeakCore, MeanMem, PeakMem float64
}

// ColocPoint is the cluster after an event.
type ColocPoint struct {
	At                   job.Time
	ActiveNodes, Running int
	Waiting, SharedSets  int
	Power                hw.Watts
}

// ColocResult is a co-location replay's outcome. Energy (every node, busy,
// idle or asleep) = ActiveEnergy + IdleEnergy + SleepEnergy (tested).
type ColocResult struct {
	Jobs                             []ColocJobResult
	Sets                             []ColocSetResult
	Energy, ActiveEnergy             hw.Joules
	IdleEnergy, SleepEnergy          hw.Joules
	Makespan                         job.Time
	AvgActiveNodes                   float64
	AvgRunSec, AvgJTTSec, AvgWaitSec float64
	DeadlineMisses, Undos, Joins     int
	// Dropped counts jobs removed without a completion (gavel-rounds).
	Dropped   int
	LostSteps float64
	// Utilisation of GPUs holding jobs, time-weighted (%): mean core and
	// memory; peaks are the highest set sum of the members' peaks.
	MeanCoreUtil, PeakCoreUtil float64
	MeanMemUtil, PeakMemUtil   float64
	Events, Decisions          int
	Timeline                   []ColocPoint
	Hourly                     []hw.Joules
}

type colocEvent struct {
	kind    int // ckArrive, ckDone, ckObs
	id      int // job or set
	version uint64
}

const (
	ckArrive = iota
	ckDone
	ckObs
)

const (
	csFuture = iota
	csWaiting
	csRunning
	csDone
)

type cjob struct {
	j        *policy.ColocJob
	view     policy.ColocView
	state    int
	version  uint64
	started  bool
	start    job.Time
	runSince job.Time
	ran      job.Time
	maxShare int
	coreMs   float64
	memMs    float64
	corePeak float64
	memPeak  float64
}

type cset struct {
	id, node  int
	gpus      []int
	members   []int
	observing bool
	marks     []float64
	obsStart  job.Time
	version   uint64
	core, mem float64 // summed mean utilisation (capped)
	memPeak   float64
	corePeak  float64
	start     job.Time
	jobs      int
	maxJobs   int
	coreMs    float64
	memMs     float64
	peakCore  float64
	peakMem   float64
	// at is the time up to which the set's utilisation is integrated (its
	// own, its members' and the cluster's): the integrals are brought up
	// to date when the set's members or utilisation change.
	at job.Time
	// view is what schedulers see of the set; stale says it must be
	// rebuilt (a fresh value, so a view a scheduler kept never changes)
	// and that the set is in the engine's list of changed sets.
	view  *policy.ColocSet
	stale bool
}

type colocEngine struct {
	k      Kernel[colocEvent]
	o      ColocOptions
	s      policy.ColocScheduler
	jobs   []cjob
	sets   []*cset // by id; nil once released
	live   []*cset // the sets in use, by ascending id
	gpuSet [][]int // node, gpu -> set id or -1
	// free[n] lists node n's unused GPUs, ascending; a row is replaced,
	// never written in place, so a scheduler's copy of the table stays true.
	free [][]int
	colocNodes
	// dirty lists the nodes whose power must be recomputed (isDirty marks
	// them); nodeAt is the time up to which each node's energy is in the
	// ledger: a node is charged only when its power changes, and once at
	// the end, so that an event costs what it touches, not every node.
	dirty   []int
	isDirty []bool
	nodeAt  []job.Time
	obs     []policy.ColocObservation
	noise   *rand.Rand // observation noise (ObsNoise > 0)
	res     *ColocResult
	// views are the active jobs' views (arrived, not done) by ID, queue
	// the waiting ones in queue order (policy.CmpWaiting), setViews the
	// live sets' views (same index as live, rebuilt in state when
	// stale) and changed the sets marked stale since the last decision:
	// the scheduler's state, kept from event to event.
	views    []*policy.ColocView
	queue    []*policy.ColocView
	setViews []*policy.ColocSet
	changed  []int
	// checkPower makes settled recompute every node's power from scratch
	// and fail on any node the marks missed (tests: RunColocChecked).
	checkPower bool

	busyGPUms, coreGPUms, memGPUms float64
}

// colocNodes is what both timing rules of the co-location engine keep of
// the nodes: their power and state, the energy ledger split into active,
// idle and sleeping nodes, the active node time and the last timeline
// point.
type colocNodes struct {
	led                 Ledger
	cAct, cIdle, cSleep int
	nodeW               []hw.Watts
	nodeBusy            []bool
	actNodeMs           float64
	lastPoint           ColocPoint
}

// newColocNodes starts nodes nodes, all idle at 0 W.
func newColocNodes(nodes int) colocNodes {
	c := colocNodes{nodeW: make([]hw.Watts, nodes), nodeBusy: make([]bool, nodes)}
	c.cAct, c.cIdle, c.cSleep = c.led.Add("active nodes"), c.led.Add("idle nodes"), c.led.Add("sleeping nodes")
	return c
}

// accrue charges each node's power from from to to: active when busy,
// else sleeping (sleepIdle) or idle.
func (c *colocNodes) accrue(from, to job.Time, sleepIdle bool) {
	ms := float64(to - from)
	for n := range c.nodeW {
		comp := c.cAct
		switch {
		case c.nodeBusy[n]:
			c.actNodeMs += ms
		case sleepIdle:
			comp = c.cSleep
		default:
			comp = c.cIdle
		}
		c.led.Accrue(comp, c.nodeW[n], from, to)
	}
}

// point appends pt to the timeline of r unless it repeats the last point.
func (c *colocNodes) point(r *ColocResult, pt ColocPoint) {
	last := c.lastPoint
	last.At = pt.At
	if len(r.Timeline) == 0 || last != pt {
		r.Timeline = append(r.Timeline, pt)
		c.lastPoint = pt
	}
}

// RunColoc replays jobs (IDs 0..len-1, any order of Submit) under s. With
// o.Rounds it runs Gavel's round-based timing instead (runRounds): s must
// then be a policy.RoundAllocator and IDs must follow arrival order.
func RunColoc(jobs []policy.ColocJob, s policy.ColocScheduler, o ColocOptions) (*ColocResult, error) {
	return runColoc(jobs, s, o, false)
}

func runColoc(jobs []policy.ColocJob, s policy.ColocScheduler, o ColocOptions, checkPower bool) (*ColocResult, error) {
	if o.Nodes < 1 || o.GPUsPerNode < 1 || (o.Truth == nil && o.TruthSet == nil) || o.MaxShare < 1 || o.GPUMemGiB <= 0 {
		return nil, fmt.Errorf("sim: co-location replay needs nodes, GPUs per node, GPU memory, a truth model and a share limit")
	}
	if o.Rounds != nil {
		a, ok := s.(policy.RoundAllocator)
		if !ok {
			return nil, fmt.Errorf("sim: %T does not run under Gavel's round-based timing", s)
		}
		return runRounds(jobs, a, o)
	}
	if !(o.ObsNoise >= 0) || o.ObsNoise > 1 {
		return nil, fmt.Errorf("sim: observation noise %v, want 0..1", o.ObsNoise)
	}
	e := &colocEngine{o: o, s: s, res: &ColocResult{Jobs: make([]ColocJobResult, len(jobs))}, colocNodes: newColocNodes(o.Nodes), checkPower: checkPower,
		queue: []*policy.ColocView{}}
	if o.ObsNoise > 0 {
		e.noise = rand.New(rand.NewPCG(o.ObsSeed, 0x0b5e))
	}
	e.gpuSet, e.free = make([][]int, o.Nodes), make([][]int, o.Nodes)
	e.isDirty, e.nodeAt = make([]bool, o.Nodes), make([]job.Time, o.Nodes)
	all := make([]int, o.GPUsPerNode)
	for g := range all {
		all[g] = g
	}
	for n := range e.gpuSet {
		e.gpuSet[n] = slices.Repeat([]int{-1}, o.GPUsPerNode)
		e.free[n] = all
		e.mark(n)
	}
	e.jobs = make([]cjob, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		if j.ID != i {
			return nil, fmt.Errorf("sim: job %d has ID %d", i, j.ID)
		}
		if !(j.Steps > 0) || !(j.EpochSteps > 0) || !(j.IsoRate > 0) || j.Key.Scale < 1 || j.Key.Scale > o.GPUsPerNode || j.Submit < 0 {
			return nil, fmt.Errorf("sim: job %d: needs steps, epoch steps, an isolated rate, 1..%d GPUs and a submit time >= 0", i, o.GPUsPerNode)
		}
		e.jobs[i] = cjob{j: j, view: policy.ColocView{Job: j, Set: -1}}
		e.res.Jobs[i] = ColocJobResult{ID: i, Submit: j.Submit, Deadline: j.Deadline}
		e.k.Post(j.Submit, colocEvent{kind: ckArrive, id: i})
	}
	e.k.Track(len(jobs))
	e.power()
	if err := e.k.Run(e); err != nil {
		return nil, err
	}
	if e.k.Open() > 0 {
		return nil, fmt.Errorf("sim: %d co-location jobs never finished (a policy left them waiting with nothing running)", e.k.Open())
	}
	return e.finish(), nil
}

func (e *colocEngine) stale(ev colocEvent) bool {
	switch ev.kind {
	case ckDone:
		j := &e.jobs[ev.id]
		return j.state != csRunning || j.version != ev.version
	case ckObs:
		s := e.sets[ev.id]
		return s == nil || !s.observing || s.version != ev.version
	}
	return false
}

// advance does nothing: nothing in the engine is integrated per event.
// A running job's progress is computed on read (policy.ColocView.DoneAt)
// and written back when its rate changes (sync); a set's utilisation is
// integrated when its members or utilisation change (integrate).
func (e *colocEngine) advance(from, to job.Time) {}

// sync writes j's progress up to now into its view: called before its
// rate changes, so that Done is always the steps at the view's At.
func (e *colocEngine) sync(j *cjob) {
	now := e.k.Now()
	j.view.Done, j.view.At = j.view.DoneAt(now), now
}

// integrate adds s's utilisation since it was last integrated to its own,
// its members' and the cluster's integrals; called before its members or
// utilisation change and when it is released.
func (e *colocEngine) integrate(s *cset) {
	now := e.k.Now()
	if now <= s.at {
		return
	}
	ms := float64(now - s.at)
	s.at = now
	g := float64(len(s.gpus)) * ms
	e.busyGPUms += g
	e.coreGPUms += g * s.core
	e.memGPUms += g * s.mem
	s.coreMs += ms * s.core
	s.memMs += ms * s.mem
	for _, id := range s.members {
		j := &e.jobs[id]
		j.coreMs += ms * s.core
		j.memMs += ms * s.mem
	}
}

// mark records that node n's power must be recomputed.
func (e *colocEngine) mark(n int) {
	if !e.isDirty[n] {
		e.isDirty[n] = true
		e.dirty = append(e.dirty, n)
	}
}

// touch records that set s changed: its view and its node's power.
func (e *colocEngine) touch(s *cset) {
	e.restale(s)
	e.mark(s.node)
}

// restale records that s's view must be rebuilt and that the scheduler
// must hear of the change.
func (e *colocEngine) restale(s *cset) {
	if !s.stale {
		s.stale = true
		e.changed = append(e.changed, s.id)
	}
}

// enqueue puts v in the queue at its place.
func (e *colocEngine) enqueue(v *policy.ColocView) {
	i, _ := slices.BinarySearchFunc(e.queue, v, policy.CmpWaiting)
	e.queue = slices.Insert(e.queue, i, v)
}

// dequeue takes v off the queue.
func (e *colocEngine) dequeue(v *policy.ColocView) {
	if i, ok := slices.BinarySearchFunc(e.queue, v, policy.CmpWaiting); ok {
		e.queue = slices.Delete(e.queue, i, i+1)
	}
}

// byID finds id in views (sorted by job ID).
func byID(views []*policy.ColocView, id int) (int, bool) {
	return slices.BinarySearchFunc(views, id, func(v *policy.ColocView, id int) int { return v.Job.ID - id })
}

// charge books node n's energy from the last time it was charged to now,
// at the power it drew since: active when busy, else sleeping (SleepIdle)
// or idle.
func (e *colocEngine) charge(n int, now job.Time) {
	from := e.nodeAt[n]
	if now <= from {
		return
	}
	comp := e.cAct
	switch {
	case e.nodeBusy[n]:
		e.actNodeMs += float64(now - from)
	case e.o.SleepIdle:
		comp = e.cSleep
	default:
		comp = e.cIdle
	}
	e.led.Accrue(comp, e.nodeW[n], from, now)
	e.nodeAt[n] = now
}

func (e *colocEngine) handle(ev colocEvent) (bool, error) {
	now := e.k.Now()
	switch ev.kind {
	case ckArrive:
		j := &e.jobs[ev.id]
		j.state = csWaiting
		i, _ := byID(e.views, ev.id)
		e.views = slices.Insert(e.views, i, &j.view)
		e.enqueue(&j.view)
		return true, nil
	case ckDone:
		j := &e.jobs[ev.id]
		j.view.Done, j.view.At = j.j.Steps, now
		s := e.sets[j.view.Set]
		if err := e.leave(j, s); err != nil {
			return false, err
		}
		j.state = csDone
		r := &e.res.Jobs[ev.id]
		r.End = now
		r.Missed = now > j.j.Deadline
		i, _ := byID(e.views, ev.id)
		e.views = slices.Delete(e.views, i, i+1)
		if err := e.k.End(ev.id); err != nil {
			return false, err
		}
		if p := e.o.Progress; p != nil {
			ended, total := len(e.jobs)-e.k.Open(), len(e.jobs)
			if ended*20/total != (ended-1)*20/total {
				p(ended, total)
			}
		}
		return true, nil
	case ckObs:
		return e.checkObs(e.sets[ev.id])
	}
	return false, fmt.Errorf("unknown co-location event %d", ev.kind)
}

// leave takes j off s (finish or undo) and updates the set.
func (e *colocEngine) leave(j *cjob, s *cset) error {
	now := e.k.Now()
	j.ran += now - j.runSince
	e.res.Jobs[j.j.ID].Run = j.ran
	e.integrate(s)
	k := slices.Index(s.members, j.j.ID)
	s.members = slices.Delete(s.members, k, k+1)
	if s.observing {
		s.marks = slices.Delete(s.marks, k, k+1)
	}
	j.view.Set, j.view.Rate = -1, 0
	j.version++
	e.touch(s)
	if len(s.members) == 0 {
		for _, g := range s.gpus {
			e.gpuSet[s.node][g] = -1
		}
		row := slices.Concat(e.free[s.node], s.gpus)
		slices.Sort(row)
		e.free[s.node] = row
		e.sets[s.id] = nil
		i, _ := slices.BinarySearchFunc(e.live, s.id, func(x *cset, id int) int { return x.id - id })
		e.live = slices.Delete(e.live, i, i+1)
		e.setViews = slices.Delete(e.setViews, i, i+1)
		sr := ColocSetResult{ID: s.id, Node: s.node, GPUs: len(s.gpus), Start: s.start, End: now, Jobs: s.jobs, MaxJobs: s.maxJobs,
			PeakCore: s.peakCore, PeakMem: s.peakMem}
		if d := float64(now - s.start); d > 0 {
			sr.MeanCore, sr.MeanMem = s.coreMs/d, s.memMs/d
		}
		e.res.Sets = append(e.res.Sets, sr)
		return nil
	}
	if err := e.rates(s); err != nil {
		return err
	}
	if s.observing {
		_, err := e.checkObs(s)
		return err
	}
	return nil
}

// rates sets every member's true rate and re-posts completions and the
// observation window's end.
func (e *colocEngine) rates(s *cset) error {
	now := e.k.Now()
	keys := make([]gavel.Key, len(s.members))
	for i, id := range s.members {
		keys[i] = e.jobs[id].j.Key
	}
	var f []float64
	var ok bool
	if e.o.TruthSet != nil {
		f, ok = e.o.TruthSet(keys)
	} else {
		f, ok = coloc.SetFactors(e.o.Truth, keys)
	}
	if !ok {
		return fmt.Errorf("%w: set %d holds a pair or set with no measured throughput: %v", ErrPolicy, s.id, keys)
	}
	e.touch(s)
	e.integrate(s)
	s.core, s.mem, s.memPeak, s.corePeak = 0, 0, 0, 0
	for i, id := range s.members {
		j := &e.jobs[id]
		if !(f[i] > 0) {
			return fmt.Errorf("%w: job %d cannot progress in set %d (%v: measured throughput 0)", ErrPolicy, id, s.id, keys)
		}
		e.sync(j)
		j.view.Rate = j.j.IsoRate * f[i]
		j.version++
		left := (j.j.Steps - j.view.Done) / j.view.Rate
		e.k.Post(now+job.Time(math.Ceil(left*1000)), colocEvent{kind: ckDone, id: id, version: j.version})
		s.core += j.j.CoreAvg
		s.mem += j.j.MemAvg
		s.memPeak += j.j.MemMax
		s.corePeak += j.j.CoreMax
		j.maxShare = max(j.maxShare, len(s.members))
	}
	s.core, s.mem = math.Min(s.core, 100), math.Min(s.mem, 100)
	s.memPeak, s.corePeak = math.Min(s.memPeak, 100), math.Min(s.corePeak, 100)
	s.peakCore, s.peakMem = math.Max(s.peakCore, s.corePeak), math.Max(s.peakMem, s.memPeak)
	s.maxJobs = max(s.maxJobs, len(s.members))
	for _, id := range s.members {
		j := &e.jobs[id]
		j.corePeak, j.memPeak = math.Max(j.corePeak, s.corePeak), math.Max(j.memPeak, s.memPeak)
	}
	e.res.PeakCoreUtil = math.Max(e.res.PeakCoreUtil, s.corePeak)
	e.res.PeakMemUtil = math.Max(e.res.PeakMemUtil, s.memPeak)
	if s.observing {
		e.postObs(s)
	}
	return nil
}

func (e *colocEngine) postObs(s *cset) {
	s.version++
	var worst float64
	for i, id := range s.members {
		j := &e.jobs[id]
		need := math.Min(s.marks[i]+j.j.EpochSteps, j.j.Steps) - j.view.DoneAt(e.k.Now())
		if need > 0 {
			worst = math.Max(worst, need/j.view.Rate)
		}
	}
	e.k.Post(e.k.Now()+job.Time(math.Ceil(worst*1000)), colocEvent{kind: ckObs, id: s.id, version: s.version})
}

// checkObs ends s's observation window when every member has done an
// epoch since it began.
func (e *colocEngine) checkObs(s *cset) (bool, error) {
	now := e.k.Now()
	for i, id := range s.members {
		j := &e.jobs[id]
		if j.view.DoneAt(now) < math.Min(s.marks[i]+j.j.EpochSteps, j.j.Steps)-1e-6*j.j.EpochSteps {
			e.postObs(s)
			return false, nil
		}
	}
	o := policy.ColocObservation{Set: s.id}
	dt := (now - s.obsStart).Seconds()
	for i, id := range s.members {
		j := &e.jobs[id]
		f := j.view.Rate / j.j.IsoRate
		if dt > 0 {
			f = (j.view.DoneAt(now) - s.marks[i]) / dt / j.j.IsoRate
		}
		if e.noise != nil {
			f *= math.Exp(e.o.ObsNoise * e.noise.NormFloat64())
		}
		o.Jobs, o.Keys, o.Factors = append(o.Jobs, id), append(o.Keys, j.j.Key), append(o.Factors, f)
	}
	s.observing, s.marks = false, nil
	e.restale(s)
	e.obs = append(e.obs, o)
	return true, nil
}

func (e *colocEngine) observe(s *cset) {
	s.observing, s.obsStart = true, e.k.Now()
	e.restale(s)
	s.marks = make([]float64, len(s.members))
	for i, id := range s.members {
		s.marks[i] = e.jobs[id].view.DoneAt(s.obsStart)
	}
	e.postObs(s)
}

// state is what the scheduler sees: the engine's own lists of active
// jobs, waiting jobs and live sets, kept from event to event, with the
// views of the sets changed since the last decision rebuilt (and listed
// in Changed), and the engine's free-GPU table (rows are replaced, never
// written).
func (e *colocEngine) state() *policy.ColocState {
	slices.Sort(e.changed)
	for _, id := range e.changed {
		s := e.sets[id]
		if s == nil {
			continue // released
		}
		s.view = s.build()
		s.stale = false
		i, _ := slices.BinarySearchFunc(e.live, s.id, func(x *cset, id int) int { return x.id - id })
		e.setViews[i] = s.view
	}
	return &policy.ColocState{Now: e.k.Now(), Nodes: e.o.Nodes, GPUsPerNode: e.o.GPUsPerNode, GPUMemGiB: e.o.GPUMemGiB,
		Observed: e.obs, Power: e.o.Power, FreeGPUs: e.free,
		Jobs: e.views, Sets: e.setViews, Queue: e.queue, Tracked: true, Changed: e.changed}
}

// build is s's view as it is now.
func (s *cset) build() *policy.ColocSet {
	return &policy.ColocSet{ID: s.id, Node: s.node, GPUs: slices.Clone(s.gpus), Jobs: slices.Clone(s.members),
		CoreUtil: s.core, MemUtil: s.mem, MemPeak: s.memPeak, Observing: s.observing}
}

func (e *colocEngine) decide() error {
	e.k.Decisions++
	d := e.s.ScheduleColoc(e.state())
	e.obs, e.changed = nil, e.changed[:0]
	for _, a := range d.Actions {
		if err := e.apply(a); err != nil {
			return err
		}
	}
	return nil
}

func (e *colocEngine) apply(a policy.ColocAction) error {
	if a.Job < 0 || a.Job >= len(e.jobs) {
		return fmt.Errorf("%w: unknown job %d", ErrPolicy, a.Job)
	}
	j := &e.jobs[a.Job]
	now := e.k.Now()
	switch a.Kind {
	case policy.ColocStart, policy.ColocJoin:
		if j.state != csWaiting {
			return fmt.Errorf("%w: job %d is not waiting", ErrPolicy, a.Job)
		}
		var s *cset
		if a.Kind == policy.ColocStart {
			if a.Node < 0 || a.Node >= e.o.Nodes || len(a.GPUs) != j.j.Key.Scale {
				return fmt.Errorf("%w: job %d needs %d GPUs of one node, got node %d GPUs %v", ErrPolicy, a.Job, j.j.Key.Scale, a.Node, a.GPUs)
			}
			for i, g := range a.GPUs {
				if g < 0 || g >= e.o.GPUsPerNode || e.gpuSet[a.Node][g] >= 0 || slices.Contains(a.GPUs[:i], g) {
					return fmt.Errorf("%w: job %d: GPU %d of node %d is not free", ErrPolicy, a.Job, g, a.Node)
				}
			}
			if j.j.MemGiB > e.o.GPUMemGiB {
				return fmt.Errorf("%w: job %d needs %.1f GiB per GPU, GPUs have %.1f", ErrPolicy, a.Job, j.j.MemGiB, e.o.GPUMemGiB)
			}
			s = &cset{id: len(e.sets), node: a.Node, gpus: slices.Clone(a.GPUs), start: now, at: now}
			e.sets = append(e.sets, s)
			e.live = append(e.live, s)
			e.setViews = append(e.setViews, nil) // built in state: rates marks s
			for _, g := range a.GPUs {
				e.gpuSet[a.Node][g] = s.id
			}
			e.free[a.Node] = slices.DeleteFunc(slices.Clone(e.free[a.Node]), func(g int) bool { return slices.Contains(a.GPUs, g) })
		} else {
			if a.Set < 0 || a.Set >= len(e.sets) || e.sets[a.Set] == nil {
				return fmt.Errorf("%w: job %d: set %d does not exist", ErrPolicy, a.Job, a.Set)
			}
			s = e.sets[a.Set]
			if len(s.gpus) != j.j.Key.Scale || len(s.members) >= e.o.MaxShare {
				return fmt.Errorf("%w: job %d (%d GPUs) cannot join set %d (%d GPUs, %d jobs, at most %d)", ErrPolicy, a.Job, j.j.Key.Scale, s.id, len(s.gpus), len(s.members), e.o.MaxShare)
			}
			mem := j.j.MemGiB
			for _, id := range s.members {
				mem += e.jobs[id].j.MemGiB
			}
			if mem > e.o.GPUMemGiB {
				return fmt.Errorf("%w: job %d joining set %d needs %.1f GiB per GPU, GPUs have %.1f", ErrPolicy, a.Job, s.id, mem, e.o.GPUMemGiB)
			}
			e.res.Joins++
		}
		e.integrate(s)
		s.members = append(s.members, a.Job)
		s.jobs++
		if s.observing {
			s.marks = append(s.marks, j.view.Done)
		}
		e.dequeue(&j.view)
		j.state, j.view.Set, j.runSince = csRunning, s.id, now
		if !j.started {
			j.started, j.start = true, now
			e.res.Jobs[a.Job].Start = now
		}
		if err := e.rates(s); err != nil {
			return err
		}
		if a.Observe {
			e.observe(s)
		}
	case policy.ColocUndo:
		if j.state != csRunning {
			return fmt.Errorf("%w: undo of job %d, which is not running", ErrPolicy, a.Job)
		}
		s := e.sets[j.view.Set]
		e.sync(j)
		ck := math.Floor(j.view.Done/j.j.EpochSteps) * j.j.EpochSteps
		e.res.LostSteps += j.view.Done - ck
		j.view.Done = ck
		if err := e.leave(j, s); err != nil {
			return err
		}
		j.state = csWaiting
		j.view.Undone++
		e.enqueue(&j.view)
		e.res.Jobs[a.Job].Undos++
		e.res.Undos++
	default:
		return fmt.Errorf("%w: unknown action %d", ErrPolicy, a.Kind)
	}
	return nil
}

func (e *colocEngine) finished() bool { return e.k.Open() == 0 }

// power recomputes the power (eq. 5) of the nodes marked since the last
// call, from the sets on them, after charging each up to now at the power
// it drew until now.
func (e *colocEngine) power() {
	p := e.o.Power
	now := e.k.Now()
	gpuU := make([]float64, e.o.GPUsPerNode)
	ids := make([]int, 0, e.o.GPUsPerNode)
	for _, n := range e.dirty {
		e.isDirty[n] = false
		e.charge(n, now)
		busy := false
		ids = ids[:0]
		for g, sid := range e.gpuSet[n] {
			gpuU[g] = 0
			if sid < 0 {
				continue
			}
			busy = true
			gpuU[g] = e.sets[sid].core
			if !slices.Contains(ids, sid) {
				ids = append(ids, sid)
			}
		}
		if !busy {
			e.nodeBusy[n] = false
			if e.o.SleepIdle {
				e.nodeW[n] = p.Sleep
			} else {
				e.nodeW[n] = p.Node(0, gpuU)
			}
			continue
		}
		// The server's CPU term, summed over the node's sets by id.
		slices.Sort(ids)
		cpu := 0.0
		for _, sid := range ids {
			s := e.sets[sid]
			cpu += p.CPUPerJobPct * float64(len(s.members)*len(s.gpus)) / float64(e.o.GPUsPerNode)
		}
		e.nodeBusy[n] = true
		e.nodeW[n] = p.Node(cpu, gpuU)
	}
	e.dirty = e.dirty[:0]
}

func (e *colocEngine) settled() error {
	e.power()
	if e.checkPower {
		if err := e.recheck(); err != nil {
			return err
		}
	}
	if e.o.Timeline {
		pt := ColocPoint{At: e.k.Now()}
		for n := range e.nodeW {
			pt.Power += e.nodeW[n]
			if e.nodeBusy[n] {
				pt.ActiveNodes++
			}
		}
		for _, v := range e.views {
			if v.Set >= 0 {
				pt.Running++
			} else {
				pt.Waiting++
			}
		}
		for _, s := range e.live {
			if len(s.members) > 1 {
				pt.SharedSets++
			}
		}
		e.point(e.res, pt)
	}
	return nil
}

// recheck recomputes every node's power and state from scratch and
// reports a node whose kept value differs (a change power() was not told
// of), and a set whose view is kept (not marked to be rebuilt and listed
// as changed) but no longer says what the set is.
func (e *colocEngine) recheck() error {
	for _, s := range e.live {
		if !s.stale && !reflect.DeepEqual(s.view, s.build()) {
			return fmt.Errorf("sim: set %d at %d ms: kept view %+v, the set is %+v", s.id, e.k.Now(), *s.view, *s.build())
		}
	}
	w, busy := slices.Clone(e.nodeW), slices.Clone(e.nodeBusy)
	for n := range e.nodeW {
		e.mark(n)
	}
	e.power()
	for n := range w {
		if w[n] != e.nodeW[n] || busy[n] != e.nodeBusy[n] {
			return fmt.Errorf("sim: node %d at %d ms: kept %v W (busy %v), recomputed %v W (busy %v)", n, e.k.Now(), w[n], busy[n], e.nodeW[n], e.nodeBusy[n])
		}
	}
	return nil
}

func (e *colocEngine) finish() *ColocResult {
	r := e.res
	for n := range e.nodeW {
		e.charge(n, e.k.Now())
	}
	for i := range r.Jobs {
		jr := &r.Jobs[i]
		cj := &e.jobs[i]
		jr.MaxShare = cj.maxShare
		if cj.ran > 0 {
			jr.MeanCore, jr.MeanMem = cj.coreMs/float64(cj.ran), cj.memMs/float64(cj.ran)
		}
		jr.PeakCore, jr.PeakMem = cj.corePeak, cj.memPeak
	}
	r.totals(&e.colocNodes)
	if e.busyGPUms > 0 {
		r.MeanCoreUtil, r.MeanMemUtil = e.coreGPUms/e.busyGPUms, e.memGPUms/e.busyGPUms
	}
	r.Events, r.Decisions = e.k.Events, e.k.Decisions
	r.Hourly = e.led.Hourly()
	return r
}

// totals sets r's makespan, deadline misses and mean run, job total and
// wait times from its jobs, and its energy, the parts of it and the mean
// active nodes from the nodes' ledger. Both timing rules of the engine end
// with it.
func (r *ColocResult) totals(c *colocNodes) {
	var run, jtt, wait float64
	for i := range r.Jobs {
		jr := &r.Jobs[i]
		r.Makespan = max(r.Makespan, jr.End)
		if jr.Missed {
			r.DeadlineMisses++
		}
		if jr.Dropped {
			continue // no completion time: out of the averages (Gavel's get_average_jct)
		}
		run += jr.Run.Seconds()
		jtt += (jr.End - jr.Submit).Seconds()
		wait += (jr.End - jr.Submit - jr.Run).Seconds()
	}
	if n := float64(len(r.Jobs) - r.Dropped); n > 0 {
		r.AvgRunSec, r.AvgJTTSec, r.AvgWaitSec = run/n, jtt/n, wait/n
	}
	r.Energy = c.led.Total()
	r.ActiveEnergy, r.IdleEnergy, r.SleepEnergy = c.led.Energy(c.cAct), c.led.Energy(c.cIdle), c.led.Energy(c.cSleep)
	if r.Makespan > 0 {
		r.AvgActiveNodes = c.actNodeMs / float64(r.Makespan)
	}
}
