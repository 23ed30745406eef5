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

// HPCOptions configure an HPC replay (VAHRM paper Section V-A): rigid jobs
// on exclusive nodes with per-device power, under a system power limit.
type HPCOptions struct {
	// Truth gives each node's actual power per job type.
	Truth *power.HPCNodes
	// PowerLimit bounds the predicted system power at every start.
	PowerLimit power.Limit
	// ProfileOverhead lengthens the run time of a profiled first-run job
	// (0.05 = 5%, the paper's assumption).
	ProfileOverhead float64
	Seed            uint64
	// Domains are power domains over the nodes (nil: none): every start
	// must keep each domain's predicted power (the nodes' idle power, and
	// each running job's prediction per node, HPCStart.NodePred) within
	// its limit, as PowerLimit bounds the system's. DomainsAbove is the
	// threshold of HPCResult.Domains' time above (a fraction of a limit).
	Domains      *power.Domains
	DomainsAbove float64
}

// HPCJobResult is one job's outcome.
type HPCJobResult struct {
	ID                 int
	Submit, Start, End job.Time
	Nodes              int
	Energy             hw.Joules // actual energy of its nodes while it ran
	Pred               hw.Watts  // predicted power of its nodes at start
	Actual             hw.Watts  // actual power of its nodes
	Profiled           bool
}

// HPCResult is an HPC replay's outcome.
type HPCResult struct {
	Jobs []HPCJobResult
	// Energy is the system's energy from time 0 to the last completion,
	// idle nodes included.
	Energy   hw.Joules
	Makespan job.Time
	// MaxPredictedAtStart is the largest predicted system power right
	// after a start (never above the limit: the engine refuses such starts).
	MaxPredictedAtStart hw.Watts
	// MaxActual is the largest actual system power; Excess the time the
	// actual power spent above the limit (prediction error can cause it),
	// MaxExcess by how much.
	MaxActual, MaxExcess hw.Watts
	Excess               job.Time
	Events, Decisions    int
	// Hourly is the energy in each hour of simulated time (sim.Ledger).
	Hourly []hw.Joules
	// Domains is each power domain's predicted power over the run (the
	// power the limits are enforced on) and DomainsActual its actual
	// power (HPCOptions.Truth); nil without domains.
	Domains, DomainsActual []power.DomainSummary
}

// hpcEvent is an arrival or a completion; all events at one time are
// handled before the scheduler is called.
type hpcEvent struct {
	arrival bool
	job     int
}

// hpcEngine is the HPC job model: which nodes are free, the predicted and
// actual system power, the running jobs.
type hpcEngine struct {
	k       Kernel[hpcEvent]
	o       HPCOptions
	s       policy.HPCScheduler
	res     *HPCResult
	byID    []*policy.HPCJob
	queued  []bool
	running map[int]*policy.HPCRunning
	st      policy.HPCState
	ledger  Ledger
	system  int      // the ledger's one component: actual system power
	actual  hw.Watts // actual system power now
	seen    []bool   // scratch: nodes listed by one start
	// Each domain's actual power and the records of the predicted
	// (st.DomainPred) and actual power (nil without domains).
	dact          *power.DomainLoad
	dpred, dstats *power.DomainStats
	// nodePred and nodeAct are each busy node's predicted and actual
	// power (idle nodes: 0, unused), to give back at the job's end.
	nodePred, nodeAct []hw.Watts
}

