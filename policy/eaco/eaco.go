// Package eaco is EaCO (Haghshenas and Hashemi, "EaCO: Resource Sharing
// Dynamics and Its Impact on Energy Efficiency for DNN Training"),
// Algorithms 1-2: place each queued job on the most utilised GPU set whose
// core and memory utilisation are under thresholds and whose free peak
// memory holds it, if the jobs' completion times predicted from history H
// meet every co-tenant's deadline and the energy/time cost (eq. 1) favours
// sharing; observe the set until every member has run one epoch, record
// the measurement in H, re-estimate, and keep or undo the placement. See
// docs/policies/eaco.md.
package eaco

import (
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/trace/gavel"
)

// Name is the policy's registry name.
const Name = "eaco"

// Args configure EaCO.
type Args struct {
	// CoreThreshold and MemThreshold (percent) exclude GPUs whose observed
	// mean core or memory utilisation is above them (eqs. 3-4, Algorithm 2
	// line 4).
	CoreThreshold float64 `yaml:"core_threshold_pct"`
	MemThreshold  float64 `yaml:"mem_threshold_pct"`
	// Alpha weighs energy against average time per epoch (eq. 1).
	Alpha float64 `yaml:"alpha"`
	// MaxShare is the most jobs on one GPU set.
	MaxShare int `yaml:"max_share"`
	// ReserveGPUs keeps this many GPUs (at most a quarter of the cluster)
	// for high-priority jobs (priority > 0, which need immediate exclusive
	// GPUs): once no more are free,
	// other jobs share GPUs when deadlines allow, without the eq. 1 test,
	// or wait.
	ReserveGPUs int `yaml:"reserve_gpus"`
	// SleepIdle puts nodes without jobs to sleep (default: yes).
	policy.SleepArg `yaml:",inline"`
}

// Default returns EaCO's defaults (docs/policies/eaco.md says why).
func (Args) Default() Args {
	return Args{CoreThreshold: 80, MemThreshold: 80, Alpha: 0.5, MaxShare: 4, ReserveGPUs: 8, SleepArg: policy.SleepArg{SleepIdle: true}}
}

// Validate names every bad field.
func (a Args) Validate() error {
	switch {
	case !(a.CoreThreshold > 0 && a.CoreThreshold <= 100):
		return fmt.Errorf("core_threshold_pct: %v, want in (0, 100]", a.CoreThreshold)
	case !(a.MemThreshold > 0 && a.MemThreshold <= 100):
		return fmt.Errorf("mem_threshold_pct: %v, want in (0, 100]", a.MemThreshold)
	case !(a.Alpha >= 0 && a.Alpha <= 1):
		return fmt.Errorf("alpha: %v, want in [0, 1]", a.Alpha)
	case a.MaxShare < 1 || a.MaxShare > 8:
		return fmt.Errorf("max_share: %d, want 1..8", a.MaxShare)
	case a.ReserveGPUs < 0:
		return fmt.Errorf("reserve_gpus: %d, want >= 0", a.ReserveGPUs)
	}
	return nil
}

// Policy is EaCO for one run (it accumulates history).
type Policy struct {
	policy.SleepArg
	a Args
	h *coloc.History
	// pending maps a set under observation to the job placed on it.
	pending map[int]int
	// tried maps a job to the sets its placement was undone on.
	tried map[int][]int
	// Finalised and Undone count outcomes of observation.
	Finalised, Undone int
	// Predictions within one decision (sets do not change during it).
	before map[int][]float64
	after  map[memoKey][]float64
	mbuf   []*policy.ColocView
	kbuf   []gavel.Key
}

var _ policy.ColocScheduler = (*Policy)(nil)

// New builds EaCO.
func New(a Args, d policy.ColocDeps) (*Policy, error) {
	if d.History == nil {
		return nil, fmt.Errorf("eaco needs a history H")
	}
	return &Policy{SleepArg: a.SleepArg, a: a, h: d.History(), pending: map[int]int{}, tried: map[int][]int{}}, nil
}

// History is the policy's H.
func (p *Policy) History() *coloc.History { return p.h }

// completion is when a job with rem steps left finishes at rate.
func completion(now job.Time, rem, rate float64) float64 {
	if !(rate > 0) {
		return math.Inf(1)
	}
	return float64(now) + 1000*rem/rate
}

