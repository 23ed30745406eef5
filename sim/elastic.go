package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// ElasticTruth is how jobs really behave: the step time (s) and average
// power per GPU (W) of a job on n GPUs (packed) at frequency index fi, and
// whether n is a configuration the job can run on.
type ElasticTruth interface {
	Truth(j *policy.ElasticJob, n, fi int) (iterSec, gpuW float64)
	CanRun(j *policy.ElasticJob, n int) bool
}

// ElasticOptions configure an elastic DL-training replay (PowerFlow
// Section 6.1).
type ElasticOptions struct {
	Nodes, GPUsPerNode int
	FreqsMHz           []int
	// IdleGPU is a powered idle GPU's draw; powered-off nodes draw nothing.
	IdleGPU hw.Watts
	// PowerLimit is checked against the predicted power after every
	// decision.
	PowerLimit power.Limit
	// Restart is the checkpoint/restart pause of a job that resumes or
	// changes placement (its GPUs are held at idle power meanwhile).
	Restart job.Time
	// PreRun is the pre-run profiling on one offline GPU every job gets on
	// submission (0: none), cycling ProfileFreqs; Profile is a profiling
	// window's length on the job's own placement.
	PreRun, Profile job.Time
	ProfileFreqs    []int
	// NoiseSigma is the relative measurement noise of profiling.
	NoiseSigma float64
	// PowerOn is charged for each node power-on. NodesStartOff starts the
	// cluster powered down (for schedulers that power nodes as needed).
	PowerOn       hw.Joules
	NodesStartOff bool
	Seed          uint64
	// Timeline records cluster power and allocation after every event.
	Timeline bool
	// Domains are power domains over the nodes (nil: none): after every
	// decision each domain's charged power (policy.ElasticDomainCharge for
	// each allocated GPU, with DomainGPUW the most a GPU draws at each
	// frequency index, and the
	// idle GPUs of its powered nodes) must be within its limit, as
	// PowerLimit bounds the cluster's predicted power; a decision that
	// passes one is a policy error (policy.ElasticDomainGuard keeps any
	// scheduler's decisions within them). DomainsAbove is the threshold of
	// ElasticResult.Domains' time above (a fraction of a limit).
	Domains      *power.Domains
	DomainGPUW   []hw.Watts
	DomainsAbove float64
}

// ElasticJobResult is one job's outcome.
type ElasticJobResult struct {
	ID                     int
	Submit, Start, End     job.Time
	Energy, PreRun         hw.Joules
	Restarts, MaxGPUs      int
	ProfileWindows, Slices int
}

// ElasticPoint is the cluster after an event.
type ElasticPoint struct {
	At               job.Time
	GPUs, NodesOn    int
	Power, Predicted hw.Watts
}

// ElasticResult is an elastic replay's outcome. Energy is the exact
// integral of cluster power plus pre-run and power-on energy; it equals
// JobEnergy + IdleEnergy + PowerOnEnergy + PreRunEnergy (tested).
type ElasticResult struct {
	Jobs                        []ElasticJobResult
	Energy, JobEnergy           hw.Joules
	IdleEnergy                  hw.Joules
	PowerOnEnergy, PreRunEnergy hw.Joules
	AvgJCTSec                   float64
	Makespan                    job.Time
	MaxPredicted, MaxActual     hw.Watts
	// AboveLimit is the time the actual cluster power (jobs and idle GPUs
	// as drawn, not as predicted) was above the power limit (0 without a
	// limit); AboveLimitEnergy the energy drawn above it in that time.
	AboveLimit                  job.Time
	AboveLimitEnergy            hw.Joules
	Events, Decisions, PowerOns int
	// Restarts counts checkpoint/restarts: Rescales (new GPU count while
	// running), Migrations (same count, other nodes) and Resumes (after
	// waiting).
	Restarts, Rescales, Migrations, Resumes int
	Timeline                                []ElasticPoint
	// Hourly is the energy in each hour of simulated time (sim.Ledger).
	Hourly []hw.Joules
	// Domains is each power domain's charged power over the run (the
	// power the limits are enforced on, ElasticOptions.Domains) and
	// DomainsActual its actual power (the truth's); nil without domains.
	Domains, DomainsActual []power.DomainSummary
	// How the GPUs were used while jobs progressed (restart pauses
	// excluded): GPU-hours, their mean frequency, the share on jobs
	// holding 16 or more GPUs, and that share while some job waited; and
	// the mean time a job spent after its arrival holding no GPU (s).
	GPUHours, MeanMHz, LargeShare, LargeWhileWaiting, MeanWaitSec float64
}

