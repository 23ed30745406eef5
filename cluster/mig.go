package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// MIG partitions, not shares: a GPU in MIG mode is a set of GPU instances,
// each of one profile of its geometry, at a legal start memory slice, never
// two on one memory slice. A task asking for a profile takes one free
// instance of it (a static layout, as the scenario or the node's labels set
// it) or, with dynamic MIG, has one created for it at a legal free start and
// destroyed when it leaves. A 3g instance is not 3/7 of a time-sliced GPU:
// it is a place, and the places left decide what else can start.

// MIGSlot is one instance of a layout: a profile at a start memory slice.
type MIGSlot struct {
	Profile string
	Start   int
}

// MIGInstance is one GPU instance of a MIG GPU.
type MIGInstance struct {
	MIGSlot
	Busy bool   // a task holds it
	Task job.ID // the task holding it, when Busy
}

// MIGGPU is a GPU in MIG mode.
type MIGGPU struct {
	Geometry *hw.MIGGeometry
	// Dynamic: instances are created for the task that asks for them and
	// destroyed when it leaves (Instances holds only busy ones); otherwise
	// the layout is fixed and tasks take its free instances.
	Dynamic bool
	// Instances in start order.
	Instances []MIGInstance
}

// NewMIGGPU builds a MIG GPU of geometry g with the given layout (none for
// a dynamic GPU that starts empty), checking every placement rule.
func NewMIGGPU(g *hw.MIGGeometry, layout []MIGSlot, dynamic bool) (*MIGGPU, error) {
	m := &MIGGPU{Geometry: g, Dynamic: dynamic}
	for _, s := range layout {
		if err := m.create(s); err != nil {
			return nil, fmt.Errorf("MIG layout on %s: %w", g.Name, err)
		}
	}
	return m, nil
}

// SingleLayout is the single-strategy layout of profile p: as many
// instances of p as the GPU holds, at its legal starts from the lowest.
func SingleLayout(g *hw.MIGGeometry, profile string) ([]MIGSlot, error) {
	p, ok := g.Profile(profile)
	if !ok {
		return nil, fmt.Errorf("MIG profile %q: %s has %s", profile, g.Name, strings.Join(g.ProfileNames(), ", "))
	}
	m := &MIGGPU{Geometry: g}
	for _, s := range p.Starts {
		if m.canCreate(p, s) == "" {
			m.Instances = append(m.Instances, MIGInstance{MIGSlot: MIGSlot{Profile: profile, Start: s}})
		}
	}
	out := make([]MIGSlot, len(m.Instances))
	for i, in := range m.Instances {
		out[i] = in.MIGSlot
	}
	return out, nil
}

// Occupied marks the memory slices that instances take (all instances of
// a static layout, busy or not; the busy ones of a dynamic GPU).
func (m *MIGGPU) Occupied() []bool {
	occ := make([]bool, m.Geometry.MemorySlices)
	for _, in := range m.Instances {
		p, _ := m.Geometry.Profile(in.Profile)
		for s := in.Start; s < in.Start+p.Memory; s++ {
			occ[s] = true
		}
	}
	return occ
}

// BusyCompute is the compute slices of the busy instances.
func (m *MIGGPU) BusyCompute() int {
	c := 0
	for _, in := range m.Instances {
		if in.Busy {
			p, _ := m.Geometry.Profile(in.Profile)
			c += p.Compute
		}
	}
	return c
}

// canCreate says why an instance of p may not be created at start s ("" if
// it may): the start must be one of p's, its memory slices free, and the
// GPU must hold fewer than p's max instances of p.
func (m *MIGGPU) canCreate(p *hw.MIGProfile, s int) string {
	if !p.AllowsStart(s) {
		return fmt.Sprintf("%s may not start at memory slice %d (starts %v)", p.Name, s, p.Starts)
	}
	occ := m.Occupied()
	for k := s; k < s+p.Memory; k++ {
		if occ[k] {
			return fmt.Sprintf("%s at %d: memory slice %d is taken", p.Name, s, k)
		}
	}
	n := 0
	for _, in := range m.Instances {
		if in.Profile == p.Name {
			n++
		}
	}
	if n >= p.Max {
		return fmt.Sprintf("%s: the GPU already holds its max %d", p.Name, p.Max)
	}
	return ""
}

