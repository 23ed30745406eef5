package policy

import (
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// Waker is a Scheduler that also chooses which sleeping node to wake when
// the engine has decided that a queued task needs one (power-down: the
// task fits on no powered node). The engine decides that a node must wake
// and which sleeping nodes may (the task fits there once on, the power
// limit allows its boot); the Waker decides which of them.
type Waker interface {
	Scheduler
	// Wake returns the node to wake for t among asleep (powered-off,
	// empty nodes), or false to wake none.
	Wake(st *State, t *job.Task, asleep []*cluster.Node) (cluster.NodeID, bool)
}

var _ Waker = (*Online)(nil)

// Wake implements Waker: the node the Placer's filters and scorers rank
// best among the sleeping nodes, as if they were on.
func (o *Online) Wake(_ *State, t *job.Task, asleep []*cluster.Node) (cluster.NodeID, bool) {
	return o.Placer.PlaceAsleep(t, asleep)
}

// PlaceAsleep ranks sleeping nodes for t exactly as Place ranks powered
// ones (the same filters, scorers, normalisation over the candidates,
// weights and tie-break rank) with each node scored as if it were on, and
// returns the best. The nodes must carry their cluster IDs (the rank is
// indexed by ID). Nothing is cached, no power gate is applied (the engine
// checks a boot against the power limit) and no explanation is filled:
// a wake is rare and its node is placed on by Place once it is on.
func (p *Placer) PlaceAsleep(t *job.Task, asleep []*cluster.Node) (cluster.NodeID, bool) {
	var (
		ids []cluster.NodeID
		raw = make([][]int64, len(p.scorers))
	)
next:
	for _, sn := range asleep {
		n := sn.IdleCopy()
		n.State = cluster.On
		if ok, _ := cluster.Fits(&t.Demand, n); !ok {
			continue
		}
		for _, f := range p.filters {
			if ok, _ := f.Feasible(t, n); !ok {
				continue next
			}
		}
		ids = append(ids, sn.ID)
		for i, s := range p.scorers {
			raw[i] = append(raw[i], s.Scorer.Score(t, n))
		}
	}
	if len(ids) == 0 {
		return 0, false
	}
	total := make([]int64, len(ids))
	for i, s := range p.scorers {
		if nz, ok := s.Scorer.(Normalizer); ok {
			nz.Normalize(raw[i])
		}
		for k, v := range raw[i] {
			total[k] += s.Weight * v
		}
	}
	best := 0
	for k := 1; k < len(ids); k++ {
		if total[k] > total[best] || total[k] == total[best] && p.less(int(ids[k]), int(ids[best])) {
			best = k
		}
	}
	return ids[best], true
}
