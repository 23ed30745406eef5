package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// Mode selects how tasks arrive and leave.
type Mode string

// Modes of the task engine.
const (
	// Replay: tasks arrive at their submit time, run their work and leave.
	Replay Mode = "replay"
	// Inflation: tasks arrive one per millisecond in the given order and
	// never leave; a task that fits nowhere fails (FGD/PWR Monte-Carlo).
	Inflation Mode = "inflation"
)

// Options configure a run of the task engine.
type Options struct {
	Mode  Mode
	Power power.Model
	// NodeMetric, if set, is tracked per node and summed over the cluster in
	// every sample (e.g. FGD fragmentation); it is recomputed only for
	// nodes that change.
	NodeMetric func(n *cluster.Node) float64
	// BusyGroup, if set, puts each node in one of BusyGroups groups (its
	// GPU model, say); every sample then carries the power of the busy
	// GPUs of each group (Sample.BusyGPUW).
	BusyGroup  func(n *cluster.Node) int
	BusyGroups int
	// PowerLimit bounds the cluster's estimated power after every start;
	// policies read it from their state.
	PowerLimit power.Limit
	// Domains are power domains over the cluster's nodes (by node index;
	// nil: none): each domain's estimated power is bounded by its limit
	// after every start and wake, as PowerLimit bounds the cluster's, and
	// recorded for Result.Domains. Policies read them from their state.
	Domains *power.Domains
	// DomainsAbove is the threshold of Result.Domains' time above, as a
	// fraction of each domain's limit.
	DomainsAbove float64
	// Meter, when set, gives the nodes' measured power to the policies'
	// power gate (policy.State.Meter): the gate counts max(measured,
	// estimated) per node, the engine still checks the estimate.
	Meter policy.Meter
	// MeterAt, when set, gives the meter at each decision from the
	// simulated time (readings that change over time, a recorded series);
	// it takes the place of Meter.
	MeterAt func(now job.Time) policy.Meter
	// CheckInvariants runs cluster.Check after every time step (slow; for tests).
	CheckInvariants bool
	// Seed seeds the run's one random source (policy.State.Rand).
	Seed uint64
	// PowerDown, when set (replay only), powers off nodes that stay empty
	// and wakes them when a queued task fits nowhere else.
	PowerDown *PowerDown
	// Horizon, when positive, is the latest time the run may reach (the
	// end of the price series that will charge it): the first event past
	// it fails the run at once, naming HorizonWhat, instead of a run that
	// books energy hour by hour to wherever its tasks lead and fails when
	// it is priced. It bounds the run's hourly ledger by the series.
	Horizon     job.Time
	HorizonWhat string
	// Speed, when set (replay), scales the work of a task with a reference
	// GPU by the speed of the GPU model it starts on (perf.Speed): work x
	// speed(reference)/speed(placed). Without it tasks run their Work.
	Speed *perf.Speed
}

// PowerDown is node power management in replay: a node with nothing
// allocated for IdleAfter powers off and then draws OffW; a task that fits
// on no powered node wakes a sleeping node it would fit on, the one the
// scheduler chooses (policy.Waker: the policy's own scorers over the
// sleeping nodes), which boots for Wake (drawing its idle power) before it
// takes tasks.
type PowerDown struct {
	IdleAfter job.Time
	Wake      job.Time
	OffW      hw.Watts
}

// offAware is a power model under power-down: a powered-off node draws
// offW, any other node what the model says (a booting node, empty, its
// idle power).
type offAware struct {
	power.Model
	offW hw.Watts
}

func (m offAware) NodePower(n *cluster.Node) power.Breakdown {
	if n.State == cluster.Off {
		return power.Breakdown{CPU: m.offW}
	}
	return m.Model.NodePower(n)
}

// Validate names the first bad field.
func (p *PowerDown) Validate() error {
	switch {
	case p.IdleAfter < 1000 || p.IdleAfter > 365*24*3600*1000:
		return fmt.Errorf("power_down.idle_after_s: %v s, want 1 s .. one year", p.IdleAfter.Seconds())
	case p.Wake < 0 || p.Wake > 24*3600*1000:
		return fmt.Errorf("power_down.wake_s: %v s, want 0 .. one day", p.Wake.Seconds())
	case !(p.OffW >= 0 && p.OffW <= 10000):
		return fmt.Errorf("power_down.off_w: %v W, want 0 .. 10000", p.OffW)
	}
	return nil
}