func (m *MIGGPU) create(s MIGSlot) error {
	p, ok := m.Geometry.Profile(s.Profile)
	if !ok {
		return fmt.Errorf("MIG profile %q: %s has %s", s.Profile, m.Geometry.Name, strings.Join(m.Geometry.ProfileNames(), ", "))
	}
	if why := m.canCreate(p, s.Start); why != "" {
		return fmt.Errorf("%w: %s", ErrInvalid, why)
	}
	i, _ := slices.BinarySearchFunc(m.Instances, s.Start, func(in MIGInstance, start int) int { return in.Start - start })
	m.Instances = slices.Insert(m.Instances, i, MIGInstance{MIGSlot: s})
	return nil
}

// Starts are the start slices where a task asking for profile could go
// now, lowest first: the free instances of the profile on a static layout,
// the legal free starts on a dynamic GPU. None when the geometry lacks it.
func (m *MIGGPU) Starts(profile string) []int {
	p, ok := m.Geometry.Profile(profile)
	if !ok {
		return nil
	}
	var out []int
	if !m.Dynamic {
		for _, in := range m.Instances {
			if !in.Busy && in.Profile == profile {
				out = append(out, in.Start)
			}
		}
		return out
	}
	for _, s := range p.Starts {
		if m.canCreate(p, s) == "" {
			out = append(out, s)
		}
	}
	return out
}

// Take gives task t the instance of profile at start: on a static layout
// a free instance that is there, on a dynamic GPU a new one where the
// placement rules allow. Anything else is an error wrapping ErrInvalid.
func (m *MIGGPU) Take(profile string, start int, t job.ID) error {
	if m.Dynamic {
		if err := m.create(MIGSlot{Profile: profile, Start: start}); err != nil {
			return err
		}
	}
	for i := range m.Instances {
		in := &m.Instances[i]
		if in.Start == start && in.Profile == profile && !in.Busy {
			in.Busy, in.Task = true, t
			return nil
		}
	}
	return fmt.Errorf("%w: no free %s instance at memory slice %d", ErrInvalid, profile, start)
}

// Release frees the instance task t holds at start (a dynamic GPU
// destroys it).
func (m *MIGGPU) Release(start int, t job.ID) error {
	for i := range m.Instances {
		in := &m.Instances[i]
		if in.Start == start && in.Busy && in.Task == t {
			if m.Dynamic {
				m.Instances = slices.Delete(m.Instances, i, i+1)
				return nil
			}
			in.Busy, in.Task = false, 0
			return nil
		}
	}
	return fmt.Errorf("%w: task %d holds no instance at memory slice %d", ErrInvalid, t, start)
}

// LayoutFromCounts lays out counts[profile] instances over gpus MIG GPUs of
// geometry g, as a node's mixed-strategy labels give them (per profile, not
// per GPU or start). It searches depth first, profiles largest first
// (memory slices, then the fewest legal starts, then name), each instance
// on the lowest GPU and start that leave the rest placeable, so the first
// layout found is the same whatever the map's order. It is an error when a
// profile is not g's or no layout holds the instances (or the search passes
// migSearchLimit steps, which no real node comes near).
func LayoutFromCounts(g *hw.MIGGeometry, gpus int, counts map[string]int) ([][]MIGSlot, error) {
	if gpus < 0 {
		return nil, fmt.Errorf("MIG layout on %d GPUs", gpus)
	}
	var profs []*hw.MIGProfile
	for name, n := range counts {
		p, ok := g.Profile(name)
		if !ok {
			return nil, fmt.Errorf("MIG profile %q: %s has %s", name, g.Name, strings.Join(g.ProfileNames(), ", "))
		}
		if n < 0 {
			return nil, fmt.Errorf("MIG profile %s: %d instances", name, n)
		}
		profs = append(profs, p)
	}
	slices.SortFunc(profs, func(a, b *hw.MIGProfile) int {
		return cmp.Or(cmp.Compare(b.Memory, a.Memory), cmp.Compare(len(a.Starts), len(b.Starts)), cmp.Compare(a.Name, b.Name))
	})
	var items []*hw.MIGProfile
	for _, p := range profs {
		for range counts[p.Name] {
			items = append(items, p)
		}
	}
	ms := make([]*MIGGPU, gpus)
	for i := range ms {
		ms[i] = &MIGGPU{Geometry: g}
	}
	steps := 0
	// place puts items[i:] on the GPUs; an instance of the same profile as
	// the one before goes no earlier than it (gpu, start), and of several
	// empty GPUs only the first is tried: permutations of a layout are
	// searched once.
	var place func(i, afterGPU, afterStart int) bool
	place = func(i, afterGPU, afterStart int) bool {
		if i == len(items) {
			return true
		}
		if steps++; steps > migSearchLimit {
			return false
		}
		p := items[i]
		emptyTried := false
		for gi, m := range ms {
			if gi < afterGPU {
				continue
			}
			if len(m.Instances) == 0 {
				if emptyTried {
					break
				}
				emptyTried = true
			}
			for _, s := range p.Starts {
				if gi == afterGPU && s < afterStart || m.canCreate(p, s) != "" {
					continue
				}
				if err := m.create(MIGSlot{Profile: p.Name, Start: s}); err != nil {
					continue
				}
				ng, ns := 0, 0
				if i+1 < len(items) && items[i+1] == p {
					ng, ns = gi, s
				}
				if place(i+1, ng, ns) {
					return true
				}
				m.Instances = slices.DeleteFunc(m.Instances, func(in MIGInstance) bool { return in.Start == s })
			}
		}
		return false
	}
	if !place(0, 0, 0) {
		return nil, fmt.Errorf("MIG layout on %d x %s: no layout holds %s", gpus, g.Name, countsText(profs, counts))
	}
	out := make([][]MIGSlot, gpus)
	for i, m := range ms {
		for _, in := range m.Instances {
			out[i] = append(out[i], in.MIGSlot)
		}
	}
	return out, nil
}

