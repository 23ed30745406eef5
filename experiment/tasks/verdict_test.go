package tasks

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
)

func TestJudge(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name      string
		lo, hi, t float64
		want      Verdict
	}{
		{"identical runs", 0, 0, 0.01, Equivalent},
		{"within on both sides", -0.009, 0.004, 0.01, Equivalent},
		{"touching the threshold is within", -0.01, 0.01, 0.01, Equivalent},
		{"wholly below -t", -0.30, -0.02, 0.01, Less},
		{"wholly above +t", 0.02, 0.05, 0.01, More},
		{"excludes zero but reaches into the threshold", -0.05, -0.005, 0.01, Inconclusive},
		{"straddles zero and the threshold", -0.02, 0.02, 0.01, Inconclusive},
		{"no interval", nan, nan, 0.01, Inconclusive},
		{"a wider threshold makes it equivalent", -0.05, -0.005, 0.05, Equivalent},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := judge(c.lo, c.hi, c.t); got != c.want {
				t.Errorf("judge(%v, %v, %v) = %q, want %q", c.lo, c.hi, c.t, got, c.want)
			}
		})
	}
}

// hours is n hours of w joules each.
func hours(n int, w hw.Joules) []hw.Joules {
	out := make([]hw.Joules, n)
	for i := range out {
		out[i] = w
	}
	return out
}

func TestBlockInterval(t *testing.T) {
	// 7 days: too short for 8 blocks of a day.
	if b := blockInterval([][]hw.Joules{hours(7*24, 1)}, [][]hw.Joules{hours(7*24, 1)}); b != nil {
		t.Errorf("7 days: %+v, want no blocks", b)
	}
	// 10 days of a constant 10% less: every resample gives 0.9 - 1.
	b := blockInterval([][]hw.Joules{hours(240, 9)}, [][]hw.Joules{hours(240, 10)})
	if b == nil || b.Block != "day" || b.Blocks != 10 || math.Abs(float64(b.Mean)+0.1) > 1e-12 || math.Abs(float64(b.Lo)+0.1) > 1e-12 || math.Abs(float64(b.Hi)+0.1) > 1e-12 {
		t.Errorf("10 days at -10%%: %+v, want day blocks, 10 of them, mean = lo = hi = -0.1", b)
	}
	// 8 weeks: week blocks. The system saves 20% in the first four weeks
	// and nothing in the last four: the totals give 1 - 0.8*4/8 - 4/8 =
	// -10%, and resampling weeks spreads the interval around it, within
	// -20%..0% (all of one kind of week at the extremes).
	a := append(hours(4*168, 8), hours(4*168, 10)...)
	b = blockInterval([][]hw.Joules{a}, [][]hw.Joules{hours(8*168, 10)})
	if b == nil || b.Block != "week" || b.Blocks != 8 || math.Abs(float64(b.Mean)+0.1) > 1e-12 {
		t.Fatalf("8 weeks: %+v, want week blocks, mean -0.1", b)
	}
	if !(b.Lo >= -0.2 && b.Lo < -0.1 && b.Hi > -0.1 && b.Hi <= 0) {
		t.Errorf("8 weeks: interval [%v, %v], want around -0.1 within [-0.2, 0]", b.Lo, b.Hi)
	}
	// Seeds average per block: two seeds of 9 and 11 are the reference's 10.
	b = blockInterval([][]hw.Joules{hours(240, 9), hours(240, 11)}, [][]hw.Joules{hours(240, 10)})
	if b == nil || b.Mean != 0 || b.Lo != 0 || b.Hi != 0 {
		t.Errorf("two seeds averaging to the reference: %+v, want 0 [0, 0]", b)
	}
	// The same runs give the same interval (fixed random source).
	if x, y := blockInterval([][]hw.Joules{a}, [][]hw.Joules{hours(8*168, 10)}), blockInterval([][]hw.Joules{a}, [][]hw.Joules{hours(8*168, 10)}); *x != *y {
		t.Errorf("two calls differ: %+v %+v", x, y)
	}
}

// The interval judged is the hull of the seeds' and the blocks'.
func TestIntervalHull(t *testing.T) {
	x := CompareSummary{EnergyVsBaseline: experiment.MeanCI{Mean: -0.1, Lo: -0.12, Hi: -0.08, N: 3},
		EnergyByBlock: &BlockCI{Block: "week", Blocks: 9, Mean: -0.1, Lo: -0.15, Hi: -0.09}}
	if lo, hi, _ := x.interval(); lo != -0.15 || hi != -0.08 {
		t.Errorf("hull = [%v, %v], want [-0.15, -0.08]", lo, hi)
	}
	x.EnergyVsBaseline = experiment.MeanCI{Mean: -0.1, Lo: experiment.Num(math.NaN()), Hi: experiment.Num(math.NaN()), N: 1}
	if lo, hi, _ := x.interval(); lo != -0.15 || hi != -0.09 {
		t.Errorf("one seed: [%v, %v], want the blocks' [-0.15, -0.09]", lo, hi)
	}
	x.EnergyByBlock = nil
	if lo, _, _ := x.interval(); !math.IsNaN(lo) {
		t.Errorf("one seed, no blocks: lo %v, want NaN (inconclusive)", lo)
	}
}
