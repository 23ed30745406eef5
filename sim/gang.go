package sim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// GangResult is what happened to one gang job (the pods of one
// job.Task.Gang): a gang is one job, its pods start and end together.
type GangResult struct {
	Name string
	Pods int
	// GPUMilli is the milli-GPU of all its pods together.
	GPUMilli int64
	// Submit is when its last pod arrived (the gang is whole then);
	// Start and End are -1 when it never started or ended.
	Submit, Start, End job.Time
	// Energy is the dynamic energy attributed to its pods.
	Energy hw.Joules
	// FragWait is the time the whole gang waited while the powered nodes
	// had at least its GPU milli free in all, but not placeable as a
	// gang: the part of its wait that fragmentation, not a lack of free
	// GPUs, caused.
	FragWait job.Time
}

// gang is the engine's record of one gang.
type gang struct {
	name     string
	size     int
	pods     []int // task indices, in task order
	arrived  int
	need     int64 // milli-GPU of all pods
	started  bool
	fragFrom job.Time // -1: not in a fragmentation wait now
	frag     job.Time
}

// gangBook holds a run's gangs.
type gangBook struct {
	list    []gang // by name
	of      []int  // gang index of each task, -1 for tasks of their own; nil without gangs
	waiting []int  // gangs whole and not started, by name
}

// CheckGangs checks the gangs of tasks as a run does before it starts:
// pods that agree on their gang's size, as many pods as that size, each
// pod fitting some node of c when it is idle, and no gang needing more
// GPUs than c has. The error names the gang and the pod.
func CheckGangs(tasks []job.Task, c *cluster.Cluster) error {
	var b gangBook
	return b.init(tasks, c, Replay)
}

// init finds the gangs of tasks and checks them (CheckGangs). Gangs need
// replay mode.
func (b *gangBook) init(tasks []job.Task, c *cluster.Cluster, mode Mode) error {
	byName := map[string]int{}
	for i := range tasks {
		t := &tasks[i]
		if t.Gang == "" {
			if t.GangSize != 0 {
				return fmt.Errorf("sim: task %d (%s): gang_size %d without a gang", t.ID, t.Name, t.GangSize)
			}
			continue
		}
		if mode != Replay {
			return fmt.Errorf("sim: task %d (%s) is a pod of gang %s: gangs need replay mode", t.ID, t.Name, t.Gang)
		}
		if _, ok := byName[t.Gang]; !ok {
			byName[t.Gang] = len(b.list)
			b.list = append(b.list, gang{name: t.Gang, size: t.GangSize, fragFrom: -1})
		}
		g := &b.list[byName[t.Gang]]
		if t.GangSize != g.size {
			first := &tasks[g.pods[0]]
			return fmt.Errorf("sim: gang %s: pod %s says gang_size %d, pod %s says %d", t.Gang, first.Name, g.size, t.Name, t.GangSize)
		}
		if !fitsSomeNode(&t.Demand, c) {
			return fmt.Errorf("sim: gang %s: pod %s (%d GPUs, %d milli-CPU, %d MiB) fits on no node of the cluster even when it is idle", t.Gang, t.Name, t.GPUCount, t.CPUMilli, t.MemMiB)
		}
		g.pods = append(g.pods, i)
		g.need += t.TotalGPUMilli()
	}
	if len(b.list) == 0 {
		return nil
	}
	slices.SortFunc(b.list, func(x, y gang) int { return cmp.Compare(x.name, y.name) })
	b.of = make([]int, len(tasks))
	for i := range b.of {
		b.of[i] = -1
	}
	for gi := range b.list {
		g := &b.list[gi]
		if g.size < 1 || len(g.pods) != g.size {
			return fmt.Errorf("sim: gang %s: gang_size %d but %d pods", g.name, g.size, len(g.pods))
		}
		if g.need > c.TotalGPUMilli {
			return fmt.Errorf("sim: gang %s: %d pods need %.3g GPUs in all, more than the cluster's %.3g", g.name, g.size,
				float64(g.need)/job.MilliPerGPU, float64(c.TotalGPUMilli)/job.MilliPerGPU)
		}
		for _, ti := range g.pods {
			b.of[ti] = gi
		}
	}
	return nil
}