// Sample is the cluster state after one time step (one arrival in
// inflation mode).
type Sample struct {
	At              job.Time
	Arrived         int
	Failed          int
	ArrivedGPUMilli int64
	AllocGPUMilli   int64
	CPUW, GPUW      hw.Watts
	// Metric is the sum of Options.NodeMetric over nodes.
	Metric       float64
	IdleGPUMilli int64
	ActiveNodes  int
	// BusyGPUW is the power of the busy GPUs of each Options.BusyGroup
	// group (nil without groups).
	BusyGPUW []hw.Watts
}

// TaskResult is what happened to one task.
type TaskResult struct {
	ID     job.ID
	Name   string
	Submit job.Time
	Start  job.Time // -1 if never started
	End    job.Time // -1 if never ended
	Node   cluster.NodeID
	// Rejected is set when the policy rejected the task.
	Rejected bool
	Energy   hw.Joules // dynamic energy attributed to the task
	// Gang is the gang the task is a pod of ("": a job of its own).
	Gang string
}

// Result is the outcome of a run.
type Result struct {
	Samples []Sample
	Tasks   []TaskResult
	// Per-node energy, its split into CPU and GPU, and the idle energy
	// (what the nodes draw with nothing allocated).
	NodeEnergy []hw.Joules
	CPUEnergy  hw.Joules
	GPUEnergy  hw.Joules
	IdleEnergy hw.Joules
	End        job.Time
	Events     int
	Decisions  int
	// Hourly is the CPU and GPU energy in each hour of simulated time
	// (sim.Ledger).
	Hourly []hw.Joules
	// With PowerDown: node-seconds spent powered off, and the number of
	// power-offs and wake-ups.
	OffNodeSeconds   float64
	PowerOffs, Wakes int
	// Domains is each power domain's estimated power over the run (peak,
	// mean, time-weighted p50 and p99, time above Options.DomainsAbove of
	// its limit), in declared order; nil without domains.
	Domains []power.DomainSummary
	// GPUBusyEnergy is, per node, the energy of its busy GPUs (those with
	// any allocation): the node's GPU power less what its idle GPUs draw
	// (idle_w each), integrated over the run. It is the part of the GPU
	// energy that the power model's busy term prices, and what the
	// model's measured error applies to (docs/power-models.md).
	GPUBusyEnergy []hw.Joules
	// Gangs is one entry per gang job, by gang name (nil without gangs).
	Gangs []GangResult
}

// taskEvent is an arrival or a completion of task index task.
type taskEvent struct {
	arrival bool
	task    int
	// power makes it a power event for node: sleep (a check that the node
	// is still empty, valid while ver matches) or woken.
	power bool
	node  int
	ver   int
	woken bool
}

// Engine runs GPU-sharing tasks (pwr-fgd's setting) on a cluster. It is
// single-goroutine; run seeds in parallel with separate engines.
type Engine struct {
	k     Kernel[taskEvent]
	opt   Options
	c     *cluster.Cluster
	sched policy.Scheduler

	tasks []job.Task
	byID  map[job.ID]int
	res   Result

	queue   []*job.Task
	running []*job.Task

	// The ledger has two components per node: CPU (2i) and GPU (2i+1).
	ledger Ledger
	// busy has one component per node: the power of its busy GPUs
	// (Result.GPUBusyEnergy). It is not part of the energy total.
	busy      Ledger
	nodeBusy  []hw.Watts        // each node's busy-GPU power now
	group     []int             // each node's busy group (Options.BusyGroup)
	groupBusy []hw.Watts        // the busy-GPU power of each group now
	idleP     []power.Breakdown // power of each node with nothing allocated
	nodePow   []power.Breakdown
	nodeTasks [][]int // task indices on each node
	totP      power.Breakdown
	// dload is each domain's power now and dstats its record (nil
	// without domains).
	dload     *power.DomainLoad
	dstats    *power.DomainStats
	metric    []float64
	totMetric float64
	rng       *rand.Rand
	active    int        // nodes on
	emptyVer  []int      // bumped whenever a node gains or loses its last task
	offSince  []job.Time // when each node powered off
	waking    []bool
	// taskEvents counts pending arrivals and completions; handled counts
	// those handled, and wokeAt[i] the value of handled when task i last
	// woke a node (-1: never): a task wakes a node again only after
	// something else changed, so wakes cannot cycle.
	taskEvents int
	handled    int
	wokeAt     []int
	arrivedG   int64
	arrived    int
	failed     int
	// gangs holds the run's gang jobs (gang.go); gangStart is set while a
	// gang's pods start, to the longest duration among them.
	gangs     gangBook
	gangStart *job.Time
	byName    []int // node indices by node name (gang wakes), built on first use
}

