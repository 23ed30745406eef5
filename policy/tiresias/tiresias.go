// Package tiresias is the Tiresias baseline of PowerFlow's evaluation (Gu
// et al., NSDI'19): discretised two-dimensional least-attained-service
// (2D-LAS). A job's attained service is GPUs x time; jobs are queued by
// thresholds on it, FIFO within a queue, and the highest-priority jobs that
// fit run, preempting (checkpointing) lower ones. Not elastic, not
// energy-aware (fixed frequency; the paper's baseline keeps every node on,
// keep_idle_nodes_on, which the preset sets).
package tiresias

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "tiresias"

// Args configure Tiresias.
type Args struct {
	policy.FixedFreq `yaml:",inline"`
	// ThresholdsGPUSec are the attained-service queue thresholds (GPU-s).
	ThresholdsGPUSec []float64 `yaml:"thresholds_gpu_s"`
}

// Default uses three queues split at 1 and 10 GPU-hours.
func (Args) Default() Args {
	return Args{ThresholdsGPUSec: []float64{3600, 36000}}
}

// Validate checks the arguments.
func (a Args) Validate() error {
	if err := a.FixedFreq.Validate(Name); err != nil {
		return err
	}
	if !slices.IsSorted(a.ThresholdsGPUSec) {
		return fmt.Errorf("tiresias.thresholds_gpu_s: %v must ascend", a.ThresholdsGPUSec)
	}
	for _, t := range a.ThresholdsGPUSec {
		if !(t > 0) || math.IsInf(t, 0) {
			return fmt.Errorf("tiresias.thresholds_gpu_s: %v must be positive and finite", t)
		}
	}
	return nil
}

// Policy is Tiresias.
type Policy struct {
	args Args
	fi   int // frequency index (-1: the highest)
}

var _ policy.ElasticScheduler = (*Policy)(nil)

// New returns Tiresias.
func New(args Args, deps policy.ElasticDeps) (*Policy, error) {
	if err := args.Validate(); err != nil {
		return nil, err
	}
	fi, err := args.Index(Name, deps.FreqsMHz)
	if err != nil {
		return nil, err
	}
	return &Policy{args: args, fi: fi}, nil
}

func (p *Policy) level(v *policy.ElasticView) int {
	s := v.AttainedGPUms / 1000
	for i, t := range p.args.ThresholdsGPUSec {
		if s < t {
			return i
		}
	}
	return len(p.args.ThresholdsGPUSec)
}

// ScheduleElastic implements policy.ElasticScheduler.
func (p *Policy) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	fi := policy.FreqIndex(p.fi, st.FreqsMHz)
	order := slices.Clone(st.Jobs)
	slices.SortStableFunc(order, func(a, b *policy.ElasticView) int {
		if la, lb := p.level(a), p.level(b); la != lb {
			return la - lb
		}
		if a.Job.Submit != b.Job.Submit {
			return int(a.Job.Submit - b.Job.Submit)
		}
		return a.Job.ID - b.Job.ID
	})
	// The highest-priority jobs whose GPU counts fit the cluster run.
	left := st.Nodes * st.GPUsPerNode
	var run []*policy.ElasticView
	for _, v := range order {
		if n := policy.ReqCount(v.Job); n <= left {
			run = append(run, v)
			left -= n
		}
	}
	d := policy.ElasticDecision{Allocs: p.args.Place(st, run, fi)}
	// Wake when a running job crosses into a lower queue.
	views := make(map[int]*policy.ElasticView, len(run))
	for _, v := range run {
		views[v.Job.ID] = v
	}
	wake := job.Time(math.MaxInt64)
	for _, a := range d.Allocs {
		v := views[a.Job]
		l := p.level(v)
		if l >= len(p.args.ThresholdsGPUSec) {
			continue
		}
		n := 0
		for _, ns := range a.Nodes {
			n += ns.GPUs
		}
		ms := job.Time(math.Ceil((p.args.ThresholdsGPUSec[l]*1000 - v.AttainedGPUms) / float64(n)))
		wake = min(wake, st.Now+max(ms, 1))
	}
	if wake != math.MaxInt64 {
		d.WakeAt = wake
	}
	d.NodeOn = p.args.NodeOn(d.Allocs, st.Nodes)
	return d
}
