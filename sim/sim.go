// Package sim is wattsched's discrete-event engine. Time is an integer
// (milliseconds); events are ordered by (time, insertion sequence); running
// tasks progress at a rate that may change mid-run, with completions
// re-posted under a version number; node power is piecewise constant and
// integrated exactly into energy per node and per task; every action a
// policy returns is validated and a violation stops the run with an error.
package sim

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// Time is simulated time in milliseconds.
type Time int64

// Mode selects how tasks arrive and leave.
type Mode string

// Modes. Slotted (decisions per price slot, CE-DLA) is reserved.
const (
	// Replay: tasks arrive at their submit time, run their work and leave.
	Replay Mode = "replay"
	// Inflation: tasks arrive one per millisecond in the given order and
	// never leave; a task that fits nowhere fails (FGD/PWR Monte-Carlo).
	Inflation Mode = "inflation"
)

// Options configure a run.
type Options struct {
	Mode  Mode
	Power power.Model
	// NodeMetric, if set, is tracked per node and summed over the cluster in
	// every sample (e.g. FGD fragmentation); it is recomputed only for
	// nodes that change.
	NodeMetric func(n *cluster.Node) float64
	// BootMs and ShutdownMs are power-transition durations (idle power is drawn meanwhile).
	BootMs, ShutdownMs int64
	// PowerBudget is passed to schedulers; zero means none.
	PowerBudget hw.Watts
	// CheckInvariants runs cluster.Check after every event (slow; for tests).
	CheckInvariants bool
	// Seed seeds the run's one random source (policy.State.Rand).
	Seed uint64
}

// Sample is the cluster state after one event (after each arrival in inflation mode).
type Sample struct {
	TimeMs          int64
	Arrived         int
	Failed          int
	ArrivedGPUMilli int64
	AllocGPUMilli   int64
	CPUW, GPUW      hw.Watts
	// Metric is the sum of Options.NodeMetric over nodes.
	Metric       float64
	IdleGPUMilli int64
	ActiveNodes  int
}

// TaskResult is what happened to one task.
type TaskResult struct {
	ID       job.ID
	Name     string
	SubmitMs int64
	StartMs  int64 // -1 if never started
	EndMs    int64 // -1 if never ended
	Node     cluster.NodeID
	Rejected bool
	Energy   hw.Joules // dynamic energy attributed to the task
	Ends     int       // how many times the task ended (must be 0 or 1)
}

// Result is the outcome of a run.
type Result struct {
	Samples []Sample
	Tasks   []TaskResult
	// Per-node energy split, and idle energy (power drawn at zero allocation
	// while on, plus transitions).
	NodeEnergy  []hw.Joules
	CPUEnergy   hw.Joules
	GPUEnergy   hw.Joules
	IdleEnergy  hw.Joules
	TransEnergy hw.Joules
	EndMs       int64
	Events      int
	Decisions   int
}

type eventKind int

const (
	evArrival eventKind = iota
	evCompletion
	evWake
	evPowerDone
)

type event struct {
	at      Time
	seq     uint64
	kind    eventKind
	task    int // index into tasks
	version uint64
	node    cluster.NodeID
	state   cluster.PowerState
}

type eventQueue = queue[event]

func (e event) order() (int64, uint64) { return int64(e.at), e.seq }

type runState struct {
	remaining float64
	rate      float64
	since     Time
	version   uint64
	running   bool
	started   bool
}

// Engine runs one simulation. It is single-goroutine; run seeds in parallel
// with separate engines.
type Engine struct {
	opt   Options
	c     *cluster.Cluster
	sched policy.Scheduler

	now   Time
	seq   uint64
	q     eventQueue
	tasks []job.Task
	byID  map[job.ID]int
	rs    []runState
	res   Result

	queue   []*job.Task
	running []*job.Task

	meters    []power.Meter
	idleP     []power.Breakdown // power of each node with nothing allocated, when on
	nodePow   []power.Breakdown
	nodeTasks [][]int // task indices on each node
	totP      power.Breakdown
	metric    []float64
	totMetric float64
	inTrans   []bool
	rng       *rand.Rand
	active    int // nodes on or booting
	wasActive []bool
	arrivedG  int64
	arrived   int
	failed    int
}

