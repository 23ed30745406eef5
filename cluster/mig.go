package cluster

import (
	"cmp"
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
