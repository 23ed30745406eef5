package policy

import (
	"fmt"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// ElasticJob is a data-parallel DL training job (PowerFlow Section 6.1):
// a DNN trained at a fixed global batch size for a number of iterations, on
// any number of GPUs an elastic scheduler gives it.
type ElasticJob struct {
	ID     int
	Submit job.Time
	// Iters is the number of iterations the job runs.
	Iters float64
	// DNN and Batch name the model and the global batch size.
	DNN   string
	Batch int
	// ReqGPUs is the GPU count the user asked for; non-elastic schedulers
	// run the job on exactly this many. MaxGPUs is the largest power-of-two
	// count the job can run on.
	ReqGPUs, MaxGPUs int
}

// NodeShare is part of a placement: GPUs on one node.
type NodeShare struct{ Node, GPUs int }

// Observation is one profiling measurement a scheduler received: step time
// and GPU energy per iteration (all GPUs) on GPUs GPUs at frequency index
// FreqIdx, with measurement noise.
type Observation struct {
	GPUs, FreqIdx  int
	IterSec, IterJ float64
}

// ElasticView is what a scheduler sees of an active job.
type ElasticView struct {
	Job *ElasticJob
	// Remaining is the iterations left.
	Remaining float64
	// Nodes is the current placement (nil while waiting); GPUs its total.
	Nodes   []NodeShare
	GPUs    int
	FreqIdx int
	// Profiling is set while a profiling window runs.
	Profiling bool
	// Obs holds every measurement profiling made, in order.
	Obs []Observation
	// AttainedGPUms is the GPU-time the job has received, in GPU
	// milliseconds (Tiresias' 2D attained service); Ran the time it has
	// held GPUs.
	AttainedGPUms float64
	Ran           job.Time
	// LastStart is when the job last started or resumed; PlacedAt when its
	// placement last changed; QueuedSince when it last began waiting
	// (submission or preemption).
	LastStart, PlacedAt, QueuedSince job.Time
	// Started says whether it has ever run.
	Started bool
}

// Profiled reports whether profiling has measured the job on n GPUs.
func (v *ElasticView) Profiled(n int) bool {
	for _, o := range v.Obs {
		if o.GPUs == n {
			return true
		}
	}
	return false
}

// ElasticState is what an elastic scheduler sees at a scheduling event.
type ElasticState struct {
	Now job.Time
	// Jobs are the active jobs (submitted, pre-run done, not finished) in
	// submission order.
	Jobs               []*ElasticView
	Nodes, GPUsPerNode int
	// NodeOn says which nodes are powered.
	NodeOn []bool
	// FreqsMHz are the supported GPU frequencies, ascending.
	FreqsMHz []int
	// PowerLimit is the cluster power limit the engine checks predicted
	// power against; IdleGPU a powered idle GPU's draw.
	PowerLimit power.Limit
	IdleGPU    hw.Watts
}

// ElasticAlloc runs a job on a placement at a frequency.
type ElasticAlloc struct {
	Job     int
	Nodes   []NodeShare
	FreqIdx int
	// Pred is the scheduler's predicted power of the job's GPUs, summed
	// with idle GPUs for the engine's power-limit check.
	Pred hw.Watts
	// Profile starts a profiling window on this placement: the engine
	// cycles the profiling frequencies and reports measurements; while it
	// runs FreqIdx is not used. Ignored if one already runs on this placement.
	Profile bool
}

// ElasticDecision is the full desired state after a scheduling event:
// jobs not listed wait (a running one is checkpointed and stopped).
type ElasticDecision struct {
	Allocs []ElasticAlloc
	// NodeOn lists powered nodes; nil keeps every node on.
	NodeOn []bool
	// WakeAt asks for a scheduling event at that time (0: none).
	WakeAt job.Time
}

// ElasticScheduler decides at each elastic scheduling event (arrival,
// completion, end of a profiling window or pre-run, wake-up).
type ElasticScheduler interface {
	ScheduleElastic(st *ElasticState) ElasticDecision
}

// FixedFreq configures the elastic baselines that are not energy-aware
// (Gandiva, Tiresias, AFS): every job at one fixed frequency.
type FixedFreq struct {
	// FreqIdx is the fixed frequency index (-1: the highest).
	FreqIdx int
	// KeepIdleNodesOn leaves nodes without jobs powered (by default they
	// are shut down, as PowerFlow does; see docs/reproduce-powerflow.md).
	KeepIdleNodesOn bool
}

// Validate checks the frequency index; name prefixes the error.
func (a FixedFreq) Validate(name string) error {
	if a.FreqIdx < -1 {
		return fmt.Errorf("%s: freq index %d", name, a.FreqIdx)
	}
	return nil
}

// NodeOn is the decision's powered nodes: nil (all on) when idle nodes
// stay on, else the nodes the allocations use.
func (a FixedFreq) NodeOn(allocs []ElasticAlloc, nodes int) []bool {
	if a.KeepIdleNodesOn {
		return nil
	}
	return NodesInUse(allocs, nodes)
}
