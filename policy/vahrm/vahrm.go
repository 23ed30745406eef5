// Package vahrm implements VAHRM, Variation-Aware Heterogeneous Resource
// Management (Yoshida et al.; VAHRM paper Section III): the waiting job with
// the highest priority P = beta*E + (1-beta)*W goes first, on the free nodes
// with the lowest predicted power, if the predicted system power stays under
// the constraint. E and W are normalised to the queue (each divided by the
// largest among the waiting jobs) unless beta_units is "raw".
package vahrm

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// Name is the policy's name.
const Name = "vahrm"

// The readings of beta (Args.BetaUnits).
const (
	// UnitsQueue divides each waiting job's E by the largest E and its W
	// by the largest W among the jobs waiting at the decision, so both
	// terms lie in 0..1 and beta is the share of the weight energy gets.
	UnitsQueue = "queue"
	// UnitsRaw weighs E in joules against W in seconds, as they come.
	UnitsRaw = "raw"
)

// Args configures VAHRM.
type Args struct {
	// Beta weighs predicted energy E against waiting time W, in the
	// units BetaUnits says.
	Beta float64 `yaml:"beta"`
	// BetaUnits is UnitsQueue (default) or UnitsRaw: raw joules against
	// raw seconds make energy outweigh hours of waiting for any job of a
	// few node-hours at the paper's beta = (1/4)^6.
	BetaUnits string `yaml:"beta_units"`
	// WaitLimitS: a job waiting longer becomes unmovable and is placed
	// before any other (the paper's example: one week).
	WaitLimitS float64 `yaml:"wait_limit_s"`
}

// Default is the paper's main setting.
func (Args) Default() Args {
	return Args{Beta: math.Pow(0.25, 6), BetaUnits: UnitsQueue, WaitLimitS: 7 * 24 * 3600}
}

// Validate names bad fields.
func (a Args) Validate() error {
	if a.Beta < 0 || a.Beta > 1 || math.IsNaN(a.Beta) {
		return fmt.Errorf("vahrm.beta: %v, want 0..1", a.Beta)
	}
	if a.BetaUnits != UnitsQueue && a.BetaUnits != UnitsRaw {
		return fmt.Errorf("vahrm.beta_units: %q, want %q or %q", a.BetaUnits, UnitsQueue, UnitsRaw)
	}
	if !(a.WaitLimitS > 0) {
		return fmt.Errorf("vahrm.wait_limit_s: %v, want > 0", a.WaitLimitS)
	}
	return nil
}

// Policy is VAHRM with one set of power predictions.
type Policy struct {
	a      Args
	pred   *power.HPCNodes
	order  [][]int
	meanW  []hw.Watts // fleet-average predicted node power per job type
	minW   []hw.Watts // lowest predicted node power per job type
	free   []bool
	buf    []int
	prio   []float64
	idx    []int
	starts []policy.HPCStart
}

var _ policy.HPCScheduler = (*Policy)(nil)

// New builds VAHRM over pred, the per-device power predictions (TSMVA's, or
// the truth for VAHRM+IDEAL).
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
	p := &Policy{a: a, pred: pred}
	p.order, p.minW = policy.NodesByPower(pred, len(pred.GPUJob))
	mean := pred.FleetMean()
	for k := range pred.GPUJob {
		p.meanW = append(p.meanW, mean.NodeW(0, k))
	}
	return p, nil
}

// Energy is E of eq. (1) for job j in joules: run time x nodes x the job
// type's fleet-average predicted node power (node TDP for a first run).
func (p *Policy) Energy(j *policy.HPCJob, nodeTDP hw.Watts) float64 {
	w := p.meanW[j.Type]
	if j.FirstRun {
		w = nodeTDP
	}
	return j.Runtime.Seconds() * float64(j.Nodes) * float64(w)
}

// Scales returns what E and W are divided by before beta weighs them:
// with UnitsQueue the largest E and the largest W among the queued jobs
// (1 where that largest is 0), with UnitsRaw 1 and 1.
func (p *Policy) Scales(queue []*policy.HPCJob, now job.Time, nodeTDP hw.Watts) (eScale, wScale float64) {
	eScale, wScale = 1, 1
	if p.a.BetaUnits == UnitsRaw {
		return
	}
	var eMax, wMax float64
	for _, j := range queue {
		eMax = math.Max(eMax, p.Energy(j, nodeTDP))
		wMax = math.Max(wMax, (now - j.Submit).Seconds())
	}
	if eMax > 0 {
		eScale = eMax
	}
	if wMax > 0 {
		wScale = wMax
	}
	return
}

