// Package afs is the AFS baseline of PowerFlow's evaluation (Hwang et al.,
// "Elastic Resource Sharing for Distributed Deep Learning", NSDI'21):
// elastic but not energy-aware. At every event each job gets one GPU,
// shortest remaining time first, and the remaining GPUs go one doubling at
// a time to the job whose remaining time falls most per added GPU, all at
// one fixed frequency (the paper's baseline keeps every node on,
// keep_idle_nodes_on, which the preset sets). Placement is the same packed
// power-of-two placement as PowerFlow's (docs/policies/afs.md says why).
package afs

import (
	"container/heap"
	"fmt"

	"github.com/wattsched/wattsched/policy"
)

// Name is the policy's registry name.
const Name = "afs"

// Args configure AFS.
type Args struct {
	policy.FixedFreq `yaml:",inline"`
}

// Default runs at the highest frequency.
func (Args) Default() Args { return Args{} }

// Validate checks the arguments.
func (a Args) Validate() error { return a.FixedFreq.Validate(Name) }

// Policy is AFS.
type Policy struct {
	args Args
	fi   int // frequency index (-1: the highest)
	pred policy.ElasticPredictor
}

var _ policy.ElasticScheduler = (*Policy)(nil)

// New returns AFS; deps.Predictor gives job throughput (AFS measures it;
// here it is given exactly, which favours the baseline).
func New(args Args, deps policy.ElasticDeps) (*Policy, error) {
	if err := args.Validate(); err != nil {
		return nil, err
	}
	if deps.Predictor == nil {
		return nil, fmt.Errorf("afs: no predictor")
	}
	fi, err := args.Index(Name, deps.FreqsMHz)
	if err != nil {
		return nil, err
	}
	return &Policy{args: args, fi: fi, pred: deps.Predictor}, nil
}

type item struct {
	job  int
	gain float64
	tie  float64
	seq  int
}

type pq []item

func (q pq) Len() int { return len(q) }
func (q pq) Less(i, j int) bool {
	if q[i].gain != q[j].gain {
		return q[i].gain > q[j].gain
	}
	if q[i].tie != q[j].tie {
		return q[i].tie < q[j].tie
	}
	return q[i].seq < q[j].seq
}
func (q pq) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pq) Push(x any)   { *q = append(*q, x.(item)) }
func (q *pq) Pop() any {
	o := *q
	it := o[len(o)-1]
	*q = o[:len(o)-1]
	return it
}

// ScheduleElastic implements policy.ElasticScheduler.
func (p *Policy) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	fi := policy.FreqIndex(p.fi, st.FreqsMHz)
	free := st.Nodes * st.GPUsPerNode
	n := make([]int, len(st.Jobs))
	rem := func(i, g int) (float64, bool) {
		t, _, ok := p.pred.Predict(st.Jobs[i], g, fi)
		return st.Jobs[i].Remaining * t, ok
	}
	var q pq
	for i := range st.Jobs {
		if r, ok := rem(i, 1); ok {
			q = append(q, item{job: i, gain: 1e300, tie: r, seq: i})
		}
	}
	heap.Init(&q)
	seq := len(q)
	for q.Len() > 0 && free > 0 {
		it := heap.Pop(&q).(item)
		next := max(1, 2*n[it.job])
		if next-n[it.job] > free {
			continue
		}
		free -= next - n[it.job]
		n[it.job] = next
		if 2*next > st.Jobs[it.job].Job.MaxGPUs {
			continue
		}
		cur, _ := rem(it.job, next)
		if more, ok := rem(it.job, 2*next); ok && more < cur {
			heap.Push(&q, item{job: it.job, gain: (cur - more) / float64(next), seq: seq})
			seq++
		}
	}
	var reqs []policy.PackRequest
	var idx []int
	for i, v := range st.Jobs {
		if n[i] > 0 {
			reqs = append(reqs, policy.PackRequest{Job: v.Job.ID, GPUs: n[i], Prev: v.Nodes})
			idx = append(idx, i)
		}
	}
	var on []bool
	if !p.args.KeepIdleNodesOn {
		on = st.NodeOn
	}
	places := policy.Pack(reqs, st.Nodes, st.GPUsPerNode, on, true)
	var d policy.ElasticDecision
	for r, i := range idx {
		if places[r] != nil {
			d.Allocs = append(d.Allocs, policy.ElasticAlloc{Job: st.Jobs[i].Job.ID, Nodes: places[r], FreqIdx: fi})
		}
	}
	d.NodeOn = p.args.NodeOn(d.Allocs, st.Nodes)
	return d
}