// New prepares an engine over cluster c.
func New(c *cluster.Cluster, s policy.Scheduler, opt Options) (*Engine, error) {
	if opt.Mode != Replay && opt.Mode != Inflation {
		return nil, fmt.Errorf("sim: unknown mode %q (want %q or %q)", opt.Mode, Replay, Inflation)
	}
	if opt.Power == nil {
		opt.Power = power.PWR{}
	}
	if opt.PowerDown != nil {
		if opt.Mode != Replay {
			return nil, fmt.Errorf("sim: power_down needs replay mode")
		}
		if err := opt.PowerDown.Validate(); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
		// The policies' power gate sees what the engine charges: a
		// powered-off node at its standby draw.
		opt.Power = offAware{Model: opt.Power, offW: opt.PowerDown.OffW}
	}
	e := &Engine{opt: opt, c: c, sched: s, rng: rand.New(rand.NewPCG(opt.Seed, 0x73696d))}
	n := len(c.Nodes)
	if opt.Domains.Len() > 0 {
		if opt.Domains.Nodes() != n {
			return nil, fmt.Errorf("sim: power domains bound to %d nodes, the cluster has %d", opt.Domains.Nodes(), n)
		}
		e.dload = opt.Domains.NewLoad()
		e.dstats = power.NewStats(e.dload)
	}
	e.idleP = make([]power.Breakdown, n)
	e.nodePow = make([]power.Breakdown, n)
	e.nodeTasks = make([][]int, n)
	e.metric = make([]float64, n)
	e.emptyVer, e.offSince, e.waking = make([]int, n), make([]job.Time, n), make([]bool, n)
	e.nodeBusy = make([]hw.Watts, n)
	if opt.BusyGroup != nil {
		e.group, e.groupBusy = make([]int, n), make([]hw.Watts, opt.BusyGroups)
		for i, nd := range c.Nodes {
			g := opt.BusyGroup(nd)
			if g < 0 || g >= opt.BusyGroups {
				return nil, fmt.Errorf("sim: node %s: busy group %d, want 0 .. %d", nd.Name, g, opt.BusyGroups-1)
			}
			e.group[i] = g
		}
	}
	for i, nd := range c.Nodes {
		if nd.Used() {
			return nil, fmt.Errorf("sim: node %s already has tasks", nd.Name)
		}
		e.ledger.Add(nd.Name + "/cpu")
		e.ledger.Add(nd.Name + "/gpu")
		e.busy.Add(nd.Name + "/gpu-busy")
		e.idleP[i] = opt.Power.NodePower(nd)
		if nd.State == cluster.On {
			e.active++
		}
		e.refreshNode(nd)
	}
	return e, nil
}