func meets(v *policy.ColocView, now job.Time, f float64) bool {
	if v.Job.Deadline == policy.NoDeadline {
		return f > 0
	}
	return completion(now, v.Job.Steps-v.Done, v.Job.IsoRate*f) <= float64(v.Job.Deadline)
}

// ScheduleColoc implements policy.ColocScheduler.
func (p *Policy) ScheduleColoc(st *policy.ColocState) policy.ColocDecision {
	var d policy.ColocDecision
	undone := map[int]bool{}
	p.before, p.after = map[int][]float64{}, map[memoKey][]float64{}
	// Lines 12-20: a finished observation is recorded in H, then every
	// member's JCT is re-estimated from what was measured.
	for _, o := range st.Observed {
		p.h.Record(o.Keys, o.Factors)
		j, ok := p.pending[o.Set]
		if !ok {
			continue
		}
		delete(p.pending, o.Set)
		keep := true
		for i, id := range o.Jobs {
			if v := st.View(id); v != nil && !meets(v, st.Now, o.Factors[i]) {
				keep = false
			}
		}
		if keep || !slices.Contains(o.Jobs, j) {
			p.Finalised++
			continue
		}
		p.Undone++
		p.tried[j] = append(p.tried[j], o.Set)
		undone[o.Set] = true
		d.Actions = append(d.Actions, policy.ColocAction{Kind: policy.ColocUndo, Job: j})
	}
	for set := range p.pending {
		if st.Set(set) == nil {
			delete(p.pending, set)
		}
	}
	free := policy.CopyFree(st.FreeGPUs)
	// Sets a job may join this round, most utilised first (line 5).
	var cands []*policy.ColocSet
	for _, s := range st.Sets {
		if _, busy := p.pending[s.ID]; busy || s.Observing || undone[s.ID] || len(s.Jobs) >= p.a.MaxShare {
			continue
		}
		if s.CoreUtil > p.a.CoreThreshold || s.MemUtil > p.a.MemThreshold {
			continue // Algorithm 2 line 4
		}
		if holdsPriority(st, s) {
			continue // a high-priority job keeps its GPUs to itself (Sec. 4.2)
		}
		cands = append(cands, s)
	}
	slices.SortStableFunc(cands, func(a, b *policy.ColocSet) int {
		if a.CoreUtil != b.CoreUtil {
			if a.CoreUtil > b.CoreUtil {
				return -1
			}
			return 1
		}
		return a.ID - b.ID
	})
	nfree := 0
	for _, f := range free {
		nfree += len(f)
	}
	// The reserve is at most a quarter of the cluster, and none while
	// nothing runs (a job must never wait for nothing).
	reserve := min(p.a.ReserveGPUs, st.Nodes*st.GPUsPerNode/4)
	if len(st.Sets) == 0 {
		reserve = 0
	}
	memo := map[memoKey]bool{}
	used, first, left := make([]bool, len(cands)), 0, len(cands)
	for _, v := range st.Waiting() {
		if left == 0 && nfree == 0 {
			break // nothing left to place on
		}
		placed := false
		excl := policy.PackNode(free, v.Job.Key.Scale, st.GPUsPerNode)
		if v.Job.Priority <= 0 && nfree-v.Job.Key.Scale < reserve {
			excl = -1 // the reserve is for high-priority jobs
		}
		for ci := first; ci < len(cands) && v.Job.Priority <= 0; ci++ { // high priority: exclusive (Sec. 4.2)
			s := cands[ci]
			if used[ci] || len(s.GPUs) != v.Job.Key.Scale || slices.Contains(p.tried[v.Job.ID], s.ID) {
				continue
			}
			// Algorithm 2 lines 7-9: free memory after the members' peaks.
			if (100-s.MemPeak)/100*st.GPUMemGiB*float64(len(s.GPUs)) < v.Job.MemGiB*float64(len(s.GPUs)) {
				continue
			}
			mk := memoKey{v.Job.Key, s.ID}
			nd := v.Job.Deadline == policy.NoDeadline && excl < 0
			if nd {
				if ok, seen := memo[mk]; seen && !ok {
					continue
				}
			}
			ok := p.fits(st, v, s, excl >= 0)
			if nd {
				memo[mk] = ok
			}
			if ok {
				d.Actions = append(d.Actions, policy.ColocAction{Kind: policy.ColocJoin, Job: v.Job.ID, Set: s.ID, Observe: true})
				used[ci], left = true, left-1
				for first < len(cands) && used[first] {
					first++
				}
				p.pending[s.ID] = v.Job.ID
				placed = true
				break
			}
		}
		if placed || excl < 0 {
			continue
		}
		gpus := policy.Take(free, excl, v.Job.Key.Scale)
		nfree -= len(gpus)
		d.Actions = append(d.Actions, policy.ColocAction{Kind: policy.ColocStart, Job: v.Job.ID, Node: excl, GPUs: gpus})
	}
	return d
}

