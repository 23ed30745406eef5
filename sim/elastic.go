package sim

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/policy"
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
	// IdleW is a powered idle GPU's draw; powered-off nodes draw nothing.
	IdleW float64
	// PowerLimitW is checked against the predicted power after every
	// decision (0: none).
	PowerLimitW float64
	// RestartMs is the checkpoint/restart pause of a job that resumes or
	// changes placement (its GPUs are held at idle power meanwhile).
	RestartMs int64
	// PreRunMs is the pre-run profiling on one offline GPU every job gets
	// on submission (0: none), cycling ProfileFreqs; ProfileMs is a
	// profiling window's length on the job's own placement.
	PreRunMs, ProfileMs int64
	ProfileFreqs        []int
	// NoiseSigma is the relative measurement noise of profiling.
	NoiseSigma float64
	// PowerOnJ is charged for each node power-on. NodesStartOff starts the
	// cluster powered down (for schedulers that power nodes as needed).
	PowerOnJ      float64
	NodesStartOff bool
	Seed          uint64
	// Timeline records cluster power and allocation after every event.
	Timeline bool
}

// ElasticJobResult is one job's outcome.
type ElasticJobResult struct {
	ID                     int
	SubmitMs, StartMs      int64
	EndMs                  int64
	EnergyJ, PreRunJ       float64
	Restarts, MaxGPUs      int
	ProfileWindows, Slices int
}

// ElasticPoint is the cluster after an event.
type ElasticPoint struct {
	AtMs               int64
	GPUs, NodesOn      int
	PowerW, PredictedW float64
}

// ElasticResult is an elastic replay's outcome. EnergyJ is the exact
// integral of cluster power (plus pre-run and power-on energy); it equals
// JobJ + IdleJ + PowerOnJ + PreRunJ (tested).
type ElasticResult struct {
	Jobs                        []ElasticJobResult
	EnergyJ, JobJ, IdleJ        float64
	PowerOnJ, PreRunJ           float64
	AvgJCTSec, MakespanSec      float64
	MaxPredictedW, MaxActualW   float64
	Events, Decisions, PowerOns int
	// Restarts counts checkpoint/restarts: Rescales (new GPU count while
	// running), Migrations (same count, other nodes) and Resumes (after
	// waiting).
	Restarts, Rescales, Migrations, Resumes int
	Timeline                                []ElasticPoint
}

type elasticEvent struct {
	at      int64
	seq     uint64
	kind    int // ekArrive, ekPreRun, ekDone, ekSlice, ekRestart, ekWake
	job     int
	version uint64
}

const (
	ekArrive = iota
	ekPreRun
	ekDone
	ekSlice
	ekRestart
	ekWake
)

type elasticQueue = queue[elasticEvent]

func (e elasticEvent) order() (int64, uint64) { return e.at, e.seq }

type elasticJob struct {
	view      policy.ElasticView
	running   bool
	restartTo int64   // no progress before this time
	iterSec   float64 // at the current frequency
	gpuW      float64
	version   uint64
	slice     int // current profiling slice, -1 when not profiling
	sliceFi   int
	obsCount  int
}

// RunElastic replays jobs (IDs 0..len-1) under scheduler s.
func RunElastic(jobs []policy.ElasticJob, truth ElasticTruth, s policy.ElasticScheduler, o ElasticOptions) (*ElasticResult, error) {
	if o.Nodes < 1 || o.GPUsPerNode < 1 || len(o.FreqsMHz) == 0 {
		return nil, fmt.Errorf("sim: elastic replay needs nodes, GPUs per node and frequencies")
	}
	if (o.PreRunMs > 0 || o.ProfileMs > 0) && len(o.ProfileFreqs) == 0 {
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
		FreqsMHz: o.FreqsMHz, PowerLimitW: o.PowerLimitW, IdleW: o.IdleW}
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
		if j.Iters <= 0 || j.SubmitMs < 0 || !truth.CanRun(j, 1) {
			return nil, fmt.Errorf("sim: elastic job %d: %v iterations, submit %d ms, or no 1-GPU profile", i, j.Iters, j.SubmitMs)
		}
		e.js[i] = &elasticJob{view: policy.ElasticView{Job: j, Remaining: j.Iters, QueuedSinceMs: j.SubmitMs}, slice: -1}
		e.res.Jobs[i] = ElasticJobResult{ID: i, SubmitMs: j.SubmitMs, StartMs: -1, EndMs: -1}
		e.push(elasticEvent{at: j.SubmitMs, kind: ekArrive, job: i})
	}
	if err := e.loop(); err != nil {
		return nil, err
	}
	return e.res, nil
}