// Priority is eq. (1) for job j at time now: beta*E/eScale +
// (1-beta)*W/wScale, with W the waiting time in seconds and the scales
// from Scales.
func (p *Policy) Priority(j *policy.HPCJob, now job.Time, nodeTDP hw.Watts, eScale, wScale float64) float64 {
	wait := (now - j.Submit).Seconds()
	return p.a.Beta*(p.Energy(j, nodeTDP)/eScale) + (1-p.a.Beta)*(wait/wScale)
}

// ScheduleHPC implements policy.HPCScheduler (Fig. 1, steps 1-9).
func (p *Policy) ScheduleHPC(st *policy.HPCState) []policy.HPCStart {
	p.starts = p.starts[:0]
	p.free = append(p.free[:0], st.Free...)
	freeCount, pred := st.FreeCount, st.Predicted
	dom := st.DomainPred.Clone()
	// Step 1: priorities; jobs past the waiting limit are unmovable and go
	// alone, oldest first, until placed.
	p.idx = p.idx[:0]
	limit := job.Time(p.a.WaitLimitS * 1000)
	for i, j := range st.Queue {
		if st.Now-j.Submit > limit {
			p.idx = append(p.idx, i)
		}
	}
	unmovable := len(p.idx) > 0
	if !unmovable {
		// Jobs larger than the free node count are skipped at step 4 whatever
		// their priority (free nodes only shrink during a call): leave them
		// out. The scales are over the whole queue, so leaving them out
		// changes no priority.
		p.prio = slices.Grow(p.prio[:0], len(st.Queue))[:len(st.Queue)]
		eScale, wScale := p.Scales(st.Queue, st.Now, st.NodeTDP)
		for i, j := range st.Queue {
			if j.Nodes <= freeCount {
				p.idx = append(p.idx, i)
				p.prio[i] = p.Priority(j, st.Now, st.NodeTDP, eScale, wScale)
			}
		}
		slices.SortStableFunc(p.idx, func(a, b int) int {
			switch {
			case p.prio[a] > p.prio[b]:
				return -1
			case p.prio[a] < p.prio[b]:
				return 1
			}
			return st.Queue[a].ID - st.Queue[b].ID
		})
	}
	for _, i := range p.idx {
		if freeCount == 0 { // step 2
			break
		}
		j := st.Queue[i]         // step 3
		if j.Nodes > freeCount { // step 4
			if unmovable {
				break
			}
			continue
		}
		if !j.FirstRun && !st.PowerLimit.Allows(pred+hw.Watts(j.Nodes)*(p.minW[j.Type]-st.IdleNode)) {
			if unmovable { // even the cheapest nodes would break the cap (step 6, checked early)
				break
			}
			continue
		}
		var nodes []int
		var w hw.Watts
		if !j.FirstRun { // step 5: least-power free nodes
			nodes = policy.PickCheapestWithin(p.order[j.Type], p.free, j.Nodes, p.buf, dom, func(n int) hw.Watts { return p.pred.NodeW(n, j.Type) }, st.IdleNode)
			for _, n := range nodes {
				w += p.pred.NodeW(n, j.Type)
			}
		} else { // first run: random nodes at TDP
			nodes = policy.PickRandomWithin(st.Rand, p.free, j.Nodes, p.buf, dom, func(int) hw.Watts { return st.NodeTDP }, st.IdleNode)
			w = hw.Watts(j.Nodes) * st.NodeTDP
		}
		if nodes == nil { // only under power domains: no nodes they can hold
			if unmovable {
				break
			}
			continue
		}
		var nodeW []hw.Watts
		var ch []power.NodeWatts
		domOK := true
		if dom != nil { // step 6 for each power domain on the nodes' paths
			for _, n := range nodes {
				if j.FirstRun {
					nodeW = append(nodeW, st.NodeTDP)
				} else {
					nodeW = append(nodeW, p.pred.NodeW(n, j.Type))
				}
			}
			ch = policy.HPCDomainChanges(nodes, nodeW, st.IdleNode)
			_, domOK = dom.FitsAll(ch)
		}
		if !domOK || !st.PowerLimit.Allows(pred+w-hw.Watts(j.Nodes)*st.IdleNode) { // step 6
			for _, n := range nodes {
				p.free[n] = true
			}
			if unmovable {
				break
			}
			continue
		}
		dom.AddAll(ch)
		freeCount -= j.Nodes // steps 7-8
		pred += w - hw.Watts(j.Nodes)*st.IdleNode
		p.starts = append(p.starts, policy.HPCStart{Job: j.ID, Nodes: append([]int(nil), nodes...), Pred: w, Profile: j.FirstRun, NodePred: nodeW})
	}
	return p.starts
}