// refreshNode re-reads a node's power and metric after a change.
func (e *Engine) refreshNode(n *cluster.Node) {
	i := int(n.ID)
	p := power.Breakdown{}
	if n.State == cluster.On || n.State == cluster.Booting || e.opt.PowerDown != nil {
		p = e.opt.Power.NodePower(n)
	}
	e.attribute(i)
	now := e.k.Now()
	e.ledger.Set(2*i, now, p.CPU)
	e.ledger.Set(2*i+1, now, p.GPU)
	b := busyGPUPower(n, p.GPU)
	e.busy.Set(i, now, b)
	if e.group != nil {
		e.groupBusy[e.group[i]] += b - e.nodeBusy[i]
	}
	e.nodeBusy[i] = b
	e.totP.CPU += p.CPU - e.nodePow[i].CPU
	e.totP.GPU += p.GPU - e.nodePow[i].GPU
	e.dload.Add(i, p.Total()-e.nodePow[i].Total())
	e.nodePow[i] = p
	if e.opt.NodeMetric != nil {
		v := e.opt.NodeMetric(n)
		e.totMetric += v - e.metric[i]
		e.metric[i] = v
	}
}

// busyGPUPower is the power of node n's busy GPUs (any allocation) when
// its GPUs draw gpuW in all: gpuW less idle_w for each idle GPU; 0 with
// no busy GPU (an idle, off or waking node).
func busyGPUPower(n *cluster.Node, gpuW hw.Watts) hw.Watts {
	if n.GPU == nil {
		return 0
	}
	idle := n.IdleGPUs()
	if idle == len(n.GPUFree) {
		return 0
	}
	return gpuW - hw.Watts(idle)*n.GPU.IdleW
}

// advanceNode integrates node i's power up to now.
func (e *Engine) advanceNode(i int) {
	e.ledger.Advance(2*i, e.k.Now())
	e.ledger.Advance(2*i+1, e.k.Now())
}

// attribute charges the dynamic power of node i since its last change to
// the tasks on it, by their share of the node's allocated GPU (GPU part) and
// CPU (CPU part). Skipped in inflation mode, where tasks never end.
func (e *Engine) attribute(i int) {
	if e.opt.Mode == Inflation || len(e.nodeTasks[i]) == 0 {
		return
	}
	dt := (e.k.Now() - e.ledger.At(2*i)).Seconds()
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
	e.wokeAt = make([]int, len(tasks))
	for i := range e.wokeAt {
		e.wokeAt[i] = -1
	}
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
		at := t.Submit
		if e.opt.Mode == Inflation {
			at = job.Time(i) // one arrival per ms, whatever the trace's times
		}
		e.res.Tasks[i] = TaskResult{ID: t.ID, Name: t.Name, Submit: at, Start: -1, End: -1, Node: -1, Gang: t.Gang}
		e.k.Post(at, taskEvent{arrival: true, task: i})
		e.taskEvents++
	}
	if e.opt.PowerDown != nil {
		for i, nd := range e.c.Nodes {
			if nd.State == cluster.On {
				e.k.Post(e.opt.PowerDown.IdleAfter, taskEvent{power: true, node: i, ver: e.emptyVer[i]})
			}
		}
	}
	if err := e.gangs.init(tasks, e.c, e.opt.Mode); err != nil {
		return nil, err
	}
	e.k.Track(len(tasks))
	if e.dstats != nil {
		e.dstats.Observe(0)
	}
	if err := e.k.Run(e); err != nil {
		return nil, err
	}
	now := e.k.Now()
	if e.dstats != nil {
		e.dstats.Observe(now.Seconds())
		e.res.Domains = e.dstats.Summary(e.opt.DomainsAbove)
	}
	for i := range e.c.Nodes {
		e.attribute(i)
		e.advanceNode(i)
		e.res.NodeEnergy = append(e.res.NodeEnergy, e.ledger.Energy(2*i)+e.ledger.Energy(2*i+1))
		e.res.CPUEnergy += e.ledger.Energy(2 * i)
		e.res.GPUEnergy += e.ledger.Energy(2*i + 1)
		e.busy.Advance(i, now)
		e.res.GPUBusyEnergy = append(e.res.GPUBusyEnergy, e.busy.Energy(i))
	}
	var dyn hw.Joules
	for _, t := range e.res.Tasks {
		dyn += t.Energy
	}
	e.res.IdleEnergy = e.res.CPUEnergy + e.res.GPUEnergy - dyn
	e.res.Gangs = e.gangs.results(e.res.Tasks, now)
	if e.opt.PowerDown != nil {
		for i, nd := range e.c.Nodes {
			if nd.State == cluster.Off {
				e.res.OffNodeSeconds += (now - e.offSince[i]).Seconds()
			}
		}
	}
	e.res.End = now
	e.res.Hourly = e.ledger.Hourly()
	e.res.Events, e.res.Decisions = e.k.Events, e.k.Decisions
	// A copy, not &e.res: a pointer into the engine would keep the whole
	// engine (cluster, queue, the placer's score cache) alive as long as
	// the result, which compare holds for every policy and seed.
	res := e.res
	return &res, nil
}