type elasticEvent struct {
	kind    int // ekArrive, ekPreRun, ekDone, ekSlice, ekRestart, ekWake
	job     int
	version uint64
	at      job.Time // of a wake-up: a later wake-up supersedes it
}

const (
	ekArrive = iota
	ekPreRun
	ekDone
	ekSlice
	ekRestart
	ekWake
)

type elasticJob struct {
	view      policy.ElasticView
	running   bool
	restartTo job.Time // no progress before this time
	iterSec   float64  // at the current frequency
	gpuW      float64
	version   uint64
	slice     int // current profiling slice, -1 when not profiling
	sliceFi   int
	mhz       int // the frequency it runs at now
	obsCount  int
}

// MaxElasticIters bounds a job's iterations so that its completion time
// in milliseconds stays far inside int64 at any step time below 1,000 s.
const MaxElasticIters = 1e12

// RunElastic replays jobs (IDs 0..len-1) under scheduler s.
func RunElastic(jobs []policy.ElasticJob, truth ElasticTruth, s policy.ElasticScheduler, o ElasticOptions) (*ElasticResult, error) {
	if o.Nodes < 1 || o.GPUsPerNode < 1 || len(o.FreqsMHz) == 0 {
		return nil, fmt.Errorf("sim: elastic replay needs nodes, GPUs per node and frequencies")
	}
	if (o.PreRun > 0 || o.Profile > 0) && len(o.ProfileFreqs) == 0 {
		return nil, fmt.Errorf("sim: profiling needs profiling frequencies")
	}
	for _, fi := range o.ProfileFreqs {
		if fi < 0 || fi >= len(o.FreqsMHz) {
			return nil, fmt.Errorf("sim: profiling frequency index %d out of range", fi)
		}
	}
	e := &elasticEngine{o: o, truth: truth, s: s, res: &ElasticResult{Jobs: make([]ElasticJobResult, len(jobs))},
		js: make([]*elasticJob, len(jobs)), isActive: make([]bool, len(jobs))}
	e.st = policy.ElasticState{Nodes: o.Nodes, GPUsPerNode: o.GPUsPerNode, NodeOn: make([]bool, o.Nodes),
		FreqsMHz: o.FreqsMHz, PowerLimit: o.PowerLimit, IdleGPU: o.IdleGPU}
	e.idle, e.jobs = e.ledger.Add("idle GPUs"), e.ledger.Add("jobs")
	e.powerOn, e.preRunC = e.ledger.Add("power-on"), e.ledger.Add("pre-run")
	if !o.NodesStartOff {
		for i := range e.st.NodeOn {
			e.st.NodeOn[i] = true
		}
		e.nodesOn = o.Nodes
	}
	for i := range jobs {
		j := &jobs[i]
		if j.ID != i {
			return nil, fmt.Errorf("sim: elastic job %d has ID %d; IDs must be 0..%d in order", i, j.ID, len(jobs)-1)
		}
		if !(j.Iters > 0 && j.Iters <= MaxElasticIters) || j.Submit < 0 || !truth.CanRun(j, 1) {
			return nil, fmt.Errorf("sim: elastic job %d: %v iterations (want (0, %g]), submit %d ms, or no 1-GPU profile", i, j.Iters, float64(MaxElasticIters), j.Submit)
		}
		e.js[i] = &elasticJob{view: policy.ElasticView{Job: j, Remaining: j.Iters, QueuedSince: j.Submit}, slice: -1}
		e.res.Jobs[i] = ElasticJobResult{ID: i, Submit: j.Submit, Start: -1, End: -1}
		e.k.Post(j.Submit, elasticEvent{kind: ekArrive, job: i})
	}
	e.k.Track(len(jobs))
	if o.Domains.Len() > 0 {
		if o.Domains.Nodes() != o.Nodes {
			return nil, fmt.Errorf("sim: power domains bound to %d nodes, the cluster has %d", o.Domains.Nodes(), o.Nodes)
		}
		e.dpredW, e.dactW = o.Domains.NewLoad(), o.Domains.NewLoad()
		e.dpred, e.dact = power.NewStats(e.dpredW), power.NewStats(e.dactW)
		e.nodeW, e.busy = make([]hw.Watts, o.Nodes), make([]int, o.Nodes)
		e.loadNodes(e.dpredW, e.busy)
		if err := e.settled(); err != nil {
			return nil, err
		}
	}
	if err := e.k.Run(e); err != nil {
		return nil, err
	}
	if n := e.k.Open(); n > 0 {
		why := "the scheduler left them waiting on an idle cluster"
		if o.Domains.Len() > 0 {
			why += "; with power domains, a job whose power on any node it could take passes that node's domain limit never starts"
		}
		return nil, fmt.Errorf("sim: %d of %d elastic jobs never finished (%s)", n, len(e.js), why)
	}
	if e.dpred != nil {
		e.dpred.Observe(e.k.Now().Seconds())
		e.dact.Observe(e.k.Now().Seconds())
		e.res.Domains, e.res.DomainsActual = e.dpred.Summary(o.DomainsAbove), e.dact.Summary(o.DomainsAbove)
	}
	var sum float64
	for _, r := range e.res.Jobs {
		sum += float64(r.End - r.Submit)
	}
	e.res.AvgJCTSec = sum / 1000 / float64(len(e.js))
	e.res.Makespan = e.k.Now()
	if u := e.use; u.gpuMs > 0 {
		e.res.GPUHours, e.res.MeanMHz = u.gpuMs/3.6e6, u.mhzGPUms/u.gpuMs
		e.res.LargeShare, e.res.LargeWhileWaiting = u.largeGPUms/u.gpuMs, u.largeWaitGPUms/u.gpuMs
	}
	e.res.MeanWaitSec = e.use.waitJobMs / 1000 / float64(len(e.js))
	e.res.Energy = e.ledger.Total()
	e.res.Hourly = e.ledger.Hourly()
	e.res.JobEnergy, e.res.IdleEnergy = e.ledger.Energy(e.jobs), e.ledger.Energy(e.idle)
	e.res.PowerOnEnergy, e.res.PreRunEnergy = e.ledger.Energy(e.powerOn), e.ledger.Energy(e.preRunC)
	e.res.Events, e.res.Decisions = e.k.Events, e.k.Decisions
	return e.res, nil
}

