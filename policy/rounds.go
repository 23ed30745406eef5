package policy

import (
	"fmt"
	"slices"
)

// Admission is how Gavel's base-mode FIFO admits a job in place of one
// that finished (round-based timing only).
type Admission string

const (
	// AdmitGavel is what Gavel's FIFOPolicy (mode "base") does: it walks
	// its allocation in job-ID order and counts GPUs only of jobs it has
	// passed, so a replacement for a finished job is admitted whenever it
	// fits in that partial count, even when the cluster is full. Admitted
	// jobs then share the GPUs in time by Gavel's round priorities.
	AdmitGavel Admission = "gavel"
	// AdmitFree admits the head of the queue only on GPUs actually free
	// (strict first-come first-served, no time-sharing).
	AdmitFree Admission = "free"
)

// Validate checks the value.
func (a Admission) Validate() error {
	switch a {
	case AdmitGavel, AdmitFree:
		return nil
	}
	return fmt.Errorf("%q, want %s or %s", string(a), AdmitGavel, AdmitFree)
}

// GavelFIFO is the allocation of Gavel's FIFO policy (policies/fifo.py)
// under round-based timing: base mode (Packing false) keeps its
// allocation between resets and only admits jobs from the queue; packing
// mode (FIFO_Packing) recomputes it at each reset and then packs the
// jobs that did not fit onto running ones. Each admitted combination gets
// the whole of its GPUs (share 1).
type GavelFIFO struct {
	Packing   bool
	Threshold float64
	Admit     Admission
	alloc     []Combo // in the order Gavel's dict holds them
}

// Allocate is one allocation reset.
func (f *GavelFIFO) Allocate(st *RoundState) []RoundShare {
	if f.Packing {
		f.alloc = nil
	}
	scale := map[int]int{}
	for _, j := range st.Jobs {
		scale[j.ID] = j.Key.Scale
	}
	var queue []int
	for _, j := range st.Jobs {
		if !slices.ContainsFunc(f.alloc, func(c Combo) bool { return !c.IsPair() && c.A == j.ID }) {
			queue = append(queue, j.ID)
		}
	}
	avail := st.GPUs
	if f.Admit == AdmitFree {
		for _, c := range f.alloc {
			if _, ok := scale[c.A]; ok {
				avail -= scale[c.A]
			}
		}
	}
	sorted := slices.Clone(f.alloc)
	slices.SortFunc(sorted, CmpCombo)
	for _, c := range sorted {
		if _, ok := scale[c.A]; ok {
			if f.Admit != AdmitFree {
				avail -= scale[c.A]
			}
			continue
		}
		// c finished: Gavel admits the head of the queue in its place if
		// it fits in the GPUs counted so far (AdmitGavel); under AdmitFree
		// the normal admission below does it.
		if f.Admit != AdmitFree && len(queue) > 0 && scale[queue[0]] <= avail {
			f.alloc = append(f.alloc, Alone(queue[0]))
			avail -= scale[queue[0]]
			queue = queue[1:]
		}
		f.alloc = slices.DeleteFunc(f.alloc, func(x Combo) bool { return x == c })
	}
	for len(queue) > 0 && avail > 0 {
		h := queue[0]
		queue = queue[1:]
		if scale[h] > avail {
			break // Gavel drops this head from the queue it packs next
		}
		f.alloc = append(f.alloc, Alone(h))
		avail -= scale[h]
	}
	if f.Packing {
		f.pack(st, queue, scale)
	}
	out := make([]RoundShare, len(f.alloc))
	for i, c := range f.alloc {
		out[i] = RoundShare{Combo: c, Frac: 1}
	}
	return out
}

// pack is FIFO_Packing's second step: in queue order, each job is paired
// with the admitted single job of its GPU count whose pair has the highest
// normalized throughput above the threshold; the first job without a
// partner ends packing (no job jumps the queue).
func (f *GavelFIFO) pack(st *RoundState, queue []int, scale map[int]int) {
	for _, h := range queue {
		best, partner := f.Threshold, -1
		for _, c := range f.alloc {
			if c.IsPair() || scale[c.A] != scale[h] {
				continue
			}
			p := PairOf(c.A, h)
			ra, rb := st.Rates(p)
			n := 0.0
			if ra > 0 {
				n += ra / st.IsoRate(p.A)
			}
			if rb > 0 {
				n += rb / st.IsoRate(p.B)
			}
			if n > best {
				best, partner = n, c.A
			}
		}
		if partner < 0 {
			return
		}
		f.alloc = slices.DeleteFunc(f.alloc, func(x Combo) bool { return x == Alone(partner) })
		f.alloc = append(f.alloc, PairOf(partner, h))
	}
}
