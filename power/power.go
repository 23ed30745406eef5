// Package power estimates the electrical power of nodes (energy is
// integrated by the simulation's ledger, sim.Ledger).
package power

import (
	"fmt"
	"math"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// Breakdown is a node's power split by component.
type Breakdown struct {
	CPU hw.Watts
	GPU hw.Watts
}

// Total is CPU plus GPU power.
func (b Breakdown) Total() hw.Watts { return b.CPU + b.GPU }

// Model gives the power a node draws in its current state.
type Model interface {
	NodePower(n *cluster.Node) Breakdown
}

// PWR is the estimated power model of Lettich et al. (pwr-fgd Section II,
// eqs. 1-3): every GPU with any allocation draws its TDP, an idle GPU its idle
// power; a CPU socket with any allocated core draws its TDP, an idle socket
// its idle power, with 2 vCPU per physical core.
//
// Eq. 1 counts busy sockets as ceil(Ra/(2*ncores)) and idle sockets as
// floor(R/(2*ncores)). For nodes whose vCPU count is not a multiple of
// 2*ncores this loses part of a socket, so, as the public PWR plugin does,
// the node has ceil(cores/ncores) sockets, busy cores are total cores minus
// floor(free vCPU/2), and busy sockets are ceil(busy cores/ncores); for
// capacities that are a multiple of 2*ncores both readings agree.
type PWR struct{}

var _ Model = PWR{}

// NodePower implements Model.
func (PWR) NodePower(n *cluster.Node) Breakdown {
	return Breakdown{CPU: CPUPower(n.CPU, n.CPUMilli, n.FreeCPUMilli), GPU: GPUPower(n)}
}

// TDP is the node's power with every CPU socket and GPU busy: PWR's
// largest estimate, the node's share of a limit given as a fraction of TDP.
func TDP(n *cluster.Node) hw.Watts {
	var g hw.Watts
	if n.GPU != nil {
		g = hw.Watts(len(n.GPUFree)) * n.GPU.TDPW
	}
	return CPUPower(n.CPU, n.CPUMilli, 0) + g
}

// Idle is the node's power with nothing allocated: PWR's smallest
// estimate (every CPU socket and GPU at its idle power), what the node
// counts against a limit when empty.
func Idle(n *cluster.Node) hw.Watts {
	var g hw.Watts
	if n.GPU != nil {
		g = hw.Watts(len(n.GPUFree)) * n.GPU.IdleW
	}
	return CPUPower(n.CPU, n.CPUMilli, n.CPUMilli) + g
}

// GPUPower is eq. 2: TDP for each GPU with any allocation, idle power
// otherwise; a GPU model with a measured curve draws the curve's power at
// each GPU's allocated share instead.
//
// A node in MIG mode draws MIGGPUPower on each GPU.
func GPUPower(n *cluster.Node) hw.Watts {
	if n.GPU == nil {
		return 0
	}
	if n.MIG != nil {
		var w hw.Watts
		for _, m := range n.MIG {
			w += MIGGPUPower(n.GPU, m)
		}
		return w
	}
	if len(n.GPU.Curve) > 0 {
		var w hw.Watts
		for _, free := range n.GPUFree {
			w += n.GPU.At(float64(job.MilliPerGPU-free) / job.MilliPerGPU)
		}
		return w
	}
	idle := n.IdleGPUs()
	busy := len(n.GPUFree) - idle
	return hw.Watts(idle)*n.GPU.IdleW + hw.Watts(busy)*n.GPU.TDPW
}

// MIGGPUPower is the power of a GPU in MIG mode, a rule (the catalog holds
// no measured power per MIG instance; docs/policies/pwr.md#mig-aware-reading):
// with no busy instance the GPU draws its idle power, otherwise idle plus
// its dynamic range (TDP - idle) in proportion to the compute slices of
// its busy instances. MIG instances own disjoint SMs, so a partly used GPU
// is modelled as partly busy; a fully used one draws the TDP, as eq. 2 has
// it for a busy whole GPU. A measured curve, where the catalog has one, is
// not used: its points are whole-GPU utilisations, not instances.
func MIGGPUPower(g *hw.GPUModel, m *cluster.MIGGPU) hw.Watts {
	busy := m.BusyCompute()
	if busy == 0 {
		return g.IdleW
	}
	return g.IdleW + (g.TDPW-g.IdleW)*hw.Watts(busy)/hw.Watts(m.Geometry.ComputeSlices)
}

// CPUPower is eq. 1 for a node of capMilli vCPU with freeMilli unallocated.
func CPUPower(m *hw.CPUModel, capMilli, freeMilli int64) hw.Watts {
	if m == nil {
		return 0
	}
	tpc := float64(m.ThreadsPerCore)
	cores := math.Ceil(float64(capMilli) / 1000 / tpc)
	idleCores := math.Floor(float64(freeMilli) / 1000 / tpc)
	sockets := math.Ceil(cores / float64(m.Cores))
	busy := math.Ceil((cores - idleCores) / float64(m.Cores))
	return hw.Watts(sockets-busy)*m.IdleW + hw.Watts(busy)*m.TDPW
}

// IncreaseBounder is a Model that can bound Increase without choosing
// the GPUs: MaxIncrease is at least Increase(m, n, d, gpus) for every set
// of d.GPUCount distinct GPUs of n where d fits (each with at least
// d.GPUMilli free); ok is false when d fits on fewer GPUs than it asks
// for. A caller that only needs to know whether an increase
// stays under a limit can then skip the GPU selector.
type IncreaseBounder interface {
	MaxIncrease(n *cluster.Node, d *job.Demand) (w hw.Watts, ok bool)
}

var _ IncreaseBounder = PWR{}

// boundSlack is added to MaxIncrease: the bound is computed GPU by GPU,
// Increase from node totals, and the two may round differently.
const boundSlack = 1e-6

// MaxIncrease implements IncreaseBounder. PWR's GPU power is a sum over
// the GPUs, so the largest increase is the CPU's plus the d.GPUCount
// largest single-GPU increases among the GPUs where d fits (plus 1 µW
// against rounding).
func (PWR) MaxIncrease(n *cluster.Node, d *job.Demand) (hw.Watts, bool) {
	cpu := CPUPower(n.CPU, n.CPUMilli, n.FreeCPUMilli-d.CPUMilli) - CPUPower(n.CPU, n.CPUMilli, n.FreeCPUMilli)
	if d.GPUCount == 0 || n.GPU == nil {
		return cpu + boundSlack, true
	}
	if d.MIG() {
		// MIGGPUPower is linear in busy compute slices: the same
		// increase on every GPU with room for the instance.
		for _, m := range n.MIG {
			if len(m.Starts(d.MIGProfile)) > 0 {
				p, _ := m.Geometry.Profile(d.MIGProfile)
				return cpu + (n.GPU.TDPW-n.GPU.IdleW)*hw.Watts(p.Compute)/hw.Watts(m.Geometry.ComputeSlices) + boundSlack, true
			}
		}
		return 0, false
	}
	// The largest d.GPUCount deltas, kept in descending order.
	var buf [8]hw.Watts
	top := buf[:0]
	for _, free := range n.GPUFree {
		if free < d.GPUMilli {
			continue
		}
		used := job.MilliPerGPU - free
		delta := n.GPU.At(float64(used+d.GPUMilli)/job.MilliPerGPU) - n.GPU.At(float64(used)/job.MilliPerGPU)
		if len(top) < d.GPUCount {
			top = append(top, delta)
		} else if delta <= top[len(top)-1] {
			continue
		} else {
			top[len(top)-1] = delta
		}
		for i := len(top) - 1; i > 0 && top[i] > top[i-1]; i-- {
			top[i], top[i-1] = top[i-1], top[i]
		}
	}
	if len(top) < d.GPUCount {
		return 0, false
	}
	w := cpu
	for _, x := range top {
		w += x
	}
	return w + boundSlack, true
}

// Increase is the power a node would add if demand d took the listed GPUs on
// it: PWR's score input (Algorithm 1, lines 7-8).
//
// For a MIG demand on a node in MIG mode the instance is taken, for the
// estimate, at the lowest start gpus[0] offers (the power rules read the
// busy compute slices, not where they lie), and given back.
func Increase(m Model, n *cluster.Node, d *job.Demand, gpus []int) hw.Watts {
	before := m.NodePower(n).Total()
	if d.MIG() && n.MIG != nil && len(gpus) == 1 {
		g := n.MIG[gpus[0]]
		starts := g.Starts(d.MIGProfile)
		if len(starts) == 0 {
			return 0
		}
		if err := g.Take(d.MIGProfile, starts[0], migTrial); err != nil {
			panic(fmt.Sprintf("power: a free MIG start refused: %v", err)) // Starts offered it
		}
		defer func() {
			if err := g.Release(starts[0], migTrial); err != nil {
				panic(fmt.Sprintf("power: a trial MIG instance not released: %v", err))
			}
		}()
	}
	// Apply the change in place and undo it: cheaper than a copy.
	n.FreeCPUMilli -= d.CPUMilli
	for _, g := range gpus {
		n.GPUFree[g] -= d.GPUMilli
	}
	after := m.NodePower(n).Total()
	for _, g := range gpus {
		n.GPUFree[g] += d.GPUMilli
	}
	n.FreeCPUMilli += d.CPUMilli
	return after - before
}

// migTrial is the task ID of a MIG instance taken for an estimate.
const migTrial job.ID = -1

// Ceiling bounds PWR's Increase for a demand on any node it was shown
// (Add), whatever the node's state and GPUs: a power gate with that much
// headroom admits the demand without looking at a single node. It keeps
// three figures over the nodes, so a pod's bound costs the same on any
// cluster size:
//
//   - a CPU demand of c millicores turns at most ceil(ceil(c/1000/t)/k)
//     sockets busy (t threads per core, k cores per socket; the smallest t
//     and k seen make it larger), each adding at most the largest TDP minus
//     idle power of a socket;
//   - each GPU the demand takes changes by at most the largest spread of a
//     GPU model's power (idle, TDP and its curve's points).
//
// The zero Ceiling has seen no node and bounds every demand by 0 (plus
// the slack); a node whose models it cannot bound (no cores or threads
// per core) makes it infinite.
type Ceiling struct {
	cpuStep, gpuStep hw.Watts
	minThreads       int
	minCores         int
	unbounded        bool
}

// Add takes n's hardware into the bound.
func (c *Ceiling) Add(n *cluster.Node) {
	if m := n.CPU; m != nil {
		if m.ThreadsPerCore <= 0 || m.Cores <= 0 {
			c.unbounded = true
			return
		}
		c.cpuStep = max(c.cpuStep, m.TDPW-m.IdleW)
		if c.minThreads == 0 || m.ThreadsPerCore < c.minThreads {
			c.minThreads = m.ThreadsPerCore
		}
		if c.minCores == 0 || m.Cores < c.minCores {
			c.minCores = m.Cores
		}
	}
	if g := n.GPU; g != nil && len(n.GPUFree) > 0 {
		lo, hi := min(g.IdleW, g.TDPW), max(g.IdleW, g.TDPW)
		for _, p := range g.Curve {
			lo, hi = min(lo, p.Watts), max(hi, p.Watts)
		}
		c.gpuStep = max(c.gpuStep, hi-lo)
	}
}

// Increase is at least power.Increase(PWR{}, n, d, gpus) for every node n
// added, every state of it and every choice of d.GPUCount GPUs.
func (c *Ceiling) Increase(d *job.Demand) hw.Watts {
	if c.unbounded {
		return hw.Watts(math.Inf(1))
	}
	var w hw.Watts
	if d.CPUMilli > 0 && c.minThreads > 0 {
		cores := math.Ceil(float64(d.CPUMilli) / 1000 / float64(c.minThreads))
		w += hw.Watts(math.Ceil(cores/float64(c.minCores))) * c.cpuStep
	}
	if d.GPUCount > 0 && d.GPUMilli > 0 {
		w += hw.Watts(d.GPUCount) * c.gpuStep
	}
	return w + boundSlack
}