type elasticEngine struct {
	k         Kernel[elasticEvent]
	o         ElasticOptions
	truth     ElasticTruth
	s         policy.ElasticScheduler
	res       *ElasticResult
	use       struct{ gpuMs, mhzGPUms, largeGPUms, largeWaitGPUms, waitJobMs float64 } // for the result's usage figures
	js        []*elasticJob
	st        policy.ElasticState
	isActive  []bool
	predicted hw.Watts
	nodesOn   int
	active    []*elasticJob
	wakeAt    job.Time
	// The ledger's components.
	ledger                       Ledger
	idle, jobs, powerOn, preRunC int
	// Scratch reused across decisions: GPUs used per node, and each job's
	// allocation (index+1 into the decision's Allocs; 0 for none).
	used    []int
	allocOf []int
	// Power domains (nil without): each domain's predicted power (set at
	// every decision) and actual power (at every step), their records,
	// and per-node scratch (power, GPUs in use).
	dpredW, dactW *power.DomainLoad
	dpred, dact   *power.DomainStats
	nodeW         []hw.Watts
	busy          []int
}

// powers returns the cluster's actual power split into jobs and idle GPUs.
func (e *elasticEngine) powers() (jobW, idleW float64) {
	busy := 0
	for _, j := range e.active {
		if !j.running {
			continue
		}
		busy += j.view.GPUs
		jobW += e.jobPower(j)
	}
	return jobW, float64(e.nodesOn*e.o.GPUsPerNode-busy) * float64(e.o.IdleGPU)
}

func (e *elasticEngine) jobPower(j *elasticJob) float64 {
	if e.k.Now() < j.restartTo {
		return float64(j.view.GPUs) * float64(e.o.IdleGPU)
	}
	return float64(j.view.GPUs) * j.gpuW
}