type elasticEngine struct {
	o         ElasticOptions
	truth     ElasticTruth
	s         policy.ElasticScheduler
	res       *ElasticResult
	js        []*elasticJob
	q         elasticQueue
	seq       uint64
	now       int64
	st        policy.ElasticState
	isActive  []bool
	predicted float64
	nodesOn   int
	active    []*elasticJob
	done      int
	wakeAt    int64
	// Scratch reused across decisions: GPUs used per node, and each job's
	// allocation (index+1 into the decision's Allocs; 0 for none).
	used    []int
	allocOf []int
}

func (e *elasticEngine) push(ev elasticEvent) {
	ev.seq = e.seq
	e.seq++
	heap.Push(&e.q, ev)
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
	return jobW, float64(e.nodesOn*e.o.GPUsPerNode-busy) * e.o.IdleW
}

func (e *elasticEngine) jobPower(j *elasticJob) float64 {
	if e.now < j.restartTo {
		return float64(j.view.GPUs) * e.o.IdleW
	}
	return float64(j.view.GPUs) * j.gpuW
}

func (e *elasticEngine) advance(t int64) {
	if t <= e.now {
		return
	}
	// Restart pauses end at their own events, so power is constant on (now, t].
	dt := float64(t-e.now) / 1000
	_, idle := e.powers()
	e.res.IdleJ += idle * dt
	e.res.EnergyJ += idle * dt
	for _, j := range e.active {
		if !j.running {
			continue
		}
		w := e.jobPower(j)
		e.res.Jobs[j.view.Job.ID].EnergyJ += w * dt
		e.res.JobJ += w * dt
		e.res.EnergyJ += w * dt
		j.view.AttainedGPUms += float64(j.view.GPUs) * float64(t-e.now)
		j.view.RanMs += t - e.now
		if e.now >= j.restartTo {
			j.view.Remaining -= dt / j.iterSec
		}
	}
	e.now = t
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
	start := max(e.now, j.restartTo)
	left := int64(math.Ceil(math.Max(0, j.view.Remaining) * j.iterSec * 1000))
	e.push(elasticEvent{at: start + left, kind: ekDone, job: j.view.Job.ID, version: j.version})
	if j.restartTo > e.now {
		e.push(elasticEvent{at: j.restartTo, kind: ekRestart, job: j.view.Job.ID, version: j.version})
	}
	if j.slice >= 0 {
		e.push(elasticEvent{at: start + e.sliceMs(), kind: ekSlice, job: j.view.Job.ID, version: j.version})
	}
}

