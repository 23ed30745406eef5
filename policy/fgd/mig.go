package fgd

import (
	"cmp"
	"slices"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// The MIG-aware reading of FGD (docs/policies/fgd.md#mig-aware-reading):
// fragmentation is the expected free capacity of a MIG GPU that a request
// drawn from the workload cannot use, where a free memory slice is usable
// for a profile only inside a placement the hardware allows for it now (a
// legal free start on a dynamic GPU, a free instance of that profile on a
// static layout). Capacity is counted in memory slices, the axis the
// placement rules are written on.

// MIGClass is one class of a MIG workload: a profile and how often it is
// asked for.
type MIGClass struct {
	Profile    string
	Popularity float64
}

// MIGWorkload is FGD's target workload over MIG profiles, in profile order.
type MIGWorkload []MIGClass

// NewMIGWorkload derives the workload from the profiles a task population
// asks for: one class per profile, popularity its share of the requests.
// Classes are sorted by profile name, so the input's order never matters.
func NewMIGWorkload(requests []string) MIGWorkload {
	count := map[string]int{}
	for _, p := range requests {
		count[p]++
	}
	w := make(MIGWorkload, 0, len(count))
	for p, n := range count {
		w = append(w, MIGClass{Profile: p, Popularity: float64(n) / float64(len(requests))})
	}
	slices.SortFunc(w, func(a, b MIGClass) int { return cmp.Compare(a.Profile, b.Profile) })
	return w
}

// MIGFrag is the expected number of free memory slices of m that a
// request drawn from w cannot use. Free slices are those in no instance or
// in a free instance (static layout), or in no instance (dynamic). A
// profile the GPU's geometry lacks can use none of them.
func (w MIGWorkload) MIGFrag(m *cluster.MIGGPU) float64 {
	free := m.Occupied()
	for i := range free {
		free[i] = !free[i]
	}
	if !m.Dynamic {
		for _, in := range m.Instances {
			if !in.Busy {
				p, _ := m.Geometry.Profile(in.Profile)
				for s := in.Start; s < in.Start+p.Memory; s++ {
					free[s] = true
				}
			}
		}
	}
	var frag float64
	usable := make([]bool, len(free))
	for _, c := range w {
		clear(usable)
		if p, ok := m.Geometry.Profile(c.Profile); ok {
			for _, s := range m.Starts(c.Profile) {
				for k := s; k < s+p.Memory; k++ {
					usable[k] = true
				}
			}
		}
		n := 0
		for k := range free {
			if free[k] && !usable[k] {
				n++
			}
		}
		frag += c.Popularity * float64(n)
	}
	return frag
}

// migNodeFrag is the fragmentation of node n in MIG mode in milli-GPU, so
// that it adds up with other nodes' (Frag): the sum over its GPUs of
// MIGFrag, in memory slices, x 1000 / the GPU's memory slices (a memory
// slice of an A100 or H100 is 1/8 of it, 125 milli-GPU). The workload
// without MIG tasks finds no fragmentation there.
func (w *Workload) migNodeFrag(n *cluster.Node) float64 {
	var f float64
	for _, m := range n.MIG {
		f += w.MIG.MIGFrag(m) * job.MilliPerGPU / float64(m.Geometry.MemorySlices)
	}
	return f
}

// bestMIG is FGD's MIG-aware choice for MIG task t on n: of each GPU's
// best start (MIGBestStart), the one after which the node's fragmentation
// is lowest, the lowest GPU among equals; the score is the sigmoid of the
// fragmentation decrease, as for shares. ok is false when the instance
// fits nowhere on n.
func (p *Policy) bestMIG(t *job.Task, n *cluster.Node) (score int64, gpu, start int, ok bool) {
	w := p.W
	var bestDelta float64
	for g, m := range n.MIG {
		before := w.MIG.MIGFrag(m)
		s, after, fits := w.MIG.MIGBestStart(m, t.MIGProfile)
		if !fits {
			continue
		}
		delta := (after - before) * job.MilliPerGPU / float64(m.Geometry.MemorySlices)
		if !ok || delta < bestDelta {
			bestDelta, gpu, start, ok = delta, g, s, true
		}
	}
	if !ok {
		return 0, 0, 0, false
	}
	return sigmoidScore(-bestDelta), gpu, start, true
}

// SelectMIG implements policy.MIGSelector: bestMIG's instance.
func (p *Policy) SelectMIG(t *job.Task, n *cluster.Node) (gpu, start int, ok bool) {
	_, gpu, start, ok = p.bestMIG(t, n)
	return gpu, start, ok
}

var _ policy.MIGSelector = (*Policy)(nil)

// MIGBestStart is FGD's choice of where on m a request for profile goes:
// the start (among m.Starts(profile)) after which MIGFrag is lowest, the
// lowest start among equals. ok is false when the profile fits nowhere.
func (w MIGWorkload) MIGBestStart(m *cluster.MIGGPU, profile string) (start int, frag float64, ok bool) {
	for _, s := range m.Starts(profile) {
		trial := *m
		trial.Instances = slices.Clone(m.Instances)
		if err := trial.Take(profile, s, -1); err != nil {
			continue
		}
		if f := w.MIGFrag(&trial); !ok || f < frag {
			start, frag, ok = s, f, true
		}
	}
	return start, frag, ok
}