func (e *elasticEngine) advance(from, to job.Time) {
	// Restart pauses end at their own events, so power is constant on [from, to).
	d := to - from
	dt := d.Seconds()
	jobW, idle := e.powers()
	e.ledger.Accrue(e.idle, hw.Watts(idle), from, to)
	if w := hw.Watts(jobW + idle); !e.o.PowerLimit.AllowsRecomputed(w) {
		e.res.AboveLimit += d
		e.res.AboveLimitEnergy += hw.Joules(float64(w-hw.Watts(e.o.PowerLimit)) * dt)
	}
	waiting := 0
	for _, j := range e.active {
		if !j.running {
			waiting++
		}
	}
	e.use.waitJobMs += float64(waiting) * float64(d)
	for _, j := range e.active {
		if !j.running {
			continue
		}
		if from >= j.restartTo {
			g := float64(j.view.GPUs) * float64(d)
			e.use.gpuMs += g
			e.use.mhzGPUms += g * float64(j.mhz)
			if j.view.GPUs >= 16 {
				e.use.largeGPUms += g
				if waiting > 0 {
					e.use.largeWaitGPUms += g
				}
			}
		}
		e.res.Jobs[j.view.Job.ID].Energy += e.ledger.Accrue(e.jobs, hw.Watts(e.jobPower(j)), from, to)
		j.view.AttainedGPUms += float64(j.view.GPUs) * float64(d)
		j.view.Ran += d
		if from >= j.restartTo {
			j.view.Remaining -= dt / j.iterSec
		}
	}
}

func (e *elasticEngine) observe(j *elasticJob, n, fi int) policy.Observation {
	t, w := e.truth.Truth(j.view.Job, n, fi)
	en := t * w * float64(n)
	if e.o.NoiseSigma > 0 {
		r := rand.New(rand.NewPCG(e.o.Seed^0x6f6273, uint64(j.view.Job.ID)<<32|uint64(n)<<16|uint64(j.obsCount)))
		t *= math.Max(0.5, 1+e.o.NoiseSigma*r.NormFloat64())
		en *= math.Max(0.5, 1+e.o.NoiseSigma*r.NormFloat64())
	}
	j.obsCount++
	return policy.Observation{GPUs: n, FreqIdx: fi, IterSec: t, IterJ: en}
}

// reschedule recomputes a running job's rate and completion event.
func (e *elasticEngine) reschedule(j *elasticJob) {
	j.version++
	if !j.running {
		return
	}
	fi := j.view.FreqIdx
	if j.slice >= 0 {
		fi = j.sliceFi
	}
	j.iterSec, j.gpuW = e.truth.Truth(j.view.Job, j.view.GPUs, fi)
	j.mhz = e.o.FreqsMHz[fi]
	start := max(e.k.Now(), j.restartTo)
	left := job.Time(math.Ceil(math.Max(0, j.view.Remaining) * j.iterSec * 1000))
	e.k.Post(start+left, elasticEvent{kind: ekDone, job: j.view.Job.ID, version: j.version})
	if j.restartTo > e.k.Now() {
		e.k.Post(j.restartTo, elasticEvent{kind: ekRestart, job: j.view.Job.ID, version: j.version})
	}
	if j.slice >= 0 {
		e.k.Post(start+e.slice(), elasticEvent{kind: ekSlice, job: j.view.Job.ID, version: j.version})
	}
}

// slice is one profiling frequency's share of a window.
func (e *elasticEngine) slice() job.Time {
	return max(1, e.o.Profile/job.Time(len(e.o.ProfileFreqs)))
}

// stale reports whether an event no longer applies (a completion, slice or
// restart of an older configuration, or a superseded wake-up).
func (e *elasticEngine) stale(ev elasticEvent) bool {
	switch ev.kind {
	case ekArrive, ekPreRun:
		return false
	case ekWake:
		return ev.at != e.wakeAt
	}
	j := e.js[ev.job]
	return ev.version != j.version || !j.running
}

func (e *elasticEngine) finished() bool { return e.k.Open() == 0 }