// New prepares an engine over cluster c.
func New(c *cluster.Cluster, s policy.Scheduler, opt Options) (*Engine, error) {
	if opt.Mode != Replay && opt.Mode != Inflation {
		return nil, fmt.Errorf("sim: unknown mode %q (want %q or %q)", opt.Mode, Replay, Inflation)
	}
	if opt.Power == nil {
		opt.Power = power.PWR{}
	}
	e := &Engine{opt: opt, c: c, sched: s, rng: rand.New(rand.NewPCG(opt.Seed, 0x73696d))}
	n := len(c.Nodes)
	e.meters = make([]power.Meter, n)
	e.idleP = make([]power.Breakdown, n)
	e.nodePow = make([]power.Breakdown, n)
	e.nodeTasks = make([][]int, n)
	e.metric = make([]float64, n)
	e.inTrans = make([]bool, n)
	e.wasActive = make([]bool, n)
	for i, nd := range c.Nodes {
		if nd.Used() {
			return nil, fmt.Errorf("sim: node %s already has tasks", nd.Name)
		}
		e.idleP[i] = opt.Power.NodePower(nd)
		e.refreshNode(nd)
	}
	return e, nil
}

func (e *Engine) push(ev event) {
	ev.seq = e.seq
	e.seq++
	heap.Push(&e.q, ev)
}

// refreshNode re-reads a node's power and metric after a change.
func (e *Engine) refreshNode(n *cluster.Node) {
	i := int(n.ID)
	p := power.Breakdown{}
	switch n.State {
	case cluster.On:
		p = e.opt.Power.NodePower(n)
	case cluster.Booting, cluster.ShuttingDown:
		p = e.idleP[i]
	}
	e.attribute(i)
	if e.inTrans[i] {
		dt := float64(int64(e.now)-e.meters[i].LastMs()) / 1000
		e.res.TransEnergy += hw.Joules(float64(e.nodePow[i].Total()) * dt)
	}
	e.inTrans[i] = n.State == cluster.Booting || n.State == cluster.ShuttingDown
	if act := n.State == cluster.On || n.State == cluster.Booting; act != e.wasActive[i] {
		e.wasActive[i] = act
		if act {
			e.active++
		} else {
			e.active--
		}
	}
	e.meters[i].Set(int64(e.now), p)
	e.totP.CPU += p.CPU - e.nodePow[i].CPU
	e.totP.GPU += p.GPU - e.nodePow[i].GPU
	e.nodePow[i] = p
	if e.opt.NodeMetric != nil {
		v := e.opt.NodeMetric(n)
		e.totMetric += v - e.metric[i]
		e.metric[i] = v
	}
}

// attribute charges the dynamic power of node i since its last change to
// the tasks on it, by their share of the node's allocated GPU (GPU part) and
// CPU (CPU part). Skipped in inflation mode, where tasks never end.
func (e *Engine) attribute(i int) {
	if e.opt.Mode == Inflation || len(e.nodeTasks[i]) == 0 {
		return
	}
	dt := float64(int64(e.now)-e.meters[i].LastMs()) / 1000
	if dt <= 0 {
		return
	}
	p := e.nodePow[i]
	dynCPU := float64(p.CPU - e.idleP[i].CPU)
	dynGPU := float64(p.GPU - e.idleP[i].GPU)
	var cpuSum, gpuSum float64
	for _, ti := range e.nodeTasks[i] {
		cpuSum += float64(e.tasks[ti].CPUMilli)
		gpuSum += float64(e.tasks[ti].TotalGPUMilli())
	}
	for _, ti := range e.nodeTasks[i] {
		t := &e.tasks[ti]
		var j float64
		if cpuSum > 0 {
			j += dynCPU * dt * float64(t.CPUMilli) / cpuSum
		}
		if gpuSum > 0 {
			j += dynGPU * dt * float64(t.TotalGPUMilli()) / gpuSum
		}
		e.res.Tasks[ti].Energy += hw.Joules(j)
	}
}