// fitsSomeNode reports whether d fits on some node of c with nothing on it.
func fitsSomeNode(d *job.Demand, c *cluster.Cluster) bool {
	for _, n := range c.Nodes {
		if ok, _ := cluster.FitsWhenOn(d, n.IdleCopy()); ok {
			return true
		}
	}
	return false
}

// arrive counts the arrival of task ti; a gang whose pods have all
// arrived starts waiting.
func (b *gangBook) arrive(ti int) {
	if b.of == nil || b.of[ti] < 0 {
		return
	}
	gi := b.of[ti]
	b.list[gi].arrived++
	if b.list[gi].arrived == b.list[gi].size {
		i, _ := slices.BinarySearch(b.waiting, gi)
		b.waiting = slices.Insert(b.waiting, i, gi)
	}
}

// settle updates the fragmentation waits after a time step: a waiting
// gang is in one while the powered nodes' free milli-GPU covers its need.
// Without power-down (allOn) every node is on and the cluster's totals
// give that sum at once.
func (b *gangBook) settle(c *cluster.Cluster, now job.Time, allOn bool) {
	if len(b.waiting) == 0 {
		return
	}
	free := c.TotalGPUMilli - c.AllocGPUMilli
	if !allOn {
		free = 0
		for _, n := range c.Nodes {
			if n.State == cluster.On {
				free += n.FreeGPUMilli()
			}
		}
	}
	for _, gi := range b.waiting {
		g := &b.list[gi]
		switch frag := free >= g.need; {
		case frag && g.fragFrom < 0:
			g.fragFrom = now
		case !frag && g.fragFrom >= 0:
			g.frag += now - g.fragFrom
			g.fragFrom = -1
		}
	}
}

// startGang applies a policy.StartGang: every pod of the gang, each
// checked as a lone start is, then one end for all of them, when the
// slowest would finish. A gang start that names other pods, or a pod
// that does not fit, fails the run: a policy bug is an error.
func (e *Engine) startGang(a policy.StartGang) (bool, error) {
	b := &e.gangs
	gi, ok := slices.BinarySearchFunc(b.list, a.Gang, func(g gang, name string) int { return cmp.Compare(g.name, name) })
	if !ok {
		return false, fmt.Errorf("%w: start of gang %q, which no task belongs to", ErrPolicy, a.Gang)
	}
	g := &b.list[gi]
	if g.started || g.arrived < g.size {
		return false, fmt.Errorf("%w: start of gang %s: started already or not all %d pods have arrived", ErrPolicy, g.name, g.size)
	}
	if len(a.Pods) != g.size {
		return false, fmt.Errorf("%w: start of gang %s with %d pods, want all %d", ErrPolicy, g.name, len(a.Pods), g.size)
	}
	for i, s := range a.Pods {
		ti, ok := e.byID[s.Task]
		if !ok || b.of[ti] != gi {
			return false, fmt.Errorf("%w: start of gang %s lists task %d, not one of its pods", ErrPolicy, g.name, s.Task)
		}
		for _, r := range a.Pods[:i] {
			if r.Task == s.Task {
				return false, fmt.Errorf("%w: start of gang %s lists task %d twice", ErrPolicy, g.name, s.Task)
			}
		}
	}
	var d job.Time
	e.gangStart = &d
	defer func() { e.gangStart = nil }()
	for _, s := range a.Pods {
		if _, err := e.apply(s); err != nil {
			return false, fmt.Errorf("gang %s: %w", g.name, err)
		}
	}
	if e.opt.Mode == Replay {
		for _, ti := range g.pods {
			e.k.Post(e.k.Now()+d, taskEvent{task: ti})
			e.taskEvents++
		}
	}
	g.started = true
	if g.fragFrom >= 0 {
		g.frag += e.k.Now() - g.fragFrom
		g.fragFrom = -1
	}
	if i, ok := slices.BinarySearch(b.waiting, gi); ok {
		b.waiting = slices.Delete(b.waiting, i, i+1)
	}
	return true, nil
}