func (e *elasticEngine) handle(ev elasticEvent) (bool, error) {
	j := e.js[ev.job]
	switch ev.kind {
	case ekArrive:
		if e.o.PreRun > 0 {
			e.preRun(j)
			e.k.Post(e.k.Now()+e.o.PreRun, elasticEvent{kind: ekPreRun, job: ev.job})
			return false, nil
		}
		e.activate(j)
		return true, nil
	case ekPreRun:
		e.activate(j)
		return true, nil
	case ekWake:
		return true, nil
	case ekRestart:
		// progress resumes; power changes (held GPUs leave idle draw)
		return false, nil
	case ekSlice:
		j.view.Obs = append(j.view.Obs, e.observe(j, j.view.GPUs, j.sliceFi))
		e.res.Jobs[ev.job].Slices++
		j.slice++
		done := j.slice >= len(e.o.ProfileFreqs)
		if done {
			j.slice = -1
			j.view.Profiling = false
		} else {
			j.sliceFi = e.o.ProfileFreqs[j.slice]
		}
		e.reschedule(j)
		return done, nil
	}
	return true, e.finish(j)
}

func (e *elasticEngine) settled() error {
	jw, iw := e.powers()
	e.res.MaxActual = max(e.res.MaxActual, hw.Watts(jw+iw))
	e.record()
	if e.dact != nil {
		// Actual power per node: each running job's draw spread over its
		// nodes by GPUs, and the idle GPUs of powered nodes.
		clear(e.nodeW)
		busy := e.busy
		clear(busy)
		for _, j := range e.active {
			if !j.running {
				continue
			}
			w := e.jobPower(j) / float64(j.view.GPUs)
			for _, ns := range j.view.Nodes {
				e.nodeW[ns.Node] += hw.Watts(w * float64(ns.GPUs))
				busy[ns.Node] += ns.GPUs
			}
		}
		e.loadNodes(e.dactW, busy)
		now := e.k.Now().Seconds()
		e.dpred.Observe(now)
		e.dact.Observe(now)
	}
	return nil
}

// loadNodes sets l to e.nodeW plus the idle GPUs (GPUsPerNode - busy) of
// each powered node.
func (e *elasticEngine) loadNodes(l *power.DomainLoad, busy []int) {
	clear(l.W)
	for n, w := range e.nodeW {
		if e.st.NodeOn[n] {
			w += hw.Watts(e.o.GPUsPerNode-busy[n]) * e.o.IdleGPU
		}
		if w != 0 {
			l.Add(n, w)
		}
	}
}

func (e *elasticEngine) preRun(j *elasticJob) {
	per := e.o.PreRun.Seconds() / float64(len(e.o.ProfileFreqs))
	for _, fi := range e.o.ProfileFreqs {
		_, w := e.truth.Truth(j.view.Job, 1, fi)
		e.ledger.Charge(e.preRunC, hw.Joules(w*per), e.k.Now())
		e.res.Jobs[j.view.Job.ID].PreRun += hw.Joules(w * per)
		j.view.Obs = append(j.view.Obs, e.observe(j, 1, fi))
	}
}

func (e *elasticEngine) activate(j *elasticJob) {
	j.view.QueuedSince = e.k.Now()
	e.isActive[j.view.Job.ID] = true
	e.active = append(e.active, j)
}

func (e *elasticEngine) finish(j *elasticJob) error {
	j.running = false
	e.isActive[j.view.Job.ID] = false
	j.view.Remaining = 0
	e.res.Jobs[j.view.Job.ID].End = e.k.Now()
	e.active = slices.DeleteFunc(e.active, func(x *elasticJob) bool { return x == j })
	return e.k.End(j.view.Job.ID)
}

func (e *elasticEngine) record() {
	if !e.o.Timeline {
		return
	}
	jw, iw := e.powers()
	gpus := 0
	for _, j := range e.active {
		if j.running {
			gpus += j.view.GPUs
		}
	}
	p := ElasticPoint{At: e.k.Now(), GPUs: gpus, NodesOn: e.nodesOn, Power: hw.Watts(jw + iw), Predicted: e.predicted}
	if n := len(e.res.Timeline); n > 0 && e.res.Timeline[n-1].At == e.k.Now() {
		e.res.Timeline[n-1] = p
		return
	}
	e.res.Timeline = append(e.res.Timeline, p)
}

