package policy

import (
	"math"
	"slices"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/trace/gavel"
)

// NoDeadline marks a job without an SLO (the EaCO paper's deadline of
// infinity).
const NoDeadline job.Time = math.MaxInt64

// ColocJob is a DL training job that may space-share its GPUs with other
// jobs (EaCO Section 4): Scale GPUs of one node, Steps training steps in
// epochs of EpochSteps, at IsoRate steps/s alone.
type ColocJob struct {
	ID     int
	Submit job.Time
	Key    gavel.Key
	Steps  float64
	// EpochSteps is one epoch; a job checkpoints at every epoch boundary.
	EpochSteps float64
	IsoRate    float64
	// Deadline is the latest completion time (NoDeadline: none); Priority
	// orders the queue (higher first, then submission).
	Deadline job.Time
	Priority int
	// Utilisation of each of its GPUs (percent): core and memory, mean and
	// peak; MemGiB is its peak memory per GPU.
	CoreAvg, CoreMax, MemAvg, MemMax float64
	MemGiB                           float64
}

// ColocView is an active job as a scheduler sees it.
type ColocView struct {
	Job *ColocJob
	// Done is the steps completed at At; while the job runs it progresses
	// at Rate from then on, so DoneAt gives the steps completed at a later
	// time (Remaining = Job.Steps - DoneAt(now)). The engine brings Done
	// up to date only when the rate changes: an event costs what it
	// touches, not every running job. Set is the GPU set it runs on (-1:
	// waiting).
	Done float64
	At   job.Time
	Set  int
	// Rate is its measured rate now (steps/s; 0 while waiting).
	Rate float64
	// Undone counts the times its co-location was undone.
	Undone int
}

// DoneAt is the steps v has completed at now (not before At): Done plus
// Rate over the time since At, at most Job.Steps.
func (v *ColocView) DoneAt(now job.Time) float64 {
	if v.Rate == 0 || now <= v.At {
		return v.Done
	}
	return math.Min(v.Job.Steps, v.Done+v.Rate*(now-v.At).Seconds())
}

// ColocSet is a set of GPUs of one node and the jobs sharing it.
type ColocSet struct {
	ID   int
	Node int
	GPUs []int
	// Jobs are the member job IDs in joining order.
	Jobs []int
	// CoreUtil and MemPeak are each GPU's observed mean core utilisation
	// and peak memory utilisation (%), the same on every GPU of the set.
	CoreUtil, MemUtil, MemPeak float64
	// Observing says an observation window runs on the set.
	Observing bool
}

// ColocObservation reports a finished observation window: every member
// completed one epoch since it began (or ended); Factors are each
// member's measured rate over its isolated rate during the window, in
// Jobs order.
type ColocObservation struct {
	Set     int
	Jobs    []int
	Keys    []gavel.Key
	Factors []float64
}

// ColocState is what a co-location scheduler sees at an event.
type ColocState struct {
	Now                job.Time
	Nodes, GPUsPerNode int
	GPUMemGiB          float64
	// Jobs are the active jobs (arrived, not finished), by ID.
	Jobs []*ColocView
	// Sets are the GPU sets in use, by ID.
	Sets []*ColocSet
	// Queue, when not nil, is the waiting jobs in queue order (Waiting
	// returns it). The engine keeps Jobs, Sets and Queue from event to
	// event, so that a decision costs what changed, not every job: like
	// FreeGPUs they are valid during the call; read them, never write or
	// keep them. A set's view is replaced, never changed, when the set
	// changes.
	Queue []*ColocView
	// Tracked says that Changed lists every set created, changed or
	// released since the scheduler's previous call in this run (the
	// engine's states); a state built by hand leaves it false, and a
	// scheduler that keeps an index of sets rebuilds it from Sets.
	Tracked bool
	// Changed are those sets' IDs, ascending.
	Changed []int
	// FreeGPUs[n] lists node n's unused GPUs, ascending. It is the engine's
	// own table, valid during the call: read it, or take GPUs from a
	// CopyFree of it; never write into its rows.
	FreeGPUs [][]int
	// Observed are the windows that finished at this event.
	Observed []ColocObservation
	// Power is the node power model (eq. 5), for energy estimates.
	Power coloc.Power
}

// View returns the active job with ID id (nil if none).
func (s *ColocState) View(id int) *ColocView {
	i, ok := slices.BinarySearchFunc(s.Jobs, id, func(v *ColocView, id int) int { return v.Job.ID - id })
	if !ok {
		return nil
	}
	return s.Jobs[i]
}