// RunHPC replays the jobs under scheduler s. Jobs must have distinct IDs
// 0..len-1 in any order.
func RunHPC(jobs []policy.HPCJob, s policy.HPCScheduler, o HPCOptions) (*HPCResult, error) {
	if o.Truth == nil {
		return nil, fmt.Errorf("sim: HPC replay needs a power truth table")
	}
	if err := o.Truth.Validate(); err != nil {
		return nil, err
	}
	nodes := o.Truth.Nodes()
	idle := o.Truth.Idle()
	e := &hpcEngine{o: o, s: s, res: &HPCResult{Jobs: make([]HPCJobResult, len(jobs))}, byID: make([]*policy.HPCJob, len(jobs)),
		queued: make([]bool, len(jobs)), running: map[int]*policy.HPCRunning{}, seen: make([]bool, nodes)}
	for i := range jobs {
		j := &jobs[i]
		if j.ID < 0 || j.ID >= len(jobs) || e.byID[j.ID] != nil {
			return nil, fmt.Errorf("sim: HPC job IDs must be distinct 0..%d (job %d)", len(jobs)-1, j.ID)
		}
		if j.Nodes < 1 || j.Nodes > nodes || j.Runtime < 0 || j.Type < 0 || j.Type >= len(o.Truth.GPUJob) {
			return nil, fmt.Errorf("sim: HPC job %d: %d nodes (system has %d), run %d ms, type %d", j.ID, j.Nodes, nodes, j.Runtime, j.Type)
		}
		e.byID[j.ID] = j
		e.res.Jobs[j.ID] = HPCJobResult{ID: j.ID, Submit: j.Submit, Start: -1, End: -1, Nodes: j.Nodes}
		e.k.Post(j.Submit, hpcEvent{arrival: true, job: j.ID})
	}
	e.k.Track(len(jobs))
	e.st = policy.HPCState{Free: make([]bool, nodes), FreeCount: nodes, PowerLimit: o.PowerLimit,
		Predicted: hw.Watts(nodes) * idle, IdleNode: idle, NodeTDP: o.Truth.TDP(),
		Rand: rand.New(rand.NewPCG(o.Seed, 0x687063))}
	for i := range e.st.Free {
		e.st.Free[i] = true
	}
	if o.Domains.Len() > 0 {
		if o.Domains.Nodes() != nodes {
			return nil, fmt.Errorf("sim: power domains bound to %d nodes, the system has %d", o.Domains.Nodes(), nodes)
		}
		e.st.DomainPred, e.dact = o.Domains.NewLoad(), o.Domains.NewLoad()
		for n := range nodes {
			e.st.DomainPred.Add(n, idle)
			e.dact.Add(n, idle)
		}
		e.dpred, e.dstats = power.NewStats(e.st.DomainPred), power.NewStats(e.dact)
		e.nodePred, e.nodeAct = make([]hw.Watts, nodes), make([]hw.Watts, nodes)
		for _, s := range []*power.DomainStats{e.dpred, e.dstats} {
			s.Observe(0)
		}
	}
	e.system = e.ledger.Add("system")
	e.actual = hw.Watts(nodes) * idle
	e.res.MaxActual = e.actual
	if err := e.k.Run(e); err != nil {
		return nil, err
	}
	if n := e.k.Open(); n > 0 {
		return nil, fmt.Errorf("sim: %d of %d HPC jobs never ran (scheduler left them queued with the system idle)", n, len(jobs))
	}
	if e.dpred != nil {
		e.dpred.Observe(e.k.Now().Seconds())
		e.dstats.Observe(e.k.Now().Seconds())
		e.res.Domains, e.res.DomainsActual = e.dpred.Summary(o.DomainsAbove), e.dstats.Summary(o.DomainsAbove)
	}
	e.res.Energy = e.ledger.Total()
	e.res.Hourly = e.ledger.Hourly()
	e.res.Makespan = e.k.Now()
	e.res.Events, e.res.Decisions = e.k.Events, e.k.Decisions
	return e.res, nil
}

func (e *hpcEngine) stale(hpcEvent) bool { return false }

func (e *hpcEngine) finished() bool { return e.k.Open() == 0 }

func (e *hpcEngine) settled() error {
	if e.dpred != nil {
		e.dpred.Observe(e.k.Now().Seconds())
		e.dstats.Observe(e.k.Now().Seconds())
	}
	return nil
}

func (e *hpcEngine) advance(from, to job.Time) {
	e.ledger.Accrue(e.system, e.actual, from, to)
	if e.o.PowerLimit > 0 && e.actual > hw.Watts(e.o.PowerLimit)+1e-9 {
		e.res.Excess += to - from
	}
}

func (e *hpcEngine) handle(ev hpcEvent) (bool, error) {
	j := e.byID[ev.job]
	if ev.arrival {
		e.st.Queue = append(e.st.Queue, j)
		e.queued[j.ID] = true
		return true, nil
	}
	r := e.running[j.ID]
	delete(e.running, j.ID)
	for _, n := range r.Nodes {
		e.st.Free[n] = true
		if e.dact != nil {
			e.st.DomainPred.Add(n, e.st.IdleNode-e.nodePred[n])
			e.dact.Add(n, e.st.IdleNode-e.nodeAct[n])
		}
	}
	e.st.FreeCount += len(r.Nodes)
	e.st.Predicted -= r.Pred - hw.Watts(len(r.Nodes))*e.st.IdleNode
	e.actual -= e.res.Jobs[j.ID].Actual - hw.Watts(len(r.Nodes))*e.st.IdleNode
	e.st.Running = slices.DeleteFunc(e.st.Running, func(x *policy.HPCRunning) bool { return x == r })
	e.res.Jobs[j.ID].End = e.k.Now()
	return true, e.k.End(j.ID)
}

