package policy

import (
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// HPCJob is a rigid HPC job (VAHRM paper Section III-A): it asks for Nodes
// whole nodes exclusively and runs for Runtime, which the scheduler knows in
// advance (the paper's assumption).
type HPCJob struct {
	ID      int
	Submit  job.Time
	Runtime job.Time
	Nodes   int
	// Type indexes the job types of the power tables (power.HPCNodes).
	Type int
	// FirstRun marks a job whose power profile is not known yet.
	FirstRun bool
}

// HPCRunning is a running job.
type HPCRunning struct {
	Job        *HPCJob
	Start, End job.Time
	Nodes      []int
	// Pred is the predicted power of the job's nodes when it started.
	Pred hw.Watts
}

// HPCState is what an HPC scheduler sees at a scheduling event.
type HPCState struct {
	Now job.Time
	// Queue holds the waiting jobs in submission order.
	Queue []*HPCJob
	// Running holds the running jobs in start order.
	Running []*HPCRunning
	// Free[n] says whether node n is free; FreeCount counts them.
	Free      []bool
	FreeCount int
	// PowerLimit is the system power constraint (PCR x system TDP).
	PowerLimit power.Limit
	// Predicted is the predicted system power now: idle nodes at their idle
	// power, running jobs at the power predicted when they started.
	Predicted hw.Watts
	IdleNode  hw.Watts
	NodeTDP   hw.Watts
	Rand      *rand.Rand
	// DomainPred is the predicted power of each power domain now (nodes
	// as in Predicted; nil: no domains). Read only: a scheduler that
	// starts several jobs in one call accounts them on a Clone.
	DomainPred *power.DomainLoad
}

// HPCDomainChanges is what starting a job on nodes, predicted at nodeW
// each (same order), adds to the nodes' predicted power over idle.
func HPCDomainChanges(nodes []int, nodeW []hw.Watts, idle hw.Watts) []power.NodeWatts {
	ch := make([]power.NodeWatts, len(nodes))
	for i, n := range nodes {
		ch[i] = power.NodeWatts{Node: n, W: nodeW[i] - idle}
	}
	return ch
}

// HPCStart starts a queued job on the listed free nodes. Pred is the
// predicted power of those nodes running the job; the engine refuses a start
// that would push the predicted system power above the limit. Profile marks
// a first-run job that is profiled while it runs (its run time grows by the
// engine's profiling overhead).
type HPCStart struct {
	Job     int
	Nodes   []int
	Pred    hw.Watts
	Profile bool
	// NodePred is the predicted power of each listed node (Pred is their
	// sum); nil splits Pred evenly. The engine checks the power domains
	// (HPCState.DomainPred) with it.
	NodePred []hw.Watts
}

// HPCDeps is what HPC policies are built with.
type HPCDeps struct {
	// Pred holds the per-device power predictions: a fitted model's, or the
	// truth for an ideal predictor.
	Pred *power.HPCNodes
}

// HPCScheduler decides at each HPC scheduling event. The starts it returns
// are applied in order; a scheduler must account within one call for the
// nodes and power its earlier starts take.
type HPCScheduler interface {
	ScheduleHPC(st *HPCState) []HPCStart
}

// NodePowerTable is what HPC policies predict node power with.
type NodePowerTable interface {
	Nodes() int
	NodeW(n, k int) hw.Watts
}

// NodesByPower returns, for each of types job types, the nodes sorted by
// ascending predicted power for that type (ties by node number), and the
// lowest predicted node power for each type.
func NodesByPower(t NodePowerTable, types int) (order [][]int, minW []hw.Watts) {
	order, minW = make([][]int, types), make([]hw.Watts, types)
	for k := range order {
		idx := make([]int, t.Nodes())
		w := make([]hw.Watts, t.Nodes())
		for n := range idx {
			idx[n], w[n] = n, t.NodeW(n, k)
		}
		sortByWeight(idx, w)
		order[k], minW[k] = idx, w[idx[0]]
	}
	return order, minW
}

func sortByWeight(idx []int, w []hw.Watts) {
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case w[a] < w[b]:
			return -1
		case w[a] > w[b]:
			return 1
		}
		return a - b
	})
}

// PickCheapest takes the first k free nodes of order (a NodesByPower row),
// marking them used in free and returning them, or nil if fewer are free.
func PickCheapest(order []int, free []bool, k int, buf []int) []int {
	buf = buf[:0]
	for _, n := range order {
		if len(buf) == k {
			break
		}
		if free[n] {
			buf = append(buf, n)
		}
	}
	if len(buf) < k {
		return nil
	}
	for _, n := range buf {
		free[n] = false
	}
	return buf
}

// PickCheapestWithin is PickCheapest under power domains: it takes free
// nodes in order, skipping a node whose predicted power nodeW(n) (over
// idle) would take a domain on its path over its limit given the nodes
// already taken (dom: the domains' predicted power now, not changed; nil:
// PickCheapest). So a job goes to the cheapest nodes its domains can hold.
func PickCheapestWithin(order []int, free []bool, k int, buf []int, dom *power.DomainLoad, nodeW func(n int) hw.Watts, idle hw.Watts) []int {
	if dom == nil {
		return PickCheapest(order, free, k, buf)
	}
	l := dom.Clone()
	buf = buf[:0]
	for _, n := range order {
		if len(buf) == k {
			break
		}
		if !free[n] {
			continue
		}
		if _, ok := l.Fits(n, nodeW(n)-idle); !ok {
			continue
		}
		l.Add(n, nodeW(n)-idle)
		buf = append(buf, n)
	}
	if len(buf) < k {
		return nil
	}
	for _, n := range buf {
		free[n] = false
	}
	return buf
}

// PickRandomWithin is PickRandom under power domains: the free nodes in a
// uniformly random order (r), taken in that order, skipping a node whose
// predicted power nodeW(n) (over idle) would take a domain on its path
// over its limit given the nodes already taken (dom is not changed; nil:
// PickRandom, with its draws).
func PickRandomWithin(r *rand.Rand, free []bool, k int, buf []int, dom *power.DomainLoad, nodeW func(n int) hw.Watts, idle hw.Watts) []int {
	if dom == nil {
		return PickRandom(r, free, k, buf)
	}
	var order []int
	for n, f := range free {
		if f {
			order = append(order, n)
		}
	}
	if len(order) < k {
		return nil
	}
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return PickCheapestWithin(order, free, k, buf, dom, nodeW, idle)
}

// PickRandom takes k free nodes uniformly at random (r), marking them used.
func PickRandom(r *rand.Rand, free []bool, k int, buf []int) []int {
	buf = buf[:0]
	for n, f := range free {
		if f {
			buf = append(buf, n)
		}
	}
	if len(buf) < k {
		return nil
	}
	for i := 0; i < k; i++ {
		j := i + r.IntN(len(buf)-i)
		buf[i], buf[j] = buf[j], buf[i]
	}
	buf = buf[:k]
	for _, n := range buf {
		free[n] = false
	}
	return buf
}
