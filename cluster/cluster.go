// Package cluster models the nodes of a GPU cluster: CPUs, memory and GPUs
// shared at milli-GPU granularity (FGD/PWR papers), node power states, and the
// allocations of tasks, with invariants that fail loudly when violated.
package cluster

import (
	"errors"
	"fmt"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// NodeID indexes a node in its cluster (0..len-1, in the order nodes were added).
type NodeID int

// PowerState is a node's power state.
type PowerState int

// Power states.
const (
	On PowerState = iota
	Off
	Booting
	ShuttingDown
)

func (s PowerState) String() string {
	switch s {
	case On:
		return "on"
	case Off:
		return "off"
	case Booting:
		return "booting"
	case ShuttingDown:
		return "shutting-down"
	}
	return fmt.Sprintf("PowerState(%d)", int(s))
}

// Node is one machine. Fields other than the capacities change only through
// Cluster methods.
type Node struct {
	ID       NodeID
	Name     string
	GPUModel string       // model name as the trace spells it ("G2"); empty without GPUs
	GPU      *hw.GPUModel // resolved catalog entry; nil without GPUs
	CPU      *hw.CPUModel // resolved catalog entry
	CPUMilli int64        // vCPU capacity in milli
	MemMiB   int64        // memory capacity

	FreeCPUMilli int64
	FreeMemMiB   int64
	// GPUFree is the free milli-GPU of each GPU (1000 = idle), by device index.
	GPUFree []int64
	State   PowerState
	// Version increases on every change of the node's allocations or state.
	Version uint64
	// Affinity counts the GPU tasks on the node by kind: index 0 shared-GPU
	// tasks, index k tasks of k whole GPUs (GpuClustering reads it).
	Affinity [9]int32
	// Tasks is the number of tasks placed on the node.
	Tasks int
	// MIG holds the node's GPUs in MIG mode, by device index (nil: the
	// node's GPUs are time-sliced). A node is in MIG mode as a whole:
	// every GPU of it is partitioned, so a task asking for a share or
	// whole GPUs never lands on it, and a task asking for a MIG instance
	// lands nowhere else. A MIG GPU's GPUFree is 1000 less the shares of
	// its busy instances' tasks, so capacity totals count them.
	MIG []*MIGGPU
}

// IdleCopy is a copy of n with nothing allocated (for what-if questions
// such as "could this task ever start here?").
func (n *Node) IdleCopy() *Node {
	c := *n
	c.FreeCPUMilli, c.FreeMemMiB, c.Tasks, c.Affinity = n.CPUMilli, n.MemMiB, 0, [9]int32{}
	c.GPUFree = make([]int64, len(n.GPUFree))
	for i := range c.GPUFree {
		c.GPUFree[i] = job.MilliPerGPU
	}
	if n.MIG != nil {
		c.MIG = make([]*MIGGPU, len(n.MIG))
		for i, m := range n.MIG {
			c.MIG[i] = m.idle()
		}
	}
	return &c
}

// NumGPUs is the number of GPUs on the node.
func (n *Node) NumGPUs() int { return len(n.GPUFree) }

// FreeGPUMilli is the node's free milli-GPU summed over its GPUs.
func (n *Node) FreeGPUMilli() int64 {
	var s int64
	for _, f := range n.GPUFree {
		s += f
	}
	return s
}

// IdleGPUs counts the GPUs with nothing allocated.
func (n *Node) IdleGPUs() int {
	k := 0
	for _, f := range n.GPUFree {
		if f == job.MilliPerGPU {
			k++
		}
	}
	return k
}

// Used reports whether anything is allocated on the node.
func (n *Node) Used() bool { return n.Tasks > 0 }

// Fits reports whether demand d fits on node n now, with the reason when not.
// A shared task needs one GPU with at least its milli free; a whole-GPU task
// needs GPUCount idle GPUs (the FGD simulator's rule).
func Fits(d *job.Demand, n *Node) (bool, string) {
	if n.State != On {
		return false, "node not powered on"
	}
	return FitsWhenOn(d, n)
}

// FitsWhenOn is Fits as if the node were powered on: whether waking it
// would let the demand in.
func FitsWhenOn(d *job.Demand, n *Node) (bool, string) {
	if d.CPUMilli > n.FreeCPUMilli {
		return false, "insufficient cpu"
	}
	if d.MemMiB > n.FreeMemMiB {
		return false, "insufficient memory"
	}
	if d.GPUCount == 0 {
		return true, ""
	}
	if len(n.GPUFree) == 0 {
		return false, "no GPUs"
	}
	if !d.AcceptsGPU(n.GPUModel) {
		return false, "GPU model not accepted"
	}
	if d.MIG() {
		if n.MIG == nil {
			return false, "no MIG GPUs"
		}
		if _, _, ok := FirstMIG(d, n); !ok {
			return false, "no free MIG instance of " + d.MIGProfile
		}
		return true, ""
	}
	if n.MIG != nil {
		return false, "GPUs in MIG mode"
	}
	if d.Shared() {
		for _, f := range n.GPUFree {
			if f >= d.GPUMilli {
				return true, ""
			}
		}
		return false, "no GPU with enough free share"
	}
	if n.IdleGPUs() < d.GPUCount {
		return false, "not enough idle GPUs"
	}
	return true, ""
}

// BestFitGPUs picks the GPUs for d on n: for a shared task the GPU with the
// least free milli that still fits (lowest index among ties), for whole GPUs
// the idle GPUs with the lowest indices. This is the FGD simulator's "best"
// GPU selection. It returns nil when d fits no GPU or asks for none.
func BestFitGPUs(d *job.Demand, n *Node) []int {
	if d.GPUCount == 0 {
		return nil
	}
	if d.Shared() {
		best := -1
		for i, f := range n.GPUFree {
			if f >= d.GPUMilli && (best < 0 || f < n.GPUFree[best]) {
				best = i
			}
		}
		if best < 0 {
			return nil
		}
		return []int{best}
	}
	return FirstIdleGPUs(n, d.GPUCount)
}

// FirstIdleGPUs returns the k idle GPUs with the lowest indices, or nil.
func FirstIdleGPUs(n *Node, k int) []int {
	out := make([]int, 0, k)
	for i, f := range n.GPUFree {
		if len(out) == k {
			break
		}
		if f == job.MilliPerGPU {
			out = append(out, i)
		}
	}
	if len(out) < k {
		return nil
	}
	return out
}

// Placement is where one task runs.
type Placement struct {
	Task     job.ID
	Node     NodeID
	GPUs     []int
	GPUMilli int64 // per GPU
	CPUMilli int64
	MemMiB   int64
	// MIG is set for a task holding a MIG instance: of profile
	// MIG.Profile at memory slice MIG.Start on GPU GPUs[0].
	MIG *MIGSlot
}

// Cluster is a set of nodes and the placements on them.
type Cluster struct {
	Nodes      []*Node
	placements map[job.ID]*Placement
	// TotalGPUMilli and AllocGPUMilli are cluster-wide GPU capacity and allocation.
	TotalGPUMilli int64
	AllocGPUMilli int64
	TotalCPUMilli int64
	AllocCPUMilli int64

	// changes records the node changes (one entry per Version bump),
	// oldest first; changes[0] is change number changeBase. Only the
	// latest changes are kept (ChangedSince).
	changes    []NodeChange
	changeBase uint64
}

// NodeSpec describes a node to add.
type NodeSpec struct {
	Name     string
	CPUMilli int64
	MemMiB   int64
	GPUs     int
	GPUModel string // empty without GPUs
	CPUModel string // catalog name; empty means hw.DefaultCPU
	// MIG, when set, puts every GPU of the node in MIG mode.
	MIG *MIGSpec
}

// MIGSpec is a node's MIG mode: a static layout per GPU, or dynamic MIG
// (instances created for the tasks that ask for them).
type MIGSpec struct {
	// Dynamic: the GPUs start empty and a task's instance is created at
	// a legal free start when it starts and destroyed when it ends.
	Dynamic bool
	// Layouts is the static layout of each GPU (len = GPUs), checked
	// against the geometry's placement rules. Empty when Dynamic.
	Layouts [][]MIGSlot
}

// New builds a cluster, resolving models in cat. All nodes start powered on.
func New(cat *hw.Catalog, specs []NodeSpec) (*Cluster, error) {
	c := &Cluster{placements: map[job.ID]*Placement{}}
	for i, s := range specs {
		if s.CPUMilli <= 0 || s.MemMiB < 0 || s.GPUs < 0 {
			return nil, fmt.Errorf("node %d (%s): cpu %d, memory %d, gpus %d: capacities must be positive", i, s.Name, s.CPUMilli, s.MemMiB, s.GPUs)
		}
		n := &Node{ID: NodeID(i), Name: s.Name, CPUMilli: s.CPUMilli, MemMiB: s.MemMiB,
			FreeCPUMilli: s.CPUMilli, FreeMemMiB: s.MemMiB, GPUModel: s.GPUModel}
		if s.GPUs > 0 {
			if s.GPUModel == "" {
				return nil, fmt.Errorf("node %d (%s): %d GPUs without a model", i, s.Name, s.GPUs)
			}
			g, err := cat.GPU(s.GPUModel)
			if err != nil {
				return nil, fmt.Errorf("node %d (%s): %w", i, s.Name, err)
			}
			n.GPU = &g
			n.GPUFree = make([]int64, s.GPUs)
			for k := range n.GPUFree {
				n.GPUFree[k] = job.MilliPerGPU
			}
			if s.MIG != nil {
				if n.MIG, err = newMIG(&g, s.GPUs, s.MIG); err != nil {
					return nil, fmt.Errorf("node %d (%s): %w", i, s.Name, err)
				}
			}
		} else if s.MIG != nil {
			return nil, fmt.Errorf("node %d (%s): MIG mode without GPUs", i, s.Name)
		}
		cpuName := s.CPUModel
		if cpuName == "" {
			cpuName = hw.DefaultCPU
		}
		p, err := cat.CPU(cpuName)
		if err != nil {
			return nil, fmt.Errorf("node %d (%s): %w", i, s.Name, err)
		}
		n.CPU = &p
		c.Nodes = append(c.Nodes, n)
		c.TotalGPUMilli += int64(s.GPUs) * job.MilliPerGPU
		c.TotalCPUMilli += s.CPUMilli
	}
	return c, nil
}

// Placement returns where task id runs, if it runs.
func (c *Cluster) Placement(id job.ID) (Placement, bool) {
	p, ok := c.placements[id]
	if !ok {
		return Placement{}, false
	}
	return *p, true
}

// NumPlaced is the number of tasks placed.
func (c *Cluster) NumPlaced() int { return len(c.placements) }

// ErrInvalid marks an allocation a policy should never have asked for.
var ErrInvalid = errors.New("invalid allocation")

// Allocate places t on node id using the listed GPUs, after checking every
// constraint; a violation is an error wrapping ErrInvalid.
func (c *Cluster) Allocate(t *job.Task, id NodeID, gpus []int) error {
	if int(id) < 0 || int(id) >= len(c.Nodes) {
		return fmt.Errorf("%w: task %d: node %d does not exist", ErrInvalid, t.ID, id)
	}
	if _, dup := c.placements[t.ID]; dup {
		return fmt.Errorf("%w: task %d is already placed", ErrInvalid, t.ID)
	}
	n := c.Nodes[id]
	if ok, why := Fits(&t.Demand, n); !ok {
		return fmt.Errorf("%w: task %d on node %s: %s", ErrInvalid, t.ID, n.Name, why)
	}
	if len(gpus) != t.GPUCount {
		return fmt.Errorf("%w: task %d asks for %d GPUs, placement lists %d", ErrInvalid, t.ID, t.GPUCount, len(gpus))
	}
	if t.MIG() {
		// The lowest start the GPU offers (FirstMIG's rule on one GPU).
		if gpus[0] < 0 || gpus[0] >= len(n.MIG) {
			return fmt.Errorf("%w: task %d: GPU index %d out of range on node %s", ErrInvalid, t.ID, gpus[0], n.Name)
		}
		starts := n.MIG[gpus[0]].Starts(t.MIGProfile)
		if len(starts) == 0 {
			return fmt.Errorf("%w: task %d: GPU %d on node %s has no free %s instance", ErrInvalid, t.ID, gpus[0], n.Name, t.MIGProfile)
		}
		return c.AllocateMIG(t, id, gpus[0], starts[0])
	}
	for i, g := range gpus {
		if g < 0 || g >= len(n.GPUFree) {
			return fmt.Errorf("%w: task %d: GPU index %d out of range on node %s", ErrInvalid, t.ID, g, n.Name)
		}
		for _, h := range gpus[:i] {
			if h == g {
				return fmt.Errorf("%w: task %d: GPU %d listed twice", ErrInvalid, t.ID, g)
			}
		}
		if t.Shared() && n.GPUFree[g] < t.GPUMilli || !t.Shared() && n.GPUFree[g] != job.MilliPerGPU {
			return fmt.Errorf("%w: task %d: GPU %d on node %s has %d milli free, needs %d", ErrInvalid, t.ID, g, n.Name, n.GPUFree[g], t.GPUMilli)
		}
	}
	for _, g := range gpus {
		n.GPUFree[g] -= t.GPUMilli
	}
	n.FreeCPUMilli -= t.CPUMilli
	n.FreeMemMiB -= t.MemMiB
	if t.GPUCount > 0 {
		n.Affinity[affinityIndex(&t.Demand)]++
	}
	n.Tasks++
	c.touch(n, true)
	c.AllocGPUMilli += t.TotalGPUMilli()
	c.AllocCPUMilli += t.CPUMilli
	c.placements[t.ID] = &Placement{Task: t.ID, Node: id, GPUs: append([]int(nil), gpus...),
		GPUMilli: t.GPUMilli, CPUMilli: t.CPUMilli, MemMiB: t.MemMiB}
	return nil
}

// Release frees what task t holds.
func (c *Cluster) Release(t *job.Task) error {
	p, ok := c.placements[t.ID]
	if !ok {
		return fmt.Errorf("%w: release task %d: not placed", ErrInvalid, t.ID)
	}
	n := c.Nodes[p.Node]
	if p.MIG != nil {
		if err := n.MIG[p.GPUs[0]].Release(p.MIG.Start, t.ID); err != nil {
			return fmt.Errorf("release task %d on node %s: %w", t.ID, n.Name, err)
		}
	}
	for _, g := range p.GPUs {
		n.GPUFree[g] += p.GPUMilli
	}
	n.FreeCPUMilli += p.CPUMilli
	n.FreeMemMiB += p.MemMiB
	if len(p.GPUs) > 0 {
		n.Affinity[affinityIndex(&t.Demand)]--
	}
	n.Tasks--
	c.touch(n, false)
	c.AllocGPUMilli -= p.GPUMilli * int64(len(p.GPUs))
	c.AllocCPUMilli -= p.CPUMilli
	delete(c.placements, t.ID)
	return nil
}

// SetState changes a node's power state. Powering off a node with tasks is an error.
func (c *Cluster) SetState(id NodeID, s PowerState) error {
	if int(id) < 0 || int(id) >= len(c.Nodes) {
		return fmt.Errorf("%w: node %d does not exist", ErrInvalid, id)
	}
	n := c.Nodes[id]
	if (s == Off || s == ShuttingDown) && n.Tasks > 0 {
		return fmt.Errorf("%w: node %s has %d tasks and cannot power off", ErrInvalid, n.Name, n.Tasks)
	}
	n.State = s
	c.touch(n, false)
	return nil
}

// NodeChange is one change of a node's allocations or power state.
type NodeChange struct {
	Node NodeID
	// Took is set for an allocation: the node only lost free resources,
	// so a demand that did not fit on it before does not fit after.
	Took bool
}

// touch records a change of node n: its Version goes up and the change
// joins the record that ChangedSince reads. The record keeps between one
// and two times max(nodes, 512) of the latest changes: a reader further
// behind looks at every node, which costs no more than reading that many
// changes would.
func (c *Cluster) touch(n *Node, took bool) {
	n.Version++
	c.changes = append(c.changes, NodeChange{Node: n.ID, Took: took})
	if keep := max(len(c.Nodes), 512); len(c.changes) >= 2*keep {
		drop := len(c.changes) - keep
		c.changes = c.changes[:copy(c.changes, c.changes[drop:])]
		c.changeBase += uint64(drop)
	}
}

// ChangeMark is the number of node changes (allocations, releases, power
// state changes) so far: a mark to pass to ChangedSince later.
func (c *Cluster) ChangeMark() uint64 { return c.changeBase + uint64(len(c.changes)) }

// ChangedSince returns the node changes after mark (a ChangeMark),
// oldest first; ok is false when the cluster no longer keeps changes that
// old, and then any node may have changed. The slice is the cluster's
// own: read it before the next change.
func (c *Cluster) ChangedSince(mark uint64) (changes []NodeChange, ok bool) {
	if mark < c.changeBase || mark > c.ChangeMark() {
		return nil, false
	}
	return c.changes[mark-c.changeBase:], true
}

func affinityIndex(d *job.Demand) int {
	if d.Shared() {
		return 0
	}
	return d.GPUCount
}

// Check verifies the cluster's invariants: nothing over-allocated, free
// resources equal to capacity minus the placements, totals consistent.
func (c *Cluster) Check() error {
	cpu := make([]int64, len(c.Nodes))
	mem := make([]int64, len(c.Nodes))
	gpu := make([][]int64, len(c.Nodes))
	tasks := make([]int, len(c.Nodes))
	for i, n := range c.Nodes {
		gpu[i] = make([]int64, len(n.GPUFree))
	}
	var allocGPU, allocCPU int64
	for _, p := range c.placements {
		cpu[p.Node] += p.CPUMilli
		mem[p.Node] += p.MemMiB
		tasks[p.Node]++
		for _, g := range p.GPUs {
			gpu[p.Node][g] += p.GPUMilli
		}
		allocGPU += p.GPUMilli * int64(len(p.GPUs))
		allocCPU += p.CPUMilli
	}
	for i, n := range c.Nodes {
		if n.FreeCPUMilli < 0 || n.FreeCPUMilli != n.CPUMilli-cpu[i] {
			return fmt.Errorf("node %s: free cpu %d, capacity %d, placed %d", n.Name, n.FreeCPUMilli, n.CPUMilli, cpu[i])
		}
		if n.FreeMemMiB < 0 || n.FreeMemMiB != n.MemMiB-mem[i] {
			return fmt.Errorf("node %s: free memory %d, capacity %d, placed %d", n.Name, n.FreeMemMiB, n.MemMiB, mem[i])
		}
		if n.Tasks != tasks[i] {
			return fmt.Errorf("node %s: task count %d, placements %d", n.Name, n.Tasks, tasks[i])
		}
		for g, f := range n.GPUFree {
			if f < 0 || f > job.MilliPerGPU || f != job.MilliPerGPU-gpu[i][g] {
				return fmt.Errorf("node %s GPU %d: free %d, placed %d", n.Name, g, f, gpu[i][g])
			}
		}
	}
	if err := c.checkMIG(); err != nil {
		return err
	}
	if allocGPU != c.AllocGPUMilli || allocCPU != c.AllocCPUMilli {
		return fmt.Errorf("cluster totals: gpu %d (placements %d), cpu %d (placements %d)", c.AllocGPUMilli, allocGPU, c.AllocCPUMilli, allocCPU)
	}
	return nil
}