// stale drops a power-off check overtaken by a start or a later check, so
// that it neither moves the clock nor adds a sample.
func (e *Engine) stale(ev taskEvent) bool {
	return ev.power && !ev.woken && ev.ver != e.emptyVer[ev.node]
}

// finished ends a run with power management once no arrival or completion
// is pending and no node is booting: what is left are power-off checks,
// which would only stretch the run (without it the queue empties then).
func (e *Engine) finished() bool {
	if e.opt.PowerDown == nil || e.taskEvents > 0 {
		return false
	}
	for _, w := range e.waking {
		if w {
			return false
		}
	}
	return true
}

func (e *Engine) advance(_, _ job.Time) {} // nodes are integrated lazily, when they change

func (e *Engine) settled() error {
	if e.dstats != nil {
		e.dstats.Observe(e.k.Now().Seconds())
	}
	if e.opt.CheckInvariants {
		if err := e.c.Check(); err != nil {
			return fmt.Errorf("invariant: %w", err)
		}
	}
	e.res.Samples = append(e.res.Samples, Sample{
		At: e.k.Now(), Arrived: e.arrived, Failed: e.failed,
		ArrivedGPUMilli: e.arrivedG, AllocGPUMilli: e.c.AllocGPUMilli,
		CPUW: e.totP.CPU, GPUW: e.totP.GPU, Metric: e.totMetric,
		IdleGPUMilli: e.c.TotalGPUMilli - e.c.AllocGPUMilli, ActiveNodes: e.active,
		BusyGPUW: slices.Clone(e.groupBusy),
	})
	e.gangs.settle(e.c, e.k.Now(), e.opt.PowerDown == nil)
	return nil
}

func (e *Engine) handle(ev taskEvent) (bool, error) {
	if h := e.opt.Horizon; h > 0 && e.k.Now() > h {
		return false, e.pastHorizon(ev)
	}
	if ev.power {
		return e.powerEvent(ev)
	}
	e.taskEvents--
	e.handled++
	if ev.arrival {
		t := &e.tasks[ev.task]
		e.arrived++
		e.arrivedG += t.TotalGPUMilli()
		e.queue = append(e.queue, t)
		e.gangs.arrive(ev.task)
		return true, nil
	}
	return true, e.finish(ev.task)
}

// pastHorizon is the error of an event after Options.Horizon.
func (e *Engine) pastHorizon(ev taskEvent) error {
	what := fmt.Sprintf("node %s powers off or wakes", e.c.Nodes[ev.node].Name)
	if !ev.power {
		t := &e.tasks[ev.task]
		what = fmt.Sprintf("task %d (%s) ends", t.ID, t.Name)
		if ev.arrival {
			what = fmt.Sprintf("task %d (%s) arrives", t.ID, t.Name)
		}
	}
	return fmt.Errorf("%s at %.1f h, past %s at %.1f h after time 0 (%d tasks still queued): the run could not be priced",
		what, e.k.Now().Seconds()/3600, e.opt.HorizonWhat, e.opt.Horizon.Seconds()/3600, len(e.queue))
}