func (e *hpcEngine) decide() error {
	if len(e.st.Queue) == 0 || e.st.FreeCount == 0 {
		return nil
	}
	e.st.Now = e.k.Now()
	starts := e.s.ScheduleHPC(&e.st)
	e.k.Decisions++
	for _, a := range starts {
		if err := e.start(a); err != nil {
			return err
		}
	}
	if len(starts) > 0 {
		e.st.Queue = slices.DeleteFunc(e.st.Queue, func(j *policy.HPCJob) bool { return !e.queued[j.ID] })
	}
	e.res.MaxActual = max(e.res.MaxActual, e.actual)
	if e.o.PowerLimit > 0 {
		e.res.MaxExcess = max(e.res.MaxExcess, e.actual-hw.Watts(e.o.PowerLimit))
	}
	return nil
}

// start validates and applies one start.
func (e *hpcEngine) start(a policy.HPCStart) error {
	if a.Job < 0 || a.Job >= len(e.byID) || !e.queued[a.Job] {
		return fmt.Errorf("%w: HPC job %d is not queued", ErrPolicy, a.Job)
	}
	j := e.byID[a.Job]
	if len(a.Nodes) != j.Nodes {
		return fmt.Errorf("%w: HPC job %d asks for %d nodes, start lists %d", ErrPolicy, j.ID, j.Nodes, len(a.Nodes))
	}
	st := &e.st
	defer func() {
		for _, n := range a.Nodes {
			if n >= 0 && n < len(e.seen) {
				e.seen[n] = false
			}
		}
	}()
	for _, n := range a.Nodes {
		if n < 0 || n >= len(st.Free) || !st.Free[n] || e.seen[n] {
			return fmt.Errorf("%w: HPC job %d: node %d is not free (or listed twice)", ErrPolicy, j.ID, n)
		}
		e.seen[n] = true
	}
	idle := st.IdleNode
	pred := st.Predicted + a.Pred - hw.Watts(j.Nodes)*idle
	if a.Pred < 0 || math.IsNaN(float64(a.Pred)) {
		return fmt.Errorf("%w: HPC job %d: predicted power %v", ErrPolicy, j.ID, a.Pred)
	}
	if !st.PowerLimit.AllowsRecomputed(pred) {
		return fmt.Errorf("%w: HPC job %d would push predicted system power to %.0f W, above the %.0f W limit", ErrPolicy, j.ID, pred, st.PowerLimit)
	}
	if e.dact != nil {
		if a.NodePred != nil && len(a.NodePred) != len(a.Nodes) {
			return fmt.Errorf("%w: HPC job %d: %d node predictions for %d nodes", ErrPolicy, j.ID, len(a.NodePred), len(a.Nodes))
		}
		nodeW := a.NodePred
		if nodeW == nil {
			nodeW = make([]hw.Watts, len(a.Nodes))
			for i := range nodeW {
				nodeW[i] = a.Pred / hw.Watts(len(a.Nodes))
			}
		}
		if d, ok := st.DomainPred.FitsAll(policy.HPCDomainChanges(a.Nodes, nodeW, idle)); !ok {
			dom := e.o.Domains.List[d]
			return fmt.Errorf("%w: HPC job %d would push the predicted power of domain %q above its %.0f W limit", ErrPolicy, j.ID, dom.Name, dom.Limit)
		}
		for i, n := range a.Nodes {
			e.nodePred[n], e.nodeAct[n] = nodeW[i], e.o.Truth.NodeW(n, j.Type)
			st.DomainPred.Add(n, nodeW[i]-idle)
			e.dact.Add(n, e.nodeAct[n]-idle)
		}
	}
	var act hw.Watts
	for _, n := range a.Nodes {
		st.Free[n] = false
		act += e.o.Truth.NodeW(n, j.Type)
	}
	st.FreeCount -= j.Nodes
	st.Predicted = pred
	e.res.MaxPredictedAtStart = max(e.res.MaxPredictedAtStart, pred)
	e.actual += act - hw.Watts(j.Nodes)*idle
	run := j.Runtime
	if a.Profile {
		run = job.Time(math.Round(float64(run) * (1 + e.o.ProfileOverhead)))
	}
	now := e.k.Now()
	r := &policy.HPCRunning{Job: j, Start: now, End: now + run, Nodes: append([]int(nil), a.Nodes...), Pred: a.Pred}
	e.running[j.ID] = r
	st.Running = append(st.Running, r)
	e.queued[j.ID] = false
	jr := &e.res.Jobs[j.ID]
	jr.Start, jr.Pred, jr.Actual, jr.Profiled = now, a.Pred, act, a.Profile
	jr.Energy = Energy(act, run)
	e.k.Post(now+run, hpcEvent{job: j.ID})
	return nil
}
