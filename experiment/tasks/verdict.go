package tasks

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
)

// DefaultEquivalence is compare's practical-equivalence threshold: energy
// differences within 1% of the reference's are no meaningful difference
// (--equivalence).
const DefaultEquivalence = 0.01

// MaxEquivalence bounds --equivalence: a threshold above 50% would call
// a halving of the energy "no difference".
const MaxEquivalence = 0.5

// Verdict is what an interval of a relative energy difference says
// against the equivalence threshold t (docs/scenarios.md#verdicts):
//   - Equivalent: the whole interval lies within [-t, +t];
//   - Less or More: the whole interval lies below -t (less energy) or
//     above +t (more energy);
//   - Inconclusive: anything else (the interval straddles ±t, or there
//     is no interval: one seed and too short a trace for blocks).
type Verdict string

// Verdicts.
const (
	Equivalent   Verdict = "no meaningful difference"
	Less         Verdict = "less energy"
	More         Verdict = "more energy"
	Inconclusive Verdict = "inconclusive"
)

// judge applies the rule of Verdict to the interval [lo, hi].
func judge(lo, hi, t float64) Verdict {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return Inconclusive
	case lo >= -t && hi <= t:
		return Equivalent
	case hi < -t:
		return Less
	case lo > t:
		return More
	}
	return Inconclusive
}

// BlockCI is the interval of a relative energy difference over parts of
// the trace: the span cut into Blocks blocks of BlockH hours, the
// difference of the energy totals (each block's energy averaged over the
// seeds) resampled by block (a block bootstrap of bootstrapDraws draws,
// percentile interval), so that it reflects how the difference varies
// with the workload, not only with tie-breaking.
type BlockCI struct {
	Block  string         `json:"block"`
	BlockH int            `json:"block_hours"`
	Blocks int            `json:"blocks"`
	Mean   experiment.Num `json:"mean"`
	Lo     experiment.Num `json:"ci95_lo"`
	Hi     experiment.Num `json:"ci95_hi"`
}

// bootstrapDraws is the number of resamples of a block bootstrap, and
// minBlocks the fewest blocks it is made with.
const (
	bootstrapDraws = 2000
	minBlocks      = 8
)

// blockSize is the block for a span of hours: weeks when it holds
// minBlocks of them, else days, else none ("", 0).
func blockSize(hours int) (string, int) {
	switch {
	case hours >= minBlocks*168:
		return "week", 168
	case hours >= minBlocks*24:
		return "day", 24
	}
	return "", 0
}

// blockEnergy is the mean over runs of each block's energy.
func blockEnergy(hourly [][]hw.Joules, blockH, blocks int) []float64 {
	out := make([]float64, blocks)
	for _, h := range hourly {
		for i, j := range h {
			out[i/blockH] += float64(j)
		}
	}
	for i := range out {
		out[i] /= float64(len(hourly))
	}
	return out
}

// blockInterval is the BlockCI of system a against baseline b, each given
// as its seeds' hourly energy; nil when the span is too short for
// minBlocks blocks.
func blockInterval(a, b [][]hw.Joules) *BlockCI {
	hours := 0
	for _, h := range slices.Concat(a, b) {
		hours = max(hours, len(h))
	}
	name, size := blockSize(hours)
	if size == 0 {
		return nil
	}
	blocks := (hours + size - 1) / size
	ea, eb := blockEnergy(a, size, blocks), blockEnergy(b, size, blocks)
	ratio := func(idx func(k int) int) float64 {
		var sa, sb float64
		for k := range blocks {
			i := idx(k)
			sa += ea[i]
			sb += eb[i]
		}
		if sb == 0 {
			return math.NaN()
		}
		return sa/sb - 1
	}
	m := ratio(func(k int) int { return k })
	// A fixed source: the same runs give the same interval.
	r := rand.New(rand.NewPCG(0x626c6f636b, uint64(blocks)))
	draws := make([]float64, 0, bootstrapDraws)
	for range bootstrapDraws {
		draws = append(draws, ratio(func(int) int { return r.IntN(blocks) }))
	}
	slices.Sort(draws)
	return &BlockCI{Block: name, BlockH: size, Blocks: blocks, Mean: experiment.Num(m),
		Lo: experiment.Num(quantile(draws, 0.025)), Hi: experiment.Num(quantile(draws, 0.975))}
}

// interval is the interval a verdict is made on: the hull of the seeds'
// interval and the block interval (the first measures tie-breaking, the
// second the workload; a verdict must hold for both), either alone when
// the other is missing.
func (x CompareSummary) interval() (lo, hi float64, what string) {
	slo, shi := float64(x.EnergyVsBaseline.Lo), float64(x.EnergyVsBaseline.Hi)
	seeds := fmt.Sprintf("over %d seeds", x.EnergyVsBaseline.N)
	b := x.EnergyByBlock
	switch {
	case b == nil:
		return slo, shi, "95% interval " + seeds
	case math.IsNaN(slo):
		return float64(b.Lo), float64(b.Hi), fmt.Sprintf("95%% interval over %d %ss (block bootstrap)", b.Blocks, b.Block)
	}
	return min(slo, float64(b.Lo)), max(shi, float64(b.Hi)), fmt.Sprintf("95%% interval %s and over %d %ss (block bootstrap)", seeds, b.Blocks, b.Block)
}
