package coloc

import (
	"fmt"
	"math"

	"github.com/wattsched/wattsched/trace/gavel"
)

// SetFunc gives every member's factor (co-located rate over isolated rate)
// in a set of co-located jobs; ok is false when the model has no value
// for the set.
type SetFunc func(set []gavel.Key) ([]float64, bool)

// PairRule turns a pair model into a SetFunc by the multiplicative rule
// (SetFactors).
func PairRule(pair PairFunc) SetFunc {
	return func(set []gavel.Key) ([]float64, bool) { return SetFactors(pair, set) }
}

// PaperInterference is the interference of co-located jobs as the EaCO
// paper measured it on its own 8-V100 servers (Sections 3 A and 6.1,
// Figs. 1-2), not as Gavel measured single-GPU pairs. A job's factor in a
// set of n jobs is
//
//	f = 1 / ((1 + OverheadPct[n]/100) * max(1, U/100)),
//
// where OverheadPct[n] is the switching overhead the paper reports for n
// co-located jobs and U the set's summed mean GPU utilisation (Table 2 row
// of each member's stand-in, StandIn): when the members together need more
// than the whole GPU, each gets its share of it on top of the overhead.
// The overheads come from the paper's text:
//
//   - 2 jobs: 3% (Sec. 6.1: "two or three concurrent jobs resulted in a
//     performance decrease of 3 to 7.8 percent"; Sec. 3 A, Fig. 1(b): the
//     lower end of "3-19 percent"), the lower end for the smaller sets;
//   - 3 jobs: 7.8% (Sec. 6.1, the upper end of the same range; Sec. 3 A:
//     "kept below 8% when two or three jobs are executed"), the upper end
//     because the paper says delays grow as more jobs are co-located;
//   - 4 jobs: chosen so that the paper's own four jobs (AlexNet, ResNet-18,
//     ResNet-50, VGG-16: U = 100.53%) give the +19% of Sec. 6.1 ("JCT
//     increased by 19% relative to exclusive access"; Sec. 3 A, Fig. 1(b)).
//
// The paper measured at most four jobs together: larger sets are unknown.
type PaperInterference struct {
	// OverheadPct is indexed by set size (0 and 1 unused).
	OverheadPct [MaxPaperSet + 1]float64 `json:"overhead_pct_by_jobs"`
	// ProfiledPct is the JCT increase the paper reports for n co-located
	// jobs, whichever they are (Sec. 6.1, Fig. 1(b)): what its profiling
	// gives a scheduler before it has observed anything (Profiled).
	ProfiledPct [MaxPaperSet + 1]float64 `json:"profiled_jct_increase_pct_by_jobs"`
	util        map[string]float64
}

// MaxPaperSet is the largest set the paper measured.
const MaxPaperSet = 4

// NewPaperInterference calibrates the model to c (data/eaco.yaml).
func NewPaperInterference(c *Calibration) (*PaperInterference, error) {
	m := &PaperInterference{util: map[string]float64{}}
	var all float64
	for _, x := range c.Models {
		m.util[x.Name] = x.GPUAvgPct
		all += x.GPUAvgPct
	}
	m.OverheadPct[2] = c.Sets.JCTIncreaseMinPct
	m.OverheadPct[3] = c.Sets.JCTIncrease23MaxPct
	m.OverheadPct[4] = 100 * ((1+c.Sets.JCTIncrease4Pct/100)/math.Max(1, all/100) - 1)
	m.ProfiledPct[2], m.ProfiledPct[3], m.ProfiledPct[4] = c.Sets.JCTIncreaseMinPct, c.Sets.JCTIncrease23MaxPct, c.Sets.JCTIncrease4Pct
	for n := 2; n <= MaxPaperSet; n++ {
		if !(m.OverheadPct[n] >= 0) {
			return nil, fmt.Errorf("coloc: paper interference: overhead for %d jobs %.2f%%, want >= 0", n, m.OverheadPct[n])
		}
	}
	return m, nil
}

// UtilPct is the mean GPU utilisation (percent) of a job type in the
// paper's Table 2: a paper model's own row, else the row a Gavel job type
// borrows (StandIn).
func (m *PaperInterference) UtilPct(k gavel.Key) float64 {
	if u, ok := m.util[k.Type]; ok {
		return u
	}
	return m.util[StandIn(k.Type)]
}

// Factors implements SetFunc: every member of set gets the same factor.
func (m *PaperInterference) Factors(set []gavel.Key) ([]float64, bool) {
	n := len(set)
	out := make([]float64, n)
	if n == 1 {
		out[0] = 1
		return out, true
	}
	if n < 1 || n > MaxPaperSet {
		return nil, false
	}
	var u float64
	for _, k := range set {
		u += m.UtilPct(k)
	}
	f := 1 / ((1 + m.OverheadPct[n]/100) * math.Max(1, u/100))
	for i := range out {
		out[i] = f
	}
	return out, true
}

// Profiled implements SetFunc with what the paper's profiling reports: a
// set of n jobs slows each member by the JCT increase measured for n jobs
// (3%, 7.8%, 19% for 2, 3, 4), whichever jobs they are. It equals Factors
// wherever the members' summed utilisation is at most 100% (and for the
// paper's own four jobs); it is optimistic where they oversubscribe the
// GPU, which the paper's figures do not show.
func (m *PaperInterference) Profiled(set []gavel.Key) ([]float64, bool) {
	n := len(set)
	if n < 1 || n > MaxPaperSet {
		return nil, false
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = 1 / (1 + m.ProfiledPct[n]/100)
	}
	return out, true
}

// Placeholder is a Gavel pair whose co-located rates equal both jobs'
// isolated rates exactly: no slowdown at all on one shared GPU, which no
// measured pair shows; these rows are filler in Gavel's table.
type Placeholder struct {
	A string `json:"a"`
	B string `json:"b"`
}

// Placeholders lists tp's pairs whose co-located rates both equal the
// isolated ones, in the table's order.
func Placeholders(tp *gavel.Throughputs) []Placeholder {
	var out []Placeholder
	for _, p := range tp.Pairs {
		if p.RateA == tp.Isolated[p.A] && p.RateB == tp.Isolated[p.B] {
			out = append(out, Placeholder{A: p.A.String(), B: p.B.String()})
		}
	}
	return out
}

// WithoutPlaceholders returns tp's table without the placeholder pairs
// (Placeholders), everything else kept in order.
func WithoutPlaceholders(tp *gavel.Throughputs) (*gavel.Throughputs, error) {
	var pairs []gavel.Pair
	for _, p := range tp.Pairs {
		if !(p.RateA == tp.Isolated[p.A] && p.RateB == tp.Isolated[p.B]) {
			pairs = append(pairs, p)
		}
	}
	return gavel.NewThroughputs(tp.Worker, tp.Isolated, pairs)
}