// results are the gangs' outcomes at the end of a run at time end (a
// fragmentation wait still open is closed there).
func (b *gangBook) results(tasks []TaskResult, end job.Time) []GangResult {
	if len(b.list) == 0 {
		return nil
	}
	out := make([]GangResult, len(b.list))
	for gi := range b.list {
		g := &b.list[gi]
		r := GangResult{Name: g.name, Pods: g.size, GPUMilli: g.need, Submit: -1, Start: -1, End: -1, FragWait: g.frag}
		if g.fragFrom >= 0 {
			r.FragWait += end - g.fragFrom
		}
		started, ended := true, true
		for _, ti := range g.pods {
			t := &tasks[ti]
			r.Submit = max(r.Submit, t.Submit)
			r.Energy += t.Energy
			r.Start, r.End = max(r.Start, t.Start), max(r.End, t.End)
			started, ended = started && t.Start >= 0, ended && t.End >= 0
		}
		if !started {
			r.Start = -1
		}
		if !ended {
			r.End = -1
		}
		out[gi] = r
	}
	return out
}

// wakeForGang is wake for the gang of queued pod t, once per call (seen):
// when all its pods have arrived, they are reserved, largest first (ties
// by name), on copies of the powered nodes and in the room of booting
// nodes, nodes taken by name; each pod left without room wakes a node
// (wakeFor), whose room then holds it. A gang whose pods each fit
// somewhere but not all at once so wakes the nodes it lacks.
func (e *Engine) wakeForGang(t *job.Task, room map[cluster.NodeID]*cluster.Node, waker policy.Waker, seen map[string]bool) error {
	if seen[t.Gang] {
		return nil
	}
	seen[t.Gang] = true
	g := &e.gangs.list[e.gangs.of[e.byID[t.ID]]]
	if g.arrived < g.size {
		return nil
	}
	pods := make([]int, len(g.pods))
	copy(pods, g.pods)
	for _, ti := range pods {
		if e.wokeAt[ti] == e.handled {
			return nil // its last wake changed nothing the scheduler needed
		}
	}
	slices.SortFunc(pods, func(a, b int) int {
		x, y := &e.tasks[a], &e.tasks[b]
		return cmp.Or(cmp.Compare(y.TotalGPUMilli(), x.TotalGPUMilli()), cmp.Compare(x.Name, y.Name))
	})
	if e.byName == nil {
		e.byName = make([]int, len(e.c.Nodes))
		for i := range e.byName {
			e.byName[i] = i
		}
		slices.SortFunc(e.byName, func(a, b int) int { return cmp.Compare(e.c.Nodes[a].Name, e.c.Nodes[b].Name) })
	}
	scratch := map[cluster.NodeID]*cluster.Node{}
	for _, ni := range e.byName {
		if n := e.c.Nodes[ni]; n.State == cluster.On {
			c := *n
			c.GPUFree = slices.Clone(n.GPUFree)
			scratch[n.ID] = &c
		}
	}
	for _, ti := range pods {
		p := &e.tasks[ti]
		covered := false
		for _, ni := range e.byName {
			id := cluster.NodeID(ni)
			if s := scratch[id]; s != nil && reserve(&p.Demand, s) {
				covered = true
				break
			}
			if r := room[id]; r != nil && reserve(&p.Demand, r) {
				covered = true
				break
			}
		}
		if !covered {
			if err := e.wakeFor(p, ti, room, waker); err != nil {
				return err
			}
		}
	}
	return nil
}