// Set returns the set with ID id (nil if none).
func (s *ColocState) Set(id int) *ColocSet {
	i, ok := slices.BinarySearchFunc(s.Sets, id, func(v *ColocSet, id int) int { return v.ID - id })
	if !ok {
		return nil
	}
	return s.Sets[i]
}

// Waiting lists the waiting jobs by (priority desc, submission, ID): the
// engine's Queue, or, in a state without one, the waiting jobs of Jobs
// sorted. The list is the caller's to reslice, not to write into.
func (s *ColocState) Waiting() []*ColocView {
	if s.Queue != nil {
		return s.Queue
	}
	var w []*ColocView
	for _, v := range s.Jobs {
		if v.Set < 0 {
			w = append(w, v)
		}
	}
	slices.SortFunc(w, CmpWaiting)
	return w
}

// CmpWaiting orders waiting jobs: priority desc, then submission, then
// ID (a total order: IDs are unique).
func CmpWaiting(a, b *ColocView) int {
	if a.Job.Priority != b.Job.Priority {
		return b.Job.Priority - a.Job.Priority
	}
	if a.Job.Submit != b.Job.Submit {
		if a.Job.Submit < b.Job.Submit {
			return -1
		}
		return 1
	}
	return a.Job.ID - b.Job.ID
}

// ColocActionKind is what a ColocAction does.
type ColocActionKind int

const (
	// ColocStart runs a waiting job alone on free GPUs of a node (a new set).
	ColocStart ColocActionKind = iota
	// ColocJoin adds a waiting job to an existing set.
	ColocJoin
	// ColocUndo takes a running job off its set at its last epoch boundary
	// (checkpoint) and puts it back in the queue.
	ColocUndo
)

// ColocAction is one change a scheduler asks for; the engine applies a
// decision's actions in order and validates each.
type ColocAction struct {
	Kind ColocActionKind
	Job  int
	// Node and GPUs for a start; Set for a join.
	Node int
	GPUs []int
	Set  int
	// Observe opens an observation window on the set after the action.
	Observe bool
}

// ColocDecision is a scheduler's answer at an event.
type ColocDecision struct {
	Actions []ColocAction
}

// ColocScheduler decides at each co-location event (arrival, completion,
// end of an observation window).
type ColocScheduler interface {
	ScheduleColoc(st *ColocState) ColocDecision
}

// IdleSleeper is implemented by co-location schedulers that put nodes
// without jobs to sleep (EaCO does; Gavel's baselines keep them on unless
// told otherwise).
type IdleSleeper interface {
	SleepsIdleNodes() bool
}

// SleepArg is the shared argument of the co-location policies.
type SleepArg struct {
	// SleepIdle puts nodes without jobs to sleep.
	SleepIdle bool `yaml:"sleep_idle"`
}

// SleepsIdleNodes implements IdleSleeper.
func (a SleepArg) SleepsIdleNodes() bool { return a.SleepIdle }

// ColocDeps is what co-location policies are built with.
type ColocDeps struct {
	// History returns a fresh history H (measurements the policy may know
	// plus the fitted estimator) for one run.
	History func() *coloc.History
	// Seed seeds a policy's randomness (Gandiva's random pairing).
	Seed uint64
}

// SpreadNode is the node with the most free GPUs that has at least n
// (ties: lowest index), or -1: how Gavel's baselines end up using every
// node (EaCO Section 6.2, Fig. 4).
func SpreadNode(free [][]int, n int) int {
	best := -1
	for i, f := range free {
		if len(f) >= n && (best < 0 || len(f) > len(free[best])) {
			best = i
		}
	}
	return best
}