func (e *elasticEngine) sliceMs() int64 {
	return max(1, e.o.ProfileMs/int64(len(e.o.ProfileFreqs)))
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

func (e *elasticEngine) loop() error {
	for {
		for e.q.Len() > 0 && e.stale(e.q[0]) {
			heap.Pop(&e.q)
		}
		if e.q.Len() == 0 || e.done == len(e.js) {
			break
		}
		t := e.q[0].at
		e.advance(t)
		sched := false
		for e.q.Len() > 0 && e.q[0].at == t {
			ev := heap.Pop(&e.q).(elasticEvent)
			j := e.js[ev.job]
			switch ev.kind {
			case ekArrive:
				e.res.Events++
				if e.o.PreRunMs > 0 {
					e.preRun(j)
					e.push(elasticEvent{at: t + e.o.PreRunMs, kind: ekPreRun, job: ev.job})
					continue
				}
				e.activate(j)
				sched = true
			case ekPreRun:
				e.res.Events++
				e.activate(j)
				sched = true
			case ekWake:
				if !e.stale(ev) {
					e.res.Events++
					sched = true
				}
			default:
				if e.stale(ev) {
					continue
				}
				e.res.Events++
				switch ev.kind {
				case ekRestart:
					// progress resumes; power changes (held GPUs leave idle draw)
				case ekSlice:
					j.view.Obs = append(j.view.Obs, e.observe(j, j.view.GPUs, j.sliceFi))
					e.res.Jobs[ev.job].Slices++
					j.slice++
					if j.slice >= len(e.o.ProfileFreqs) {
						j.slice = -1
						j.view.Profiling = false
						sched = true
					} else {
						j.sliceFi = e.o.ProfileFreqs[j.slice]
					}
					e.reschedule(j)
				case ekDone:
					e.finish(j)
					sched = true
				}
			}
		}
		if sched && len(e.active) > 0 {
			if err := e.decide(); err != nil {
				return fmt.Errorf("sim: t=%d ms: %w", t, err)
			}
		}
		jw, iw := e.powers()
		e.res.MaxActualW = math.Max(e.res.MaxActualW, jw+iw)
		e.record()
	}
	if e.done != len(e.js) {
		return fmt.Errorf("sim: %d of %d elastic jobs never finished (the scheduler left them waiting on an idle cluster)", len(e.js)-e.done, len(e.js))
	}
	var sum float64
	for _, r := range e.res.Jobs {
		sum += float64(r.EndMs - r.SubmitMs)
	}
	e.res.AvgJCTSec = sum / 1000 / float64(len(e.js))
	e.res.MakespanSec = float64(e.now) / 1000
	return nil
}

func (e *elasticEngine) preRun(j *elasticJob) {
	per := float64(e.o.PreRunMs) / 1000 / float64(len(e.o.ProfileFreqs))
	for _, fi := range e.o.ProfileFreqs {
		_, w := e.truth.Truth(j.view.Job, 1, fi)
		e.res.PreRunJ += w * per
		e.res.EnergyJ += w * per
		e.res.Jobs[j.view.Job.ID].PreRunJ += w * per
		j.view.Obs = append(j.view.Obs, e.observe(j, 1, fi))
	}
}

func (e *elasticEngine) activate(j *elasticJob) {
	j.view.QueuedSinceMs = e.now
	e.isActive[j.view.Job.ID] = true
	e.active = append(e.active, j)
}

func (e *elasticEngine) finish(j *elasticJob) {
	j.running = false
	e.isActive[j.view.Job.ID] = false
	j.view.Remaining = 0
	e.res.Jobs[j.view.Job.ID].EndMs = e.now
	e.active = slices.DeleteFunc(e.active, func(x *elasticJob) bool { return x == j })
	e.done++
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
	p := ElasticPoint{AtMs: e.now, GPUs: gpus, NodesOn: e.nodesOn, PowerW: jw + iw, PredictedW: e.predicted}
	if n := len(e.res.Timeline); n > 0 && e.res.Timeline[n-1].AtMs == e.now {
		e.res.Timeline[n-1] = p
		return
	}
	e.res.Timeline = append(e.res.Timeline, p)
}

func (e *elasticEngine) decide() error {
	e.st.NowMs = e.now
	e.st.Jobs = e.st.Jobs[:0]
	for _, j := range e.active {
		e.st.Jobs = append(e.st.Jobs, &j.view)
	}
	d := e.s.ScheduleElastic(&e.st)
	e.res.Decisions++
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
	var pred float64
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
		if a.PredW < 0 || math.IsNaN(a.PredW) {
			return fmt.Errorf("%w: elastic job %d: predicted power %v", ErrPolicy, a.Job, a.PredW)
		}
		pred += a.PredW
		busy += n
	}
	onCount := 0
	for _, b := range on {
		if b {
			onCount++
		}
	}
	pred += float64(onCount*gpn-busy) * e.o.IdleW
	if e.o.PowerLimitW > 0 && pred > e.o.PowerLimitW*(1+1e-9) {
		return fmt.Errorf("%w: predicted cluster power %.0f W above the %.0f W limit", ErrPolicy, pred, e.o.PowerLimitW)
	}
	for _, j := range e.active {
		id := j.view.Job.ID
		if byJob[id] == 0 {
			if j.running {
				j.running = false
				j.view.Nodes, j.view.GPUs = nil, 0
				j.view.QueuedSinceMs = e.now
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
				j.restartTo = e.now + e.o.RestartMs
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
				j.restartTo = e.now
				j.view.Started = true
				e.res.Jobs[id].StartMs = e.now
			}
			if !j.running {
				j.view.LastStartMs = e.now
			}
			j.running = true
			j.view.PlacedAtMs = e.now
			j.view.Nodes = place
			j.view.GPUs = sum(place)
			j.slice, j.view.Profiling = -1, false
			e.res.Jobs[id].MaxGPUs = max(e.res.Jobs[id].MaxGPUs, j.view.GPUs)
		}
		if a.FreqIdx != j.view.FreqIdx {
			j.view.FreqIdx = a.FreqIdx
			changed = changed || j.slice < 0
		}
		if a.Profile && j.slice < 0 && e.o.ProfileMs > 0 {
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
			e.res.PowerOnJ += e.o.PowerOnJ
			e.res.EnergyJ += e.o.PowerOnJ
		}
	}
	copy(e.st.NodeOn, on)
	e.nodesOn = onCount
	e.predicted = pred
	e.res.MaxPredictedW = math.Max(e.res.MaxPredictedW, pred)
	if d.WakeAtMs > e.now && d.WakeAtMs != e.wakeAt {
		e.wakeAt = d.WakeAtMs
		e.push(elasticEvent{at: d.WakeAtMs, kind: ekWake})
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
