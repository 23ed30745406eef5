package sim

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// HPCOptions configure an HPC replay (VAHRM paper Section V-A): rigid jobs
// on exclusive nodes with per-device power, under a system power constraint.
type HPCOptions struct {
	// Truth gives each node's actual power per job type.
	Truth *power.HPCNodes
	// PowerCapW is the system power constraint; predicted power at a start
	// may not exceed it. Zero means none.
	PowerCapW float64
	// ProfileOverhead lengthens the run time of a profiled first-run job
	// (0.05 = 5%, the paper's assumption).
	ProfileOverhead float64
	Seed            uint64
}

// HPCJobResult is one job's outcome.
type HPCJobResult struct {
	ID       int
	SubmitMs int64
	StartMs  int64
	EndMs    int64
	Nodes    int
	EnergyJ  float64 // actual energy of its nodes while it ran
	PredW    float64 // predicted power of its nodes at start
	ActualW  float64 // actual power of its nodes
	Profiled bool
	Ends     int
}

// HPCResult is an HPC replay's outcome.
type HPCResult struct {
	Jobs []HPCJobResult
	// EnergyJ is the system's energy from time 0 to the last completion,
	// idle nodes included.
	EnergyJ    float64
	MakespanMs int64
	// MaxPredictedAtStartW is the largest predicted system power right after
	// a start (never above the cap: the engine refuses such starts).
	MaxPredictedAtStartW float64
	// MaxActualW is the largest actual system power; ExcessMs the time the
	// actual power spent above the cap (prediction error), MaxExcessW by how much.
	MaxActualW float64
	ExcessMs   int64
	MaxExcessW float64
	Events     int
	Decisions  int
}

type hpcEvent struct {
	at   int64
	seq  uint64
	kind int // 0 completion, 1 arrival; all events at one time are handled before scheduling
	job  int
}

type hpcQueue = queue[hpcEvent]

func (e hpcEvent) order() (int64, uint64) { return e.at, e.seq }

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
	idle := o.Truth.IdleW()
	res := &HPCResult{Jobs: make([]HPCJobResult, len(jobs))}
	byID := make([]*policy.HPCJob, len(jobs))
	var q hpcQueue
	var seq uint64
	push := func(e hpcEvent) { e.seq = seq; seq++; heap.Push(&q, e) }
	for i := range jobs {
		j := &jobs[i]
		if j.ID < 0 || j.ID >= len(jobs) || byID[j.ID] != nil {
			return nil, fmt.Errorf("sim: HPC job IDs must be distinct 0..%d (job %d)", len(jobs)-1, j.ID)
		}
		if j.Nodes < 1 || j.Nodes > nodes || j.RunMs < 0 || j.Type < 0 || j.Type >= len(o.Truth.GPUJob) {
			return nil, fmt.Errorf("sim: HPC job %d: %d nodes (system has %d), run %d ms, type %d", j.ID, j.Nodes, nodes, j.RunMs, j.Type)
		}
		byID[j.ID] = j
		res.Jobs[j.ID] = HPCJobResult{ID: j.ID, SubmitMs: j.SubmitMs, StartMs: -1, EndMs: -1, Nodes: j.Nodes}
		push(hpcEvent{at: j.SubmitMs, kind: 1, job: j.ID})
	}
	st := &policy.HPCState{Free: make([]bool, nodes), FreeCount: nodes, PowerCapW: o.PowerCapW,
		PredictedW: float64(nodes) * idle, IdleNodeW: idle, NodeTDPW: o.Truth.TDPW(),
		Rand: rand.New(rand.NewPCG(o.Seed, 0x687063))}
	for i := range st.Free {
		st.Free[i] = true
	}
	actual := float64(nodes) * idle
	res.MaxActualW = actual
	var now int64
	running := map[int]*policy.HPCRunning{}
	queued := make([]bool, len(jobs))
	advance := func(t int64) {
		dt := float64(t-now) / 1000
		res.EnergyJ += actual * dt
		if o.PowerCapW > 0 && actual > o.PowerCapW+1e-9 {
			res.ExcessMs += t - now
		}
		now = t
	}
	done := 0
	for q.Len() > 0 {
		t := q[0].at
		advance(t)
		for q.Len() > 0 && q[0].at == t {
			e := heap.Pop(&q).(hpcEvent)
			res.Events++
			j := byID[e.job]
			if e.kind == 1 {
				st.Queue = append(st.Queue, j)
				queued[j.ID] = true
				continue
			}
			r := running[j.ID]
			delete(running, j.ID)
			for _, n := range r.Nodes {
				st.Free[n] = true
			}
			st.FreeCount += len(r.Nodes)
			st.PredictedW -= r.PredW - float64(len(r.Nodes))*idle
			actual -= res.Jobs[j.ID].ActualW - float64(len(r.Nodes))*idle
			st.Running = slices.DeleteFunc(st.Running, func(x *policy.HPCRunning) bool { return x == r })
			res.Jobs[j.ID].EndMs = t
			res.Jobs[j.ID].Ends++
			done++
		}
		if len(st.Queue) == 0 || st.FreeCount == 0 {
			continue
		}
		st.NowMs = t
		starts := s.ScheduleHPC(st)
		res.Decisions++
		for _, a := range starts {
			if err := applyHPC(st, a, byID, queued, o, res, running, &actual, push, t); err != nil {
				return nil, fmt.Errorf("sim: t=%d ms: %w", t, err)
			}
		}
		if len(starts) > 0 {
			st.Queue = slices.DeleteFunc(st.Queue, func(j *policy.HPCJob) bool { return !queued[j.ID] })
		}
		res.MaxActualW = math.Max(res.MaxActualW, actual)
		if o.PowerCapW > 0 {
			res.MaxExcessW = math.Max(res.MaxExcessW, actual-o.PowerCapW)
		}
	}
	if done != len(jobs) {
		return nil, fmt.Errorf("sim: %d of %d HPC jobs never ran (scheduler left them queued with the system idle)", len(jobs)-done, len(jobs))
	}
	res.MakespanMs = now
	return res, nil
}