// PackNode is the node with the fewest free GPUs that has at least n
// among nodes already running jobs, else the lowest-index idle node
// (consolidation), or -1.
func PackNode(free [][]int, n, perNode int) int {
	best := -1
	for i, f := range free {
		if len(f) < n || len(f) == perNode {
			continue
		}
		if best < 0 || len(f) < len(free[best]) {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	for i, f := range free {
		if len(f) >= n {
			return i
		}
	}
	return -1
}

// Take removes and returns the first n GPUs of free[node].
func Take(free [][]int, node, n int) []int {
	g := append([]int(nil), free[node][:n]...)
	free[node] = free[node][n:]
	return g
}

// CopyFree copies a FreeGPUs table for a scheduler to take GPUs from. The
// rows are shared, not copied: Take reslices a row and never writes into
// it, and the engine replaces a row rather than change it.
func CopyFree(free [][]int) [][]int { return slices.Clone(free) }

// NormalizedPair is the sum of both jobs' rates relative to alone
// (Gavel's normalized packed throughput) as h predicts it.
func NormalizedPair(h *coloc.History, a, b gavel.Key) float64 {
	f := h.Predict([]gavel.Key{a, b})
	return f[0] + f[1]
}

// MemFits reports whether v fits in the set's GPU memory at every
// member's peak (what the engine enforces).
func MemFits(st *ColocState, s *ColocSet, v *ColocView) bool {
	mem := v.Job.MemGiB
	for _, id := range s.Jobs {
		mem += st.View(id).Job.MemGiB
	}
	return mem <= st.GPUMemGiB
}

// StartFIFO starts waiting jobs in order on the nodes with the most free
// GPUs until the head does not fit (Gavel's FIFO: no job jumps the queue);
// it returns the actions, the jobs still waiting and the free GPUs left
// (a CopyFree of the state's table, or the table itself when nothing
// started: take GPUs from it with Take only). The table is copied only
// when a job starts: most decisions start none.
func StartFIFO(st *ColocState) ([]ColocAction, []*ColocView, [][]int) {
	free, copied := st.FreeGPUs, false
	w := st.Waiting()
	var acts []ColocAction
	for len(w) > 0 {
		v := w[0]
		n := SpreadNode(free, v.Job.Key.Scale)
		if n < 0 {
			break
		}
		if !copied {
			free, copied = CopyFree(free), true
		}
		acts = append(acts, ColocAction{Kind: ColocStart, Job: v.Job.ID, Node: n, GPUs: Take(free, n, v.Job.Key.Scale)})
		w = w[1:]
	}
	return acts, w, free
}

// Combo is what one GPU set runs for a round under Gavel's round-based
// timing: job A alone (B < 0) or the pair A < B sharing the set.
type Combo struct{ A, B int }

// Alone is job a on its own.
func Alone(a int) Combo { return Combo{A: a, B: -1} }

// PairOf is jobs a and b sharing a set (ordered A < B).
func PairOf(a, b int) Combo {
	if a > b {
		a, b = b, a
	}
	return Combo{A: a, B: b}
}

// IsPair reports whether c is two jobs.
func (c Combo) IsPair() bool { return c.B >= 0 }

// Has reports whether job id is a member of c.
func (c Combo) Has(id int) bool { return c.A == id || c.B == id }

// CmpCombo orders jobs alone (by ID) before pairs (by A, then B): the
// order Gavel sorts its job combinations in.
func CmpCombo(x, y Combo) int {
	switch {
	case x.IsPair() != y.IsPair():
		if x.IsPair() {
			return 1
		}
		return -1
	case x.A != y.A:
		return x.A - y.A
	}
	return x.B - y.B
}

// RoundJob is an active job as a round-based allocator sees it.
type RoundJob struct {
	ID  int
	Key gavel.Key
}

// RoundState is what a round-based allocator sees when the allocation is
// recomputed (Gavel's allocation reset).
type RoundState struct {
	Now  job.Time
	GPUs int
	// Jobs are the active jobs (arrived, not finished) by ID, which is
	// arrival order.
	Jobs []RoundJob
	// Combos are the combinations the scheduler tracks (every active job
	// alone, then, for allocators whose rules ask for pairs, every pair of
	// equal GPU count), in CmpCombo order.
	Combos []Combo
	// Rates gives a combination's measured rates in steps/s (alone: the
	// isolated rate and 0); a rate of 0 means it cannot run.
	Rates func(c Combo) (ra, rb float64)
	// IsoRate is each job's isolated rate by ID.
	IsoRate func(id int) float64
}

// RoundShare is a combination's share of time in the allocation.
type RoundShare struct {
	Combo Combo
	Frac  float64
}

// RoundRules say how Gavel's round scheduler treats an allocator's output.
type RoundRules struct {
	// Pairs: the scheduler tracks co-located pairs (Gavel's packing
	// policies: FIFO_Packing, Gandiva_Packing).
	Pairs bool
	// AllocatedOnly: a combination with priority 0 never runs (Gavel's
	// FIFO policies); others may fill GPUs left over in a round.
	AllocatedOnly bool
}

// RoundAllocator is a policy that runs under Gavel's round-based timing
// (scenario key timing: gavel-rounds): at each allocation reset it gives
// every combination a time share; the engine turns shares into rounds by
// Gavel's priorities (share over time received since the reset).
type RoundAllocator interface {
	AllocateRound(st *RoundState) []RoundShare
	RoundRules() RoundRules
}