// migSearchLimit bounds LayoutFromCounts' search steps.
const migSearchLimit = 1 << 20

func countsText(profs []*hw.MIGProfile, counts map[string]int) string {
	parts := make([]string, len(profs))
	for i, p := range profs {
		parts[i] = fmt.Sprintf("%d x %s", counts[p.Name], p.Name)
	}
	return strings.Join(parts, ", ")
}

// String is the slot as explain output names it: profile@start.
func (s MIGSlot) String() string { return fmt.Sprintf("%s@%d", s.Profile, s.Start) }

// newMIG puts the n GPUs of model g in the MIG mode spec says: the
// geometry of g (hw/mig.yaml), and a static layout per GPU checked
// against its placement rules, or dynamic GPUs that start empty.
func newMIG(g *hw.GPUModel, n int, spec *MIGSpec) ([]*MIGGPU, error) {
	geo, ok := hw.MIGFor(g.Name)
	if !ok {
		return nil, fmt.Errorf("GPU model %s has no MIG geometry (hw/mig.yaml)", g.Name)
	}
	switch {
	case spec.Dynamic && len(spec.Layouts) > 0:
		return nil, fmt.Errorf("MIG mode both dynamic and with a static layout")
	case !spec.Dynamic && len(spec.Layouts) != n:
		return nil, fmt.Errorf("MIG layouts for %d GPUs, the node has %d", len(spec.Layouts), n)
	}
	out := make([]*MIGGPU, n)
	for i := range out {
		var layout []MIGSlot
		if !spec.Dynamic {
			layout = spec.Layouts[i]
		}
		m, err := NewMIGGPU(geo, layout, spec.Dynamic)
		if err != nil {
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		out[i] = m
	}
	return out, nil
}

// idle is a copy of m with no task on it: a static layout with every
// instance free, a dynamic GPU with no instance.
func (m *MIGGPU) idle() *MIGGPU {
	c := &MIGGPU{Geometry: m.Geometry, Dynamic: m.Dynamic}
	if !m.Dynamic {
		c.Instances = make([]MIGInstance, len(m.Instances))
		for i, in := range m.Instances {
			c.Instances[i] = MIGInstance{MIGSlot: in.MIGSlot}
		}
	}
	return c
}

// clone is an independent copy of m.
func (m *MIGGPU) clone() *MIGGPU {
	c := *m
	c.Instances = slices.Clone(m.Instances)
	return &c
}

// FirstMIG is where a task asking for d's MIG profile goes on n by the
// default rule: the lowest GPU index with a free place for it (a free
// instance on a static layout, a legal free start on a dynamic GPU) and
// its lowest start. Both are what the hardware is (device index, memory
// slice), never the order of an input. ok is false when there is none,
// or d asks for no MIG instance, or n is not in MIG mode.
func FirstMIG(d *job.Demand, n *Node) (gpu, start int, ok bool) {
	if !d.MIG() {
		return 0, 0, false
	}
	for g, m := range n.MIG {
		if s := m.Starts(d.MIGProfile); len(s) > 0 {
			return g, s[0], true
		}
	}
	return 0, 0, false
}

// AllocateMIG places MIG task t on node id in the instance of its profile
// at memory slice start of GPU gpu (a free one of a static layout, a new
// one on a dynamic GPU), after checking every constraint; a violation is
// an error wrapping ErrInvalid.
func (c *Cluster) AllocateMIG(t *job.Task, id NodeID, gpu, start int) error {
	if int(id) < 0 || int(id) >= len(c.Nodes) {
		return fmt.Errorf("%w: task %d: node %d does not exist", ErrInvalid, t.ID, id)
	}
	if !t.MIG() {
		return fmt.Errorf("%w: task %d asks for no MIG instance", ErrInvalid, t.ID)
	}
	if _, dup := c.placements[t.ID]; dup {
		return fmt.Errorf("%w: task %d is already placed", ErrInvalid, t.ID)
	}
	n := c.Nodes[id]
	if ok, why := Fits(&t.Demand, n); !ok {
		return fmt.Errorf("%w: task %d on node %s: %s", ErrInvalid, t.ID, n.Name, why)
	}
	if gpu < 0 || gpu >= len(n.MIG) {
		return fmt.Errorf("%w: task %d: GPU index %d out of range on node %s", ErrInvalid, t.ID, gpu, n.Name)
	}
	if n.GPUFree[gpu] < t.GPUMilli {
		return fmt.Errorf("%w: task %d: MIG GPU %d on node %s has %d milli free, needs %d", ErrInvalid, t.ID, gpu, n.Name, n.GPUFree[gpu], t.GPUMilli)
	}
	if err := n.MIG[gpu].Take(t.MIGProfile, start, t.ID); err != nil {
		if !errors.Is(err, ErrInvalid) {
			err = fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return fmt.Errorf("task %d on node %s GPU %d: %w", t.ID, n.Name, gpu, err)
	}
	n.GPUFree[gpu] -= t.GPUMilli
	n.FreeCPUMilli -= t.CPUMilli
	n.FreeMemMiB -= t.MemMiB
	n.Affinity[affinityIndex(&t.Demand)]++
	n.Tasks++
	c.touch(n, true)
	c.AllocGPUMilli += t.TotalGPUMilli()
	c.AllocCPUMilli += t.CPUMilli
	c.placements[t.ID] = &Placement{Task: t.ID, Node: id, GPUs: []int{gpu},
		GPUMilli: t.GPUMilli, CPUMilli: t.CPUMilli, MemMiB: t.MemMiB, MIG: &MIGSlot{Profile: t.MIGProfile, Start: start}}
	return nil
}

// checkMIG verifies that the busy MIG instances are exactly those the
// placements hold, and that every layout keeps the placement rules.
func (c *Cluster) checkMIG() error {
	held := map[job.ID]bool{}
	for _, n := range c.Nodes {
		for g, m := range n.MIG {
			occ := make([]int, m.Geometry.MemorySlices)
			for _, in := range m.Instances {
				p, ok := m.Geometry.Profile(in.Profile)
				if !ok || !p.AllowsStart(in.Start) {
					return fmt.Errorf("node %s GPU %d: MIG instance %s breaks the placement rules", n.Name, g, in.MIGSlot)
				}
				for s := in.Start; s < in.Start+p.Memory; s++ {
					if occ[s]++; occ[s] > 1 {
						return fmt.Errorf("node %s GPU %d: memory slice %d in two MIG instances", n.Name, g, s)
					}
				}
				if m.Dynamic && !in.Busy {
					return fmt.Errorf("node %s GPU %d: dynamic MIG instance %s left without a task", n.Name, g, in.MIGSlot)
				}
				if !in.Busy {
					continue
				}
				pl, ok := c.placements[in.Task]
				if !ok || pl.MIG == nil || pl.Node != n.ID || pl.GPUs[0] != g || *pl.MIG != in.MIGSlot {
					return fmt.Errorf("node %s GPU %d: MIG instance %s held by task %d, which is not placed there", n.Name, g, in.MIGSlot, in.Task)
				}
				held[in.Task] = true
			}
		}
	}
	for id, p := range c.placements {
		if p.MIG != nil && !held[id] {
			return fmt.Errorf("task %d placed in MIG instance %s on node %d GPU %d, which it does not hold", id, *p.MIG, p.Node, p.GPUs[0])
		}
	}
	return nil
}