func applyHPC(st *policy.HPCState, a policy.HPCStart, byID []*policy.HPCJob, queued []bool, o HPCOptions,
	res *HPCResult, running map[int]*policy.HPCRunning, actual *float64, push func(hpcEvent), now int64) error {
	if a.Job < 0 || a.Job >= len(byID) || !queued[a.Job] {
		return fmt.Errorf("%w: HPC job %d is not queued", ErrPolicy, a.Job)
	}
	j := byID[a.Job]
	if len(a.Nodes) != j.Nodes {
		return fmt.Errorf("%w: HPC job %d asks for %d nodes, start lists %d", ErrPolicy, j.ID, j.Nodes, len(a.Nodes))
	}
	seen := map[int]bool{}
	for _, n := range a.Nodes {
		if n < 0 || n >= len(st.Free) || !st.Free[n] || seen[n] {
			return fmt.Errorf("%w: HPC job %d: node %d is not free (or listed twice)", ErrPolicy, j.ID, n)
		}
		seen[n] = true
	}
	idle := st.IdleNodeW
	pred := st.PredictedW + a.PredNodeW - float64(j.Nodes)*idle
	if a.PredNodeW < 0 || math.IsNaN(a.PredNodeW) {
		return fmt.Errorf("%w: HPC job %d: predicted power %v", ErrPolicy, j.ID, a.PredNodeW)
	}
	if st.PowerCapW > 0 && pred > st.PowerCapW*(1+1e-12) {
		return fmt.Errorf("%w: HPC job %d would push predicted system power to %.0f W, above the %.0f W cap", ErrPolicy, j.ID, pred, st.PowerCapW)
	}
	var act float64
	for _, n := range a.Nodes {
		st.Free[n] = false
		act += o.Truth.NodeW(n, j.Type)
	}
	st.FreeCount -= j.Nodes
	st.PredictedW = pred
	res.MaxPredictedAtStartW = math.Max(res.MaxPredictedAtStartW, pred)
	*actual += act - float64(j.Nodes)*idle
	run := j.RunMs
	if a.Profile {
		run = int64(math.Round(float64(run) * (1 + o.ProfileOverhead)))
	}
	r := &policy.HPCRunning{Job: j, StartMs: now, EndMs: now + run, Nodes: append([]int(nil), a.Nodes...), PredW: a.PredNodeW}
	running[j.ID] = r
	st.Running = append(st.Running, r)
	queued[j.ID] = false
	jr := &res.Jobs[j.ID]
	jr.StartMs, jr.PredW, jr.ActualW, jr.Profiled = now, a.PredNodeW, act, a.Profile
	jr.EnergyJ = act * float64(run) / 1000
	push(hpcEvent{at: now + run, kind: 0, job: j.ID})
	return nil
}
