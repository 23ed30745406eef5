// Package policy defines what scheduling policies implement and how they
// compose: Filters and Scorers chained by a Placer exactly as kube-scheduler
// chains filter and score plugins, and Schedulers that turn the engine's
// state into actions. Each policy lives in its own sub-package.
package policy

import (
	"math/rand/v2"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// Normalisation constants of the FGD simulator's baseline scorers: the
// largest openb node (128 vCPU, 8 GPUs).
const (
	MaxSpecCPUMilli = 128000
	MaxSpecGPUMilli = 8000
)

// Scores are integers on 0..MaxScore, as in kube-scheduler.
const (
	MinScore int64 = 0
	MaxScore int64 = 100
)

// Filter rejects nodes a task must not use. "Does not fit" is a result, not an error.
type Filter interface {
	Feasible(t *job.Task, n *cluster.Node) (ok bool, reason string)
}

// Scorer rates a feasible node for a task; higher is better. A Placer
// caches a scorer's scores only when it declares what it reads of a task
// (TaskReader); see TaskReader for the contract.
type Scorer interface {
	Score(t *job.Task, n *cluster.Node) int64
}

// TaskFields is a set of the fields of a job.Task that a Scorer's score (or
// a Filter's verdict, or a GPUSelector's choice) reads.
type TaskFields uint8

// The task fields a scorer may declare.
const (
	// ReadsDemand: the task's Demand (CPU, memory, GPU count and share,
	// GPU model constraint, MIG profile).
	ReadsDemand TaskFields = 1 << iota
	// ReadsKind: the task's Kind, its workload class (training, inference, ...).
	ReadsKind
	// ReadsRefGPU: the GPU model the task's work was measured on (RefGPU).
	ReadsRefGPU
	// ReadsWork: the task's Work (its duration at rate 1).
	ReadsWork
)

// TaskReader is implemented by scorers and filters that declare which
// fields of a task their results read. The contract a Placer relies on:
// for two tasks equal in every declared field, Score (and Feasible and
// SelectGPUs) return the same result on a node in the same state (same
// cluster.Node.Version). The Placer then keys its score cache on the union
// of the declared fields of all its scorers and filters, so that a task is
// never served scores computed for a task that differs in a field any of
// them reads. A scorer or filter that does not implement TaskReader
// declares nothing, and a Placer with one is not cached: each placement
// scores every node afresh. Reading a field not in the set (ID, Name,
// Submit, ...) breaks the contract: such a scorer must not implement
// TaskReader.
type TaskReader interface {
	TaskReads() TaskFields
}

// StateScorer is implemented by scorers whose score depends on a node only
// through its models, capacities, power state and allocations, never its
// name or ID: nodes in the same state get the same score, so a Placer
// without filters may score one of them for all.
type StateScorer interface {
	Scorer
	StateOnly()
}

// Noter is implemented by scorers that can say, after a run, where they
// could not score as designed (a missing figure they fell back from); the
// notes are sorted and name no task, so that they depend only on what the
// run scored.
type Noter interface {
	Notes() []string
}

// Normalizer is implemented by scorers whose raw scores need rescaling over
// the feasible nodes before weighting (kube-scheduler's NormalizeScore).
type Normalizer interface {
	Normalize(scores []int64)
}

// GPUSelector picks the GPUs of the chosen node for a task.
type GPUSelector interface {
	SelectGPUs(t *job.Task, n *cluster.Node) []int
}

// MIGSelector is a GPUSelector that also picks where on a node in MIG
// mode a task asking for a MIG instance goes: the GPU and the instance's
// start memory slice; ok is false when the node has no room for it.
type MIGSelector interface {
	SelectMIG(t *job.Task, n *cluster.Node) (gpu, start int, ok bool)
}

// Deps is what policy constructors may use.
type Deps struct {
	Catalog *hw.Catalog
	Power   power.Model
	// Workload is the task population the policy may learn from (FGD's
	// target workload); it is never the future arrival sequence.
	Workload []job.Task
}

// MinMaxNormalizer is a Normalizer whose Normalize is MinMaxNormalize
// with NormalizeEqual as the score of equal nodes. A Placer can then
// normalise one node's score from the extremes alone (MinMaxScore), which
// lets it keep the best node of a task class in an index instead of
// scoring every node at every placement.
type MinMaxNormalizer interface {
	Normalizer
	NormalizeEqual() int64
}

// MinMaxNormalize rescales scores linearly onto 0..100 with integer division;
// when all scores are equal they all become equalScore.
func MinMaxNormalize(scores []int64, equalScore int64) {
	if len(scores) == 0 {
		return
	}
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		scores[i] = MinMaxScore(s, lo, hi, equalScore)
	}
}

// MinMaxScore is MinMaxNormalize's value for score s when the scores
// range over lo..hi.
func MinMaxScore(s, lo, hi, equalScore int64) int64 {
	if hi == lo {
		return equalScore
	}
	return (s - lo) * MaxScore / (hi - lo)
}