// decide asks the scheduler for the desired state. It does so with no
// active job too (after the last running job finishes, before the next
// arrival), so that a scheduler that powers down nodes without jobs can.
func (e *elasticEngine) decide() error {
	now := e.k.Now()
	e.st.Now = now
	e.st.Jobs = e.st.Jobs[:0]
	for _, j := range e.active {
		j.view.PowerW = 0
		if j.running && j.slice < 0 && now >= j.restartTo {
			j.view.PowerW = e.jobPower(j)
		}
		e.st.Jobs = append(e.st.Jobs, &j.view)
	}
	d := e.s.ScheduleElastic(&e.st)
	e.k.Decisions++
	gpn := e.o.GPUsPerNode
	on := d.NodeOn
	if on == nil {
		on = make([]bool, e.o.Nodes)
		for i := range on {
			on[i] = true
		}
	}
	if len(on) != e.o.Nodes {
		return fmt.Errorf("%w: NodeOn lists %d nodes, cluster has %d", ErrPolicy, len(on), e.o.Nodes)
	}
	if len(e.used) != e.o.Nodes {
		e.used = make([]int, e.o.Nodes)
	}
	if len(e.allocOf) != len(e.js) {
		e.allocOf = make([]int, len(e.js))
	}
	used, byJob := e.used, e.allocOf
	clear(used)
	// Reset the job index whatever the outcome.
	defer func() {
		for k := range d.Allocs {
			if a := d.Allocs[k].Job; a >= 0 && a < len(byJob) {
				byJob[a] = 0
			}
		}
	}()
	busy := 0
	var pred hw.Watts
	for k := range d.Allocs {
		a := &d.Allocs[k]
		if a.Job < 0 || a.Job >= len(e.js) || !e.isActive[a.Job] {
			return fmt.Errorf("%w: elastic job %d is not active", ErrPolicy, a.Job)
		}
		if byJob[a.Job] != 0 {
			return fmt.Errorf("%w: elastic job %d allocated twice", ErrPolicy, a.Job)
		}
		byJob[a.Job] = k + 1
		n := 0
		for i, ns := range a.Nodes {
			if ns.Node < 0 || ns.Node >= e.o.Nodes || !on[ns.Node] || ns.GPUs < 1 {
				return fmt.Errorf("%w: elastic job %d: %d GPUs on node %d (powered: %v)", ErrPolicy, a.Job, ns.GPUs, ns.Node, ns.Node >= 0 && ns.Node < e.o.Nodes && on[ns.Node])
			}
			for _, o := range a.Nodes[:i] {
				if o.Node == ns.Node {
					return fmt.Errorf("%w: elastic job %d lists node %d twice", ErrPolicy, a.Job, ns.Node)
				}
			}
			used[ns.Node] += ns.GPUs
			if used[ns.Node] > gpn {
				return fmt.Errorf("%w: node %d over-allocated (%d of %d GPUs)", ErrPolicy, ns.Node, used[ns.Node], gpn)
			}
			n += ns.GPUs
		}
		if n == 0 || len(a.Nodes) != (n+gpn-1)/gpn {
			return fmt.Errorf("%w: elastic job %d: %d GPUs on %d nodes is not packed", ErrPolicy, a.Job, n, len(a.Nodes))
		}
		if !e.truth.CanRun(e.js[a.Job].view.Job, n) {
			return fmt.Errorf("%w: elastic job %d cannot run on %d GPUs", ErrPolicy, a.Job, n)
		}
		if a.FreqIdx < 0 || a.FreqIdx >= len(e.o.FreqsMHz) {
			return fmt.Errorf("%w: elastic job %d: frequency index %d", ErrPolicy, a.Job, a.FreqIdx)
		}
		if a.Pred < 0 || math.IsNaN(float64(a.Pred)) {
			return fmt.Errorf("%w: elastic job %d: predicted power %v", ErrPolicy, a.Job, a.Pred)
		}
		pred += a.Pred
		busy += n
	}
	onCount := 0
	for _, b := range on {
		if b {
			onCount++
		}
	}
	pred += hw.Watts(onCount*gpn-busy) * e.o.IdleGPU
	if !e.o.PowerLimit.AllowsRecomputed(pred) {
		return fmt.Errorf("%w: predicted cluster power %.0f W above the %.0f W limit", ErrPolicy, pred, e.o.PowerLimit)
	}
	if e.dpredW != nil {
		if err := e.checkDomains(d.Allocs, on, used); err != nil {
			return err
		}
	}
	for _, j := range e.active {
		id := j.view.Job.ID
		if byJob[id] == 0 {
			if j.running {
				j.running = false
				j.view.Nodes, j.view.GPUs = nil, 0
				j.view.QueuedSince = now
				j.slice, j.view.Profiling = -1, false
				j.version++
			}
			continue
		}
		a := &d.Allocs[byJob[id]-1]
		changed := false
		place := j.view.Nodes
		if !j.running || !samePlace(a.Nodes, place) {
			place = slices.Clone(a.Nodes)
			slices.SortFunc(place, func(x, y policy.NodeShare) int { return x.Node - y.Node })
		}
		if !j.running || !slices.Equal(place, j.view.Nodes) {
			changed = true
			if j.view.Started {
				j.restartTo = now + e.o.Restart
				e.res.Restarts++
				e.res.Jobs[id].Restarts++
				switch {
				case !j.running:
					e.res.Resumes++
				case sum(place) != j.view.GPUs:
					e.res.Rescales++
				default:
					e.res.Migrations++
				}
			} else {
				j.restartTo = now
				j.view.Started = true
				e.res.Jobs[id].Start = now
			}
			if !j.running {
				j.view.LastStart = now
			}
			j.running = true
			j.view.PlacedAt = now
			j.view.Nodes = place
			j.view.GPUs = sum(place)
			j.slice, j.view.Profiling = -1, false
			e.res.Jobs[id].MaxGPUs = max(e.res.Jobs[id].MaxGPUs, j.view.GPUs)
		}
		if a.FreqIdx != j.view.FreqIdx {
			j.view.FreqIdx = a.FreqIdx
			changed = changed || j.slice < 0
		}
		if a.Profile && j.slice < 0 && e.o.Profile > 0 {
			j.slice, j.sliceFi, j.view.Profiling = 0, e.o.ProfileFreqs[0], true
			e.res.Jobs[id].ProfileWindows++
			changed = true
		}
		if changed {
			e.reschedule(j)
		}
	}
	for i, b := range on {
		if b && !e.st.NodeOn[i] {
			e.res.PowerOns++
			e.ledger.Charge(e.powerOn, e.o.PowerOn, e.k.Now())
		}
	}
	copy(e.st.NodeOn, on)
	e.nodesOn = onCount
	e.predicted = pred
	e.res.MaxPredicted = max(e.res.MaxPredicted, pred)
	if d.WakeAt > now && d.WakeAt != e.wakeAt {
		e.wakeAt = d.WakeAt
		e.k.Post(d.WakeAt, elasticEvent{kind: ekWake, at: d.WakeAt})
	}
	return nil
}