func (e *Engine) finish(ti int) error {
	t := &e.tasks[ti]
	p, ok := e.c.Placement(t.ID)
	if !ok {
		return fmt.Errorf("task %d finishing but not placed", t.ID)
	}
	n := e.c.Nodes[p.Node]
	e.attribute(int(n.ID))
	e.advanceNode(int(n.ID))
	if err := e.c.Release(t); err != nil {
		return err
	}
	e.nodeTasks[n.ID] = removeInt(e.nodeTasks[n.ID], ti)
	e.refreshNode(n)
	if e.opt.PowerDown != nil && !n.Used() {
		e.emptyVer[n.ID]++
		e.k.Post(e.k.Now()+e.opt.PowerDown.IdleAfter, taskEvent{power: true, node: int(n.ID), ver: e.emptyVer[n.ID]})
	}
	e.res.Tasks[ti].End = e.k.Now()
	for i, rt := range e.running {
		if rt == t {
			e.running = append(e.running[:i], e.running[i+1:]...)
			break
		}
	}
	return e.k.End(ti)
}

func removeInt(s []int, v int) []int {
	for i, x := range s {
		if x == v {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// decide calls the scheduler until a call neither starts nor rejects a
// task (Online starts one task per call, so that the next sees it placed).
func (e *Engine) decide() error {
	meter := e.opt.Meter
	if e.opt.MeterAt != nil {
		meter = e.opt.MeterAt(e.k.Now())
	}
	for {
		st := &policy.State{Now: e.k.Now(), Cluster: e.c, Queue: e.queue, Running: e.running,
			PowerLimit: e.opt.PowerLimit, Power: e.opt.Power, Domains: e.opt.Domains, Meter: meter, Inflation: e.opt.Mode == Inflation, Rand: e.rng}
		acts := e.sched.Schedule(st)
		e.k.Decisions++
		progressed := false
		for _, a := range acts {
			p, err := e.apply(a)
			if err != nil {
				return err
			}
			progressed = progressed || p
		}
		if !progressed || len(e.queue) == 0 {
			return e.wake()
		}
	}
}

// powerEvent powers a node off (if it stayed empty since the check was
// posted) or finishes its wake-up.
func (e *Engine) powerEvent(ev taskEvent) (bool, error) {
	n := e.c.Nodes[ev.node]
	now := e.k.Now()
	if ev.woken {
		e.attribute(ev.node)
		e.advanceNode(ev.node)
		if err := e.c.SetState(n.ID, cluster.On); err != nil {
			return false, err
		}
		e.waking[ev.node] = false
		e.active++
		e.refreshNode(n)
		e.emptyVer[ev.node]++
		e.k.Post(now+e.opt.PowerDown.IdleAfter, taskEvent{power: true, node: ev.node, ver: e.emptyVer[ev.node]})
		return true, nil
	}
	if ev.ver != e.emptyVer[ev.node] || n.State != cluster.On || n.Used() {
		return false, nil
	}
	e.advanceNode(ev.node)
	if err := e.c.SetState(n.ID, cluster.Off); err != nil {
		return false, err
	}
	e.active--
	e.offSince[ev.node] = now
	e.res.PowerOffs++
	e.refreshNode(n)
	return true, nil
}

// wake boots sleeping nodes for queued tasks that fit on no powered node:
// for each such task in queue order, unless a node already booting has
// room left for it (each booting node holds, in queue order, the tasks it
// covers), one sleeping node it would fit on whose idle power the power
// limit allows. The engine decides that a node must wake; which one is
// the scheduler's choice when it is a policy.Waker (Online: the node its
// Placer's scorers rank best among those sleeping nodes). A scheduler that
// does not choose gets the lowest-numbered one, a rule that depends on the
// order of the cluster's nodes.
func (e *Engine) wake() error {
	if e.opt.PowerDown == nil || len(e.queue) == 0 {
		return nil
	}
	// room is what each booting node has left for the tasks it covers.
	room := map[cluster.NodeID]*cluster.Node{}
	for _, n := range e.c.Nodes {
		if e.waking[n.ID] {
			room[n.ID] = onCopy(n)
		}
	}
	waker, _ := e.sched.(policy.Waker)
	var gangsSeen map[string]bool
	for _, t := range e.queue {
		ti := e.byID[t.ID]
		if t.Gang != "" {
			if gangsSeen == nil {
				gangsSeen = map[string]bool{}
			}
			if err := e.wakeForGang(t, room, waker, gangsSeen); err != nil {
				return err
			}
			continue
		}
		if e.wokeAt[ti] == e.handled {
			continue // its last wake changed nothing the scheduler needed
		}
		covered := false
		for _, n := range e.c.Nodes {
			if ok, _ := cluster.Fits(&t.Demand, n); ok {
				covered = true
				break
			}
			if r := room[n.ID]; r != nil && reserve(&t.Demand, r) {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		if err := e.wakeFor(t, ti, room, waker); err != nil {
			return err
		}
	}
	return nil
}

// wakeFor boots, for queued task t (index ti) that fits on no powered
// node and in no booting node's room, one sleeping node it would fit on
// whose boot the power limit allows, the one the scheduler chooses when
// it is a policy.Waker; the node's room then holds t.
func (e *Engine) wakeFor(t *job.Task, ti int, room map[cluster.NodeID]*cluster.Node, waker policy.Waker) error {
	var asleep []*cluster.Node
	for _, n := range e.c.Nodes {
		// Booting draws the node's idle power: it must fit under the
		// power limit and every domain's on the node's path, with the
		// node's standby draw no longer counted.
		up := e.idleP[n.ID].Total() - e.nodePow[n.ID].Total()
		boot := e.totP.Total() + up
		if _, ok := e.dload.Fits(int(n.ID), up); n.State == cluster.Off && fitsEmpty(&t.Demand, n) && e.opt.PowerLimit.Allows(boot) && ok {
			asleep = append(asleep, n)
		}
	}
	if len(asleep) == 0 {
		return nil
	}
	id := asleep[0].ID
	if waker != nil {
		st := &policy.State{Now: e.k.Now(), Cluster: e.c, Queue: e.queue, Running: e.running,
			PowerLimit: e.opt.PowerLimit, Power: e.opt.Power, Domains: e.opt.Domains, Rand: e.rng}
		var ok bool
		if id, ok = waker.Wake(st, t, asleep); !ok {
			return nil
		}
		if int(id) < 0 || int(id) >= len(e.c.Nodes) || !slices.Contains(asleep, e.c.Nodes[id]) {
			return fmt.Errorf("%w: wake node %d for task %d, not one of the %d sleeping nodes offered", ErrPolicy, id, t.ID, len(asleep))
		}
	}
	n := e.c.Nodes[id]
	e.advanceNode(int(n.ID))
	if err := e.c.SetState(n.ID, cluster.Booting); err != nil {
		return nil
	}
	e.waking[n.ID] = true
	e.wokeAt[ti] = e.handled
	e.res.Wakes++
	e.res.OffNodeSeconds += (e.k.Now() - e.offSince[n.ID]).Seconds()
	e.refreshNode(n)
	e.k.Post(e.k.Now()+e.opt.PowerDown.Wake, taskEvent{power: true, node: int(n.ID), woken: true})
	room[n.ID] = onCopy(n)
	reserve(&t.Demand, room[n.ID])
	return nil
}

// onCopy is an empty, powered copy of a node, to count what it could hold.
func onCopy(n *cluster.Node) *cluster.Node {
	c := n.IdleCopy()
	c.State = cluster.On
	return c
}

// reserve takes d out of the free resources of v (a copy) if it fits,
// the way the cluster would place it: a share on the first GPU with
// enough free, whole GPUs on idle ones.
func reserve(d *job.Demand, v *cluster.Node) bool {
	if ok, _ := cluster.Fits(d, v); !ok {
		return false
	}
	v.FreeCPUMilli -= d.CPUMilli
	v.FreeMemMiB -= d.MemMiB
	if d.MIG() {
		g, s, _ := cluster.FirstMIG(d, v)
		if err := v.MIG[g].Take(d.MIGProfile, s, -1); err != nil {
			panic(fmt.Sprintf("sim: a MIG instance FirstMIG offered was refused: %v", err))
		}
		v.GPUFree[g] -= d.GPUMilli
		return true
	}
	need := d.GPUCount
	for g, f := range v.GPUFree {
		switch {
		case need == 0:
			return true
		case d.Shared() && f >= d.GPUMilli:
			v.GPUFree[g] -= d.GPUMilli
			return true
		case !d.Shared() && f == job.MilliPerGPU:
			v.GPUFree[g] = 0
			need--
		}
	}
	return true
}

// fitsEmpty reports whether the demand fits on the node (in any power
// state) with what is free on it.
func fitsEmpty(d *job.Demand, n *cluster.Node) bool {
	ok, _ := cluster.FitsWhenOn(d, n)
	return ok
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
		if t.Gang != "" && e.gangStart == nil {
			return false, fmt.Errorf("%w: task %d (%s) is a pod of gang %s and was started alone", ErrPolicy, t.ID, t.Name, t.Gang)
		}
		ti := e.byID[t.ID]
		if int(a.Node) < 0 || int(a.Node) >= len(e.c.Nodes) {
			return false, fmt.Errorf("%w: start task %d on node %d, which does not exist", ErrPolicy, t.ID, a.Node)
		}
		n := e.c.Nodes[a.Node]
		e.attribute(int(a.Node))
		e.advanceNode(int(a.Node))
		if err := e.allocate(t, a); err != nil {
			return false, fmt.Errorf("%w: %v", ErrPolicy, err)
		}
		e.queue = append(e.queue[:qi], e.queue[qi+1:]...)
		if len(e.nodeTasks[a.Node]) == 0 {
			e.emptyVer[a.Node]++ // cancels the pending sleep check
		}
		e.nodeTasks[a.Node] = append(e.nodeTasks[a.Node], ti)
		e.refreshNode(n)
		if !e.opt.PowerLimit.AllowsRecomputed(e.totP.Total()) {
			return false, fmt.Errorf("%w: task %d on node %s takes the estimated cluster power to %.0f W, over the %.0f W limit",
				ErrPolicy, t.ID, n.Name, e.totP.Total(), e.opt.PowerLimit)
		}
		if d, ok := e.dload.Fits(int(a.Node), 0); !ok {
			dom := e.opt.Domains.List[d]
			return false, fmt.Errorf("%w: task %d on node %s takes the estimated power of domain %q to %.0f W, over its %.0f W limit",
				ErrPolicy, t.ID, n.Name, dom.Name, e.dload.W[d], dom.Limit)
		}
		e.running = append(e.running, t)
		r := &e.res.Tasks[ti]
		r.Start, r.Node = e.k.Now(), a.Node
		if e.opt.Mode == Replay {
			d, err := e.duration(t, n)
			if err != nil {
				return false, err
			}
			if e.gangStart != nil { // a pod of a gang: the gang posts its end (gang.go)
				*e.gangStart = max(*e.gangStart, d)
				return true, nil
			}
			e.k.Post(e.k.Now()+d, taskEvent{task: ti})
			e.taskEvents++
		}
		return true, nil
	case policy.StartGang:
		return e.startGang(a)
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
	}
	return false, fmt.Errorf("%w: unknown action %T", ErrPolicy, a)
}

// allocate places t as start a says: a MIG task in the instance at
// a.MIGStart of its one GPU (cluster.AllocateMIG), any other task on the
// listed GPUs.
func (e *Engine) allocate(t *job.Task, a policy.Start) error {
	if t.MIG() {
		if len(a.GPUs) != 1 {
			return fmt.Errorf("task %d (%s) asks for one MIG instance, start lists %d GPUs", t.ID, t.Name, len(a.GPUs))
		}
		return e.c.AllocateMIG(t, a.Node, a.GPUs[0], a.MIGStart)
	}
	return e.c.Allocate(t, a.Node, a.GPUs)
}

// duration is how long task t runs on node n (replay): Work seconds at
// rate 1, scaled by the speed of the GPU it starts on.
func (e *Engine) duration(t *job.Task, n *cluster.Node) (job.Time, error) {
	work := t.Work
	if e.opt.Speed != nil {
		var err error
		if work, err = e.opt.Speed.Work(t, n); err != nil {
			return 0, err
		}
	}
	if !(work*1000 < float64(math.MaxInt64/2)) {
		return 0, fmt.Errorf("task %d (%s) on node %s: %g s of work is past the engine's clock", t.ID, t.Name, n.Name, work)
	}
	return job.Time(math.Ceil(max(work, 0) * 1000)), nil
}