// Action is something a Scheduler asks the engine to do.
type Action interface{ action() }

// Start runs a queued task on a node with the given GPUs; a task asking
// for a MIG instance takes the instance at memory slice MIGStart of
// GPUs[0].
type Start struct {
	Task     job.ID
	Node     cluster.NodeID
	GPUs     []int
	MIGStart int
}

// Reject drops a queued task that cannot be served.
type Reject struct {
	Task   job.ID
	Reason string
}

func (Start) action()  {}
func (Reject) action() {}

// State is the read-only view a Scheduler gets at each scheduling event.
type State struct {
	Now     job.Time
	Cluster *cluster.Cluster
	// Queue holds the waiting tasks in arrival order.
	Queue []*job.Task
	// Running holds the running tasks ordered by ID.
	Running []*job.Task
	// PowerLimit bounds the cluster's estimated power (zero: none); Power
	// is the model the engine estimates it with.
	PowerLimit power.Limit
	Power      power.Model
	// Domains are the power domains over the cluster's nodes (by node
	// index; nil: none), each limit enforced as PowerLimit is (PowerGate).
	Domains *power.Domains
	// Meter, when set, gives nodes' measured power: the gate then counts
	// max(measured, estimated) for the running tasks (PowerGate).
	Meter Meter
	// Inflation is true when tasks never leave and a task that does not fit
	// now never will (FGD/PWR inflation experiments).
	Inflation bool
	// Rand is the run's one seeded random source; policies draw from it and
	// from nothing else, so that a run is reproducible from its seed.
	Rand *rand.Rand
}

// Scheduler decides at each scheduling event.
type Scheduler interface {
	Schedule(st *State) []Action
}

// Online places queued tasks in arrival order with a Placer, the way
// kube-scheduler serves pods one at a time: the first queued task that fits
// somewhere starts (a task that fits nowhere does not block the ones behind
// it). In inflation mode a task that fits nowhere is rejected. Under a
// power limit, the Placer admits through the shared PowerGate, and a task
// that fits but waits for power holds the tasks behind it.
type Online struct {
	Placer *Placer
	// gate is the gate Online gave the Placer from the state (nil when the
	// caller set one): each call gives it the state's meter.
	gate *PowerGate
	// Explain, when set, is called with each task Online starts, at the
	// state's time, and the Placer's explanation of its node (valid only
	// during the call).
	Explain func(now job.Time, t *job.Task, x *Explanation)
	x       *Explanation
	// Gangs says how gang jobs wait and pack (gang.go).
	Gangs GangOptions
	// gangTried is, per gang that could not start, the cluster's change
	// mark after which it has not been tried again (gang.go).
	gangTried map[string]uint64
}

var _ Scheduler = (*Online)(nil)

// Schedule implements Scheduler.
func (o *Online) Schedule(st *State) []Action {
	if (st.PowerLimit > 0 || st.Domains.Len() > 0) && o.Placer.Gate() == nil {
		o.gate = &PowerGate{Limit: st.PowerLimit, Model: st.Power, Domains: st.Domains}
		o.Placer.SetGate(o.gate)
	}
	if o.gate != nil {
		o.gate.Meter = st.Meter // readings may change between calls
	}
	if o.Explain != nil && o.x == nil {
		o.x = &Explanation{}
		o.Placer.SetExplain(o.x)
	}
	var out []Action
	var seen map[string]bool
	for _, t := range st.Queue {
		if t.Gang != "" {
			if seen == nil {
				seen = map[string]bool{}
			}
			if a, block := o.scheduleGang(st, t, seen); a != nil || block {
				if a != nil {
					out = append(out, a)
				}
				return out
			}
			continue
		}
		d, ok := o.Placer.Place(t, st.Cluster)
		if !ok && o.Placer.Held() {
			if st.Inflation { // power never frees up: the task never starts
				return append(out, Reject{Task: t.ID, Reason: "over the power limit on every node where it fits"})
			}
			// A task that could not start even on an idle cluster is
			// rejected rather than blocking the tasks behind it forever
			// (the Kubernetes PowerBudget plugin does the same).
			pick := func(d *job.Demand, n *cluster.Node) []int {
				return o.Placer.SelectGPUs(&job.Task{Demand: *d, Class: -1}, n)
			}
			if never, why := o.Placer.Gate().NeverFits(&t.Demand, st.Cluster.Nodes, pick); never {
				out = append(out, Reject{Task: t.ID, Reason: why})
				continue
			}
			return out // waits for power, and so do the tasks behind it
		}
		if !ok {
			if st.Inflation {
				out = append(out, Reject{Task: t.ID, Reason: "no feasible node"})
			}
			continue
		}
		if o.Explain != nil {
			o.Explain(st.Now, t, o.x)
		}
		// Later tasks must see this one placed, so Online starts one task
		// per call; the engine calls again while a call starts or rejects.
		out = append(out, Start{Task: t.ID, Node: d.Node, GPUs: d.GPUs, MIGStart: d.MIGStart})
		return out
	}
	return out
}
