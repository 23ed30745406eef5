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
	// PowerW is the power its GPUs draw now, as a power meter reads it (W,
	// all its GPUs): set while it runs at its chosen frequency, 0 while it
	// waits, pauses for a restart or runs a profiling window.
	PowerW float64
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

// ElasticDeps is what elastic policies are built with.
type ElasticDeps struct {
	// FreqsMHz are the GPUs' supported frequencies, ascending.
	FreqsMHz []int
	// ProfileFreqs are the frequency indices a profiling window cycles.
	ProfileFreqs []int
	// Predictor predicts step time and energy: fitted models (PowerFlow),
	// or exact profiles (the oracle; AFS, which measures throughput).
	Predictor ElasticPredictor
	// GPUMaxPower is a GPU's maximum power (Zeus' cost weighs time by it).
	GPUMaxPower hw.Watts
	// Build builds another elastic policy, for wrappers such as Zeus.
	Build func(name string, args []byte) (ElasticScheduler, error)
}

// FixedFreq configures the elastic baselines that are not energy-aware
// (Gandiva, Tiresias, AFS): every job at one fixed frequency. The two
// switches give a baseline PowerFlow's own energy mechanisms (Section 5.3),
// which its paper's baselines do not have: `reproduce powerflow` measures
// how much of PowerFlow's gain each accounts for.
type FixedFreq struct {
	// FreqMHz is the fixed frequency (0: the highest supported).
	FreqMHz int `yaml:"freq_mhz"`
	// KeepIdleNodesOn leaves nodes without jobs powered, as the paper's
	// baselines do (the presets of scenario.ElasticSystems set it); off,
	// they are shut down as PowerFlow shuts them down.
	KeepIdleNodesOn bool `yaml:"keep_idle_nodes_on"`
	// PackedPlacement places Gandiva's and Tiresias' jobs as PowerFlow
	// does, buddy allocation with job migration (Pack): a waiting job
	// starts whenever the free GPUs add up to its count, running jobs
	// being moved to make room, so no node is left part-used by
	// fragmentation. Off, each keeps its own placement: running jobs never
	// move and a new job goes where a packed placement is free (AFS
	// re-divides every event and always re-packs with migration).
	PackedPlacement bool `yaml:"packed_placement"`
}

// Validate checks the frequency; name prefixes the error.
func (a FixedFreq) Validate(name string) error {
	if a.FreqMHz < 0 {
		return fmt.Errorf("%s.freq_mhz: %d, want > 0 (or 0 for the highest)", name, a.FreqMHz)
	}
	return nil
}

// Index resolves the frequency among freqs (ascending): -1 (the highest,
// whatever the GPUs) for 0, an error for a frequency the GPUs do not have.
func (a FixedFreq) Index(name string, freqs []int) (int, error) {
	if a.FreqMHz == 0 {
		return -1, nil
	}
	for i, f := range freqs {
		if f == a.FreqMHz {
			return i, nil
		}
	}
	if len(freqs) == 0 {
		return 0, fmt.Errorf("%s.freq_mhz: %d MHz, but the GPUs' frequencies are not known", name, a.FreqMHz)
	}
	return 0, fmt.Errorf("%s.freq_mhz: %d MHz is not a supported frequency (%d-%d MHz)", name, a.FreqMHz, freqs[0], freqs[len(freqs)-1])
}

// Place runs the views' jobs at frequency fi on their requested counts:
// PlaceInOrder with the scheduler's own placement, or buddy allocation
// with migration (PackedPlacement), admitting waiting jobs in order while
// the free GPUs add up to their counts.
func (a FixedFreq) Place(st *ElasticState, views []*ElasticView, fi int) []ElasticAlloc {
	if !a.PackedPlacement {
		return PlaceInOrder(st, views, fi)
	}
	free := st.Nodes * st.GPUsPerNode
	for _, v := range views {
		free -= v.GPUs
	}
	var reqs []PackRequest
	for _, v := range views {
		n := v.GPUs
		if n == 0 {
			if n = ReqCount(v.Job); n > free {
				continue
			}
			free -= n
		}
		reqs = append(reqs, PackRequest{Job: v.Job.ID, GPUs: n, Prev: v.Nodes})
	}
	var on []bool
	if !a.KeepIdleNodesOn {
		on = st.NodeOn
	}
	var out []ElasticAlloc
	for r, pl := range Pack(reqs, st.Nodes, st.GPUsPerNode, on, true) {
		if pl != nil {
			out = append(out, ElasticAlloc{Job: reqs[r].Job, Nodes: pl, FreqIdx: fi})
		}
	}
	return out
}

// NodeOn is the decision's powered nodes: nil (all on) when idle nodes
// stay on, else the nodes the allocations use.
func (a FixedFreq) NodeOn(allocs []ElasticAlloc, nodes int) []bool {
	if a.KeepIdleNodesOn {
		return nil
	}
	return NodesInUse(allocs, nodes)
}