// Run simulates the tasks and returns the result. Tasks must have distinct IDs.
func (e *Engine) Run(tasks []job.Task) (*Result, error) {
	e.tasks = tasks
	e.byID = make(map[job.ID]int, len(tasks))
	e.rs = make([]runState, len(tasks))
	e.res.Tasks = make([]TaskResult, len(tasks))
	for i := range tasks {
		t := &tasks[i]
		if _, dup := e.byID[t.ID]; dup {
			return nil, fmt.Errorf("sim: task ID %d appears twice", t.ID)
		}
		if err := t.Demand.Validate(); err != nil {
			return nil, fmt.Errorf("sim: task %d (%s): %w", t.ID, t.Name, err)
		}
		e.byID[t.ID] = i
		e.res.Tasks[i] = TaskResult{ID: t.ID, Name: t.Name, SubmitMs: t.SubmitMs, StartMs: -1, EndMs: -1, Node: -1}
		at := Time(t.SubmitMs)
		if e.opt.Mode == Inflation {
			at = Time(i)
		}
		e.push(event{at: at, kind: evArrival, task: i})
	}
	for e.q.Len() > 0 {
		ev := heap.Pop(&e.q).(event)
		if ev.at < e.now {
			return nil, fmt.Errorf("sim: event at %d before now %d", ev.at, e.now)
		}
		e.now = ev.at
		e.res.Events++
		if err := e.handle(ev); err != nil {
			return nil, fmt.Errorf("sim: t=%d ms: %w", e.now, err)
		}
		if err := e.schedule(); err != nil {
			return nil, fmt.Errorf("sim: t=%d ms: %w", e.now, err)
		}
		if e.opt.CheckInvariants {
			if err := e.c.Check(); err != nil {
				return nil, fmt.Errorf("sim: t=%d ms: invariant: %w", e.now, err)
			}
		}
		if e.opt.Mode == Replay || ev.kind == evArrival {
			e.sample()
		}
	}
	for i := range e.meters {
		e.attribute(i)
		e.meters[i].Advance(int64(e.now))
		m := &e.meters[i]
		e.res.NodeEnergy = append(e.res.NodeEnergy, m.Energy())
		e.res.CPUEnergy += m.CPU
		e.res.GPUEnergy += m.GPU
	}
	var dyn hw.Joules
	for _, t := range e.res.Tasks {
		dyn += t.Energy
	}
	e.res.IdleEnergy = e.res.CPUEnergy + e.res.GPUEnergy - dyn - e.res.TransEnergy
	e.res.EndMs = int64(e.now)
	return &e.res, nil
}

func (e *Engine) sample() {
	e.res.Samples = append(e.res.Samples, Sample{
		TimeMs: int64(e.now), Arrived: e.arrived, Failed: e.failed,
		ArrivedGPUMilli: e.arrivedG, AllocGPUMilli: e.c.AllocGPUMilli,
		CPUW: e.totP.CPU, GPUW: e.totP.GPU, Metric: e.totMetric,
		IdleGPUMilli: e.c.TotalGPUMilli - e.c.AllocGPUMilli, ActiveNodes: e.active,
	})
}

func (e *Engine) handle(ev event) error {
	switch ev.kind {
	case evArrival:
		t := &e.tasks[ev.task]
		e.arrived++
		e.arrivedG += t.TotalGPUMilli()
		e.queue = append(e.queue, t)
	case evCompletion:
		rs := &e.rs[ev.task]
		if !rs.running || ev.version != rs.version {
			return nil // stale
		}
		return e.finish(ev.task)
	case evWake:
	case evPowerDone:
		if err := e.c.SetState(ev.node, ev.state); err != nil {
			return err
		}
		e.refreshNode(e.c.Nodes[ev.node])
	}
	return nil
}

func (e *Engine) finish(ti int) error {
	t := &e.tasks[ti]
	p, ok := e.c.Placement(t.ID)
	if !ok {
		return fmt.Errorf("task %d finishing but not placed", t.ID)
	}
	n := e.c.Nodes[p.Node]
	e.attribute(int(n.ID))
	e.meters[n.ID].Advance(int64(e.now))
	if err := e.c.Release(t); err != nil {
		return err
	}
	e.nodeTasks[n.ID] = removeInt(e.nodeTasks[n.ID], ti)
	e.refreshNode(n)
	e.rs[ti].running = false
	r := &e.res.Tasks[ti]
	r.EndMs = int64(e.now)
	r.Ends++
	for i, rt := range e.running {
		if rt == t {
			e.running = append(e.running[:i], e.running[i+1:]...)
			break
		}
	}
	return nil
}