// holdsPriority reports whether a member of s is a high-priority job: the
// paper's high-priority jobs "require immediate, exclusive resource
// allocation" (Sec. 4.2), so no job joins them.
func holdsPriority(st *policy.ColocState, s *policy.ColocSet) bool {
	for _, id := range s.Jobs {
		if v := st.View(id); v != nil && v.Job.Priority > 0 {
			return true
		}
	}
	return false
}

type memoKey struct {
	k   gavel.Key
	set int
}

// fits is lines 6-10 with eq. 1: the predicted JCT of every job on s with
// v meets its deadline and, when v could instead run alone (alone), the
// weighted energy/time cost of sharing is no worse than running alone.
func (p *Policy) fits(st *policy.ColocState, v *policy.ColocView, s *policy.ColocSet, alone bool) bool {
	members, keys := p.mbuf[:0], p.kbuf[:0]
	defer func() { p.mbuf, p.kbuf = members[:0], keys[:0] }()
	for _, id := range s.Jobs {
		m := st.View(id)
		members = append(members, m)
		keys = append(keys, m.Job.Key)
	}
	nBefore := len(members)
	members = append(members, v)
	keys = append(keys, v.Job.Key)
	mk := memoKey{v.Job.Key, s.ID}
	after, ok := p.after[mk]
	if !ok {
		after = p.h.Predict(keys)
		p.after[mk] = after
	}
	for i, m := range members {
		if !meets(m, st.Now, after[i]) {
			return false
		}
	}
	if !alone {
		return true
	}
	before, ok := p.before[s.ID]
	if !ok {
		before = p.h.Predict(keys[:nBefore])
		p.before[s.ID] = before
	}
	// Eq. 1 relative to running v alone: energy of the set's GPUs (and
	// its share of the server) until its last job ends, plus v's own GPUs
	// when alone; average time per epoch of the affected jobs.
	pw := st.Power
	n := float64(len(s.GPUs))
	share := n / float64(st.GPUsPerNode)
	setW := func(core float64, jobs int) hw.Watts {
		return hw.Watts(n)*pw.GPU(core) + hw.Watts(share)*pw.Server(pw.CPUPerJobPct*float64(jobs)*share)
	}
	var core float64
	var tAfter, tBefore, tpeA, tpeB float64
	for i, m := range members {
		rem := m.Job.Steps - m.Done
		tA := rem / (m.Job.IsoRate * after[i])
		tAfter = math.Max(tAfter, tA)
		tpeA += m.Job.EpochSteps / (m.Job.IsoRate * after[i])
		if i < len(before) {
			core += m.Job.CoreAvg
			tB := rem / (m.Job.IsoRate * before[i])
			tBefore = math.Max(tBefore, tB)
			tpeB += m.Job.EpochSteps / (m.Job.IsoRate * before[i])
		}
	}
	tv := (v.Job.Steps - v.Done) / v.Job.IsoRate
	tpeB += v.Job.EpochSteps / v.Job.IsoRate
	eShared := float64(setW(math.Min(core+v.Job.CoreAvg, 100), len(members))) * tAfter
	eAlone := float64(setW(math.Min(core, 100), len(members)-1))*tBefore + float64(setW(v.Job.CoreAvg, 1))*tv
	cost := p.a.Alpha*eShared/eAlone + (1-p.a.Alpha)*tpeA/tpeB
	return cost <= 1
}