// checkDomains sets the domains' predicted load for a decision (allocs on
// powered nodes on, used GPUs per node) and fails when one passes its limit.
func (e *elasticEngine) checkDomains(allocs []policy.ElasticAlloc, on []bool, used []int) error {
	clear(e.nodeW)
	for k := range allocs {
		a := &allocs[k]
		w := policy.ElasticDomainCharge(&e.js[a.Job].view, a, e.o.DomainGPUW)
		for _, ns := range a.Nodes {
			e.nodeW[ns.Node] += w * hw.Watts(ns.GPUs)
		}
	}
	l := e.dpredW
	clear(l.W)
	for n, w := range e.nodeW {
		if on[n] {
			w += hw.Watts(e.o.GPUsPerNode-used[n]) * e.o.IdleGPU
		}
		if w != 0 {
			l.Add(n, w)
		}
	}
	for i, dom := range e.o.Domains.List {
		if !power.Limit(dom.Limit).AllowsRecomputed(l.W[i]) {
			return fmt.Errorf("%w: charged power of domain %q (%s) %.0f W above its %.0f W limit", ErrPolicy, dom.Name, dom.Level, l.W[i], dom.Limit)
		}
	}
	return nil
}

// samePlace reports whether placement a (any order, no node twice) equals
// sorted placement b.
func samePlace(a, b []policy.NodeShare) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		k, ok := slices.BinarySearchFunc(b, x.Node, func(y policy.NodeShare, n int) int { return y.Node - n })
		if !ok || b[k].GPUs != x.GPUs {
			return false
		}
	}
	return true
}

func sum(p []policy.NodeShare) int {
	n := 0
	for _, ns := range p {
		n += ns.GPUs
	}
	return n
}