func removeInt(s []int, v int) []int {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

func (e *Engine) postCompletion(ti int) {
	rs := &e.rs[ti]
	if e.opt.Mode == Inflation || rs.rate <= 0 {
		return
	}
	rs.version++
	ms := math.Ceil(max(rs.remaining, 0) / rs.rate * 1000)
	e.push(event{at: e.now + Time(ms), kind: evCompletion, task: ti, version: rs.version})
}

// ErrPolicy marks an action the engine refused.
var ErrPolicy = errors.New("invalid policy action")

func (e *Engine) schedule() error {
	for {
		st := &policy.State{NowMs: int64(e.now), Cluster: e.c, Queue: e.queue, Running: e.running,
			PowerBudget: e.opt.PowerBudget, Inflation: e.opt.Mode == Inflation, Rand: e.rng}
		acts := e.sched.Schedule(st)
		e.res.Decisions++
		progressed := false
		for _, a := range acts {
			p, err := e.apply(a)
			if err != nil {
				return err
			}
			progressed = progressed || p
		}
		if !progressed || len(e.queue) == 0 {
			return nil
		}
	}
}

func (e *Engine) queued(id job.ID) (int, error) {
	for i, t := range e.queue {
		if t.ID == id {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: task %d is not queued", ErrPolicy, id)
}

func (e *Engine) apply(a policy.Action) (progressed bool, err error) {
	switch a := a.(type) {
	case policy.Start:
		qi, err := e.queued(a.Task)
		if err != nil {
			return false, err
		}
		t := e.queue[qi]
		ti := e.byID[t.ID]
		if int(a.Node) < 0 || int(a.Node) >= len(e.c.Nodes) {
			return false, fmt.Errorf("%w: start task %d on node %d, which does not exist", ErrPolicy, t.ID, a.Node)
		}
		n := e.c.Nodes[a.Node]
		e.attribute(int(a.Node))
		e.meters[a.Node].Advance(int64(e.now))
		if err := e.c.Allocate(t, a.Node, a.GPUs); err != nil {
			return false, fmt.Errorf("%w: %v", ErrPolicy, err)
		}
		e.queue = append(e.queue[:qi], e.queue[qi+1:]...)
		e.nodeTasks[a.Node] = append(e.nodeTasks[a.Node], ti)
		e.refreshNode(n)
		e.running = append(e.running, t)
		rs := &e.rs[ti]
		if !rs.started {
			rs.remaining = t.Work
		}
		rs.rate, rs.since, rs.running, rs.started = 1, e.now, true, true
		r := &e.res.Tasks[ti]
		r.StartMs, r.Node = int64(e.now), a.Node
		e.postCompletion(ti)
		return true, nil
	case policy.Reject:
		qi, err := e.queued(a.Task)
		if err != nil {
			return false, err
		}
		ti := e.byID[a.Task]
		e.queue = append(e.queue[:qi], e.queue[qi+1:]...)
		e.res.Tasks[ti].Rejected = true
		e.failed++
		return true, nil
	case policy.SetRate:
		ti, ok := e.byID[a.Task]
		if !ok || !e.rs[ti].running {
			return false, fmt.Errorf("%w: set rate of task %d that is not running", ErrPolicy, a.Task)
		}
		if a.Rate < 0 || math.IsNaN(a.Rate) {
			return false, fmt.Errorf("%w: task %d: rate %v", ErrPolicy, a.Task, a.Rate)
		}
		rs := &e.rs[ti]
		rs.remaining -= rs.rate * float64(e.now-rs.since) / 1000
		rs.remaining = max(rs.remaining, 0)
		rs.rate, rs.since = a.Rate, e.now
		e.postCompletion(ti)
		return false, nil
	case policy.Preempt:
		ti, ok := e.byID[a.Task]
		if !ok || !e.rs[ti].running {
			return false, fmt.Errorf("%w: preempt task %d that is not running", ErrPolicy, a.Task)
		}
		rs := &e.rs[ti]
		rs.remaining = max(rs.remaining-rs.rate*float64(e.now-rs.since)/1000, 0)
		t := &e.tasks[ti]
		p, _ := e.c.Placement(t.ID)
		e.attribute(int(p.Node))
		e.meters[p.Node].Advance(int64(e.now))
		if err := e.c.Release(t); err != nil {
			return false, err
		}
		e.nodeTasks[p.Node] = removeInt(e.nodeTasks[p.Node], ti)
		e.refreshNode(e.c.Nodes[p.Node])
		rs.running = false
		rs.version++
		for i, rt := range e.running {
			if rt == t {
				e.running = append(e.running[:i], e.running[i+1:]...)
				break
			}
		}
		e.queue = append(e.queue, t)
		return true, nil
	case policy.PowerOn:
		return false, e.transition(a.Node, cluster.Off, cluster.Booting, cluster.On, e.opt.BootMs)
	case policy.PowerOff:
		return false, e.transition(a.Node, cluster.On, cluster.ShuttingDown, cluster.Off, e.opt.ShutdownMs)
	case policy.WakeAt:
		if a.AtMs < int64(e.now) {
			return false, fmt.Errorf("%w: wake at %d ms, before now", ErrPolicy, a.AtMs)
		}
		e.push(event{at: Time(a.AtMs), kind: evWake})
		return false, nil
	}
	return false, fmt.Errorf("%w: unknown action %T", ErrPolicy, a)
}

func (e *Engine) transition(id cluster.NodeID, from, via, to cluster.PowerState, ms int64) error {
	if int(id) < 0 || int(id) >= len(e.c.Nodes) {
		return fmt.Errorf("%w: node %d does not exist", ErrPolicy, id)
	}
	n := e.c.Nodes[id]
	if n.State != from {
		return fmt.Errorf("%w: node %s is %v, not %v", ErrPolicy, n.Name, n.State, from)
	}
	if err := e.c.SetState(id, via); err != nil {
		return fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	e.refreshNode(n)
	e.push(event{at: e.now + Time(ms), kind: evPowerDone, node: id, state: to})
	return nil
}
