// Package fcfs implements the first-come-first-serve baselines of the VAHRM
// paper (Table V): VU-FCFS (variation-unaware), CVA-FCFS (CPU-variation-aware,
// Chasapis et al.), CGVA-FCFS (CPU-and-GPU-variation-aware), each with or
// without EASY backfilling (the "-B" variants).
package fcfs

import (
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// Name is the policy family's name.
const Name = "fcfs"

// Variation says which job types get power-efficient nodes.
type Variation string

// Variations.
const (
	Unaware   Variation = "none"    // VU: random free nodes, fleet-average power predictions
	CPUAware  Variation = "cpu"     // CVA: CPU jobs on the least-power nodes, GPU jobs random
	FullAware Variation = "cpu+gpu" // CGVA: every job on the least-power nodes
)

// Args configures the family.
type Args struct {
	Variation Variation `yaml:"variation"`
	Backfill  bool      `yaml:"backfill"`
}

// Default is VU-FCFS.
func (Args) Default() Args { return Args{Variation: Unaware} }

// Validate names bad fields.
func (a Args) Validate() error {
	switch a.Variation {
	case Unaware, CPUAware, FullAware:
		return nil
	}
	return fmt.Errorf("fcfs.variation: %q, want %q, %q or %q", a.Variation, Unaware, CPUAware, FullAware)
}

// Label is the paper's name of the configuration (VU-FCFS-B, ...).
func (a Args) Label() string {
	l := map[Variation]string{Unaware: "VU-FCFS", CPUAware: "CVA-FCFS", FullAware: "CGVA-FCFS"}[a.Variation]
	if a.Backfill {
		l += "-B"
	}
	return l
}

// Policy is one FCFS configuration.
type Policy struct {
	a      Args
	pred   *power.HPCNodes // per-device predictions (variation-aware types)
	mean   *power.HPCNodes // fleet-average predictions (unaware types)
	order  [][]int
	minW   []hw.Watts // lowest predicted node power per job type
	free   []bool
	buf    []int
	ends   []*policy.HPCRunning
	starts []policy.HPCStart
}

var _ policy.HPCScheduler = (*Policy)(nil)

// New builds the policy; pred holds the per-device power predictions used for
// variation-aware job types.
func New(a Args, deps policy.HPCDeps) (*Policy, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	pred := deps.Pred
	if pred == nil {
		return nil, fmt.Errorf("%s: no power predictions", Name)
	}
	if err := pred.Validate(); err != nil {
		return nil, err
	}
	p := &Policy{a: a, pred: pred, mean: pred.FleetMean()}
	p.order, p.minW = policy.NodesByPower(pred, len(pred.GPUJob))
	return p, nil
}

// lowerW is a lower bound of the predicted power of j's nodes, to reject
// jobs that cannot fit the power constraint before picking nodes.
func (p *Policy) lowerW(st *policy.HPCState, j *policy.HPCJob) hw.Watts {
	switch {
	case p.aware(j) && !j.FirstRun:
		return hw.Watts(j.Nodes) * p.minW[j.Type]
	case p.aware(j):
		return hw.Watts(j.Nodes) * st.NodeTDP
	}
	return hw.Watts(j.Nodes) * p.mean.NodeW(0, j.Type)
}

func (p *Policy) aware(j *policy.HPCJob) bool {
	switch p.a.Variation {
	case FullAware:
		return true
	case CPUAware:
		return !p.pred.GPUJob[j.Type]
	}
	return false
}

// place picks nodes for j and predicts their power; nil when too few free.
func (p *Policy) place(st *policy.HPCState, j *policy.HPCJob, dom *power.DomainLoad) (nodes []int, nodeW []hw.Watts, predW hw.Watts, profile bool) {
	switch {
	case p.aware(j) && !j.FirstRun:
		nodes = policy.PickCheapestWithin(p.order[j.Type], p.free, j.Nodes, p.buf, dom, func(n int) hw.Watts { return p.pred.NodeW(n, j.Type) }, st.IdleNode)
		for _, n := range nodes {
			nodeW = append(nodeW, p.pred.NodeW(n, j.Type))
		}
	case p.aware(j): // first run: no profile yet, assume TDP and profile it
		nodes = policy.PickRandomWithin(st.Rand, p.free, j.Nodes, p.buf, dom, func(int) hw.Watts { return st.NodeTDP }, st.IdleNode)
		for range nodes {
			nodeW = append(nodeW, st.NodeTDP)
		}
		profile = true
	default:
		nodes = policy.PickRandomWithin(st.Rand, p.free, j.Nodes, p.buf, dom, func(n int) hw.Watts { return p.mean.NodeW(n, j.Type) }, st.IdleNode)
		for _, n := range nodes {
			nodeW = append(nodeW, p.mean.NodeW(n, j.Type))
		}
	}
	if nodes == nil {
		return nil, nil, 0, false
	}
	if profile {
		predW = hw.Watts(j.Nodes) * st.NodeTDP
	} else {
		for _, w := range nodeW {
			predW += w
		}
	}
	return append([]int(nil), nodes...), nodeW, predW, profile
}

// ScheduleHPC implements policy.HPCScheduler: start jobs in submission order
// while they fit (nodes and predicted power); with backfilling, later jobs may
// start if they do not delay the first waiting job's reservation (EASY).
func (p *Policy) ScheduleHPC(st *policy.HPCState) []policy.HPCStart {
	p.free = append(p.free[:0], st.Free...)
	freeCount, pred := st.FreeCount, st.Predicted
	p.starts = p.starts[:0]
	dom := st.DomainPred.Clone()
	try := func(j *policy.HPCJob) bool {
		if j.Nodes > freeCount {
			return false
		}
		if !st.PowerLimit.Allows(pred + p.lowerW(st, j) - hw.Watts(j.Nodes)*st.IdleNode) {
			return false
		}
		nodes, nodeW, w, prof := p.place(st, j, dom)
		if nodes == nil {
			return false
		}
		// Every power domain on the nodes' paths must hold them too.
		ch := policy.HPCDomainChanges(nodes, nodeW, st.IdleNode)
		if _, ok := dom.FitsAll(ch); !ok || !st.PowerLimit.Allows(pred+w-hw.Watts(j.Nodes)*st.IdleNode) {
			for _, n := range nodes {
				p.free[n] = true
			}
			return false
		}
		dom.AddAll(ch)
		freeCount -= j.Nodes
		pred += w - hw.Watts(j.Nodes)*st.IdleNode
		var np []hw.Watts
		if dom != nil {
			np = nodeW
		}
		p.starts = append(p.starts, policy.HPCStart{Job: j.ID, Nodes: nodes, Pred: w, Profile: prof, NodePred: np})
		return true
	}
	i := 0
	for ; i < len(st.Queue); i++ {
		if !try(st.Queue[i]) {
			break
		}
	}
	if i == len(st.Queue) || !p.a.Backfill {
		return p.starts
	}
	// EASY: the head's reservation is the earliest time enough nodes are free.
	head := st.Queue[i]
	p.ends = append(p.ends[:0], st.Running...)
	for _, s := range p.starts {
		j := jobByID(st.Queue, s.Job)
		p.ends = append(p.ends, &policy.HPCRunning{Job: j, End: st.Now + j.Runtime, Nodes: s.Nodes, Pred: s.Pred})
	}
	slices.SortStableFunc(p.ends, func(a, b *policy.HPCRunning) int {
		switch {
		case a.End < b.End:
			return -1
		case a.End > b.End:
			return 1
		}
		return 0
	})
	// The head's reservation (EASY) is the first time at which both enough
	// nodes and enough power (under the limit) are free for it, as running
	// jobs end and give back their nodes and their predicted power above
	// idle. Its power is taken at its upper estimate, so that a backfilled
	// job cannot take power the head will need. extra and extraW are the
	// nodes and power left over at that time: a job that would still run
	// then may backfill only within both, so it delays the head neither in
	// time nor in power.
	headW := p.upperW(st, head) - hw.Watts(head.Nodes)*st.IdleNode
	avail, freed, shadow, extra, extraW := freeCount, hw.Watts(0), job.Time(-1), 0, hw.Watts(0)
	for _, r := range p.ends {
		avail += len(r.Nodes)
		freed += r.Pred - hw.Watts(len(r.Nodes))*st.IdleNode
		if avail >= head.Nodes && st.PowerLimit.Allows(pred-freed+headW) {
			shadow, extra = r.End, avail-head.Nodes
			extraW = st.PowerLimit.Headroom(pred - freed + headW)
			break
		}
	}
	for _, j := range st.Queue[i+1:] {
		if freeCount == 0 {
			break
		}
		if j.Nodes > freeCount {
			continue
		}
		endsBefore := shadow >= 0 && st.Now+j.Runtime <= shadow
		if !endsBefore && (shadow < 0 || j.Nodes > extra || p.upperW(st, j)-hw.Watts(j.Nodes)*st.IdleNode > extraW) {
			continue
		}
		if try(j) && !endsBefore {
			s := p.starts[len(p.starts)-1]
			extra -= j.Nodes
			extraW -= s.Pred - hw.Watts(j.Nodes)*st.IdleNode
		}
	}
	return p.starts
}

// upperW is the highest power job j's nodes can be predicted to draw: the
// most expensive nodes for its type (variation-aware), TDP for a first
// run, the fleet mean otherwise.
func (p *Policy) upperW(st *policy.HPCState, j *policy.HPCJob) hw.Watts {
	switch {
	case p.aware(j) && !j.FirstRun:
		o := p.order[j.Type]
		var w hw.Watts
		for k := 0; k < j.Nodes && k < len(o); k++ {
			w += p.pred.NodeW(o[len(o)-1-k], j.Type)
		}
		return w
	case p.aware(j):
		return hw.Watts(j.Nodes) * st.NodeTDP
	}
	return hw.Watts(j.Nodes) * p.mean.NodeW(0, j.Type)
}

func jobByID(q []*policy.HPCJob, id int) *policy.HPCJob {
	for _, j := range q {
		if j.ID == id {
			return j
		}
	}
	return nil
}
