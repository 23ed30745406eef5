package coloc

import (
	"math"
	"slices"

	"github.com/wattsched/wattsched/trace/gavel"
)

// A job's rate with co-tenants is its isolated rate times a factor in
// [0, 1]. For a pair the factor is measured (Gavel: the job's steps/s
// space-shared over its steps/s alone). No one measured sets of three or
// four, so the rule is multiplicative: a job's factor in a set is the
// product of its pair factors with each co-tenant, as if each co-tenant
// took an independent share of the GPU time left to it. A factor of 0
// (Gavel records 0 where the pair did not fit in memory) makes the set
// infeasible.

// PairFunc gives job a's factor next to job b, and whether it is known.
type PairFunc func(a, b gavel.Key) (float64, bool)

// SetFactors applies the rule: each member's factor in set (alone: 1).
// ok is false when a pair is unknown.
func SetFactors(pair PairFunc, set []gavel.Key) ([]float64, bool) {
	out := make([]float64, len(set))
	for i := range set {
		f := 1.0
		for k := range set {
			if k == i {
				continue
			}
			x, ok := pair(set[i], set[k])
			if !ok {
				return nil, false
			}
			f *= x
		}
		out[i] = f
	}
	return out, true
}

// Factors holds measured pair factors.
type Factors struct {
	m map[[2]gavel.Key]float64
}

// MeasuredFactors turns measured pairs into factors (rate / isolated).
func MeasuredFactors(tp *gavel.Throughputs, pairs []gavel.Pair) *Factors {
	f := &Factors{m: make(map[[2]gavel.Key]float64, 2*len(pairs))}
	for _, p := range pairs {
		f.m[[2]gavel.Key{p.A, p.B}] = min(1, p.RateA/tp.Isolated[p.A])
		f.m[[2]gavel.Key{p.B, p.A}] = min(1, p.RateB/tp.Isolated[p.B])
	}
	return f
}

// Pair is a's measured factor next to b.
func (f *Factors) Pair(a, b gavel.Key) (float64, bool) {
	x, ok := f.m[[2]gavel.Key{a, b}]
	return x, ok
}

// Split divides the measured pairs into those a policy may know (train)
// and held-out ones: every every-th pair of two different job types that
// both ran (rates > 0), in the table's order; pairs of a type with itself
// and infeasible pairs are always known.
func Split(tp *gavel.Throughputs, every int) (train, held []gavel.Pair) {
	n := 0
	for _, p := range tp.Pairs {
		if p.A != p.B && p.RateA > 0 && p.RateB > 0 {
			n++
			if every > 0 && n%every == 0 {
				held = append(held, p)
				continue
			}
		}
		train = append(train, p)
	}
	return train, held
}

// Fitted estimates unmeasured pair factors: log f(a next to b) =
// -(s_a + p_b), a sensitivity of a and a pressure of b per job type,
// fitted by alternating least squares on the feasible measured pairs.
type Fitted struct {
	sens, press map[string]float64
	// Fallback is the median measured factor, for types never measured.
	Fallback float64
}

// Fit fits the estimator to measured factors.
func Fit(f *Factors) *Fitted {
	type obs struct {
		a, b string
		y    float64
	}
	var os []obs
	keys := make([][2]gavel.Key, 0, len(f.m))
	for k := range f.m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]gavel.Key) int {
		if c := cmpKey(x[0], y[0]); c != 0 {
			return c
		}
		return cmpKey(x[1], y[1])
	})
	var all []float64
	for _, k := range keys {
		x := f.m[k]
		if x <= 0 {
			continue
		}
		os = append(os, obs{k[0].Type, k[1].Type, -math.Log(x)})
		all = append(all, x)
	}
	ft := &Fitted{sens: map[string]float64{}, press: map[string]float64{}, Fallback: 1}
	if len(all) > 0 {
		slices.Sort(all)
		ft.Fallback = all[len(all)/2]
	}
	for _, o := range os {
		ft.sens[o.a], ft.press[o.b] = 0, 0
	}
	for it := 0; it < 100; it++ {
		sum, cnt := map[string]float64{}, map[string]float64{}
		for _, o := range os {
			sum[o.a] += o.y - ft.press[o.b]
			cnt[o.a]++
		}
		for k := range ft.sens {
			ft.sens[k] = sum[k] / cnt[k]
		}
		sum, cnt = map[string]float64{}, map[string]float64{}
		for _, o := range os {
			sum[o.b] += o.y - ft.sens[o.a]
			cnt[o.b]++
		}
		for k := range ft.press {
			ft.press[k] = sum[k] / cnt[k]
		}
	}
	return ft
}

// Pair estimates a's factor next to b (always known).
func (ft *Fitted) Pair(a, b gavel.Key) (float64, bool) {
	s, ok1 := ft.sens[a.Type]
	p, ok2 := ft.press[b.Type]
	if !ok1 || !ok2 {
		return ft.Fallback, true
	}
	return min(1, math.Exp(-(s + p))), true
}

// HeldOutError is the fitted estimator's error on held-out pairs.
type HeldOutError struct {
	Pairs int `json:"pairs"`
	// MAPE of the fitted factor and of the median-factor guess (%).
	MAPEPct       float64 `json:"mape_pct"`
	MedianMAPEPct float64 `json:"median_guess_mape_pct"`
	// MAEFactor is the mean absolute error of the factor.
	MAEFactor float64 `json:"mae_factor"`
}

// Evaluate measures ft on held-out pairs (both directions).
func Evaluate(ft *Fitted, tp *gavel.Throughputs, held []gavel.Pair) HeldOutError {
	var e HeldOutError
	var n float64
	for _, p := range held {
		for _, d := range [][3]any{{p.A, p.B, p.RateA}, {p.B, p.A, p.RateB}} {
			a, b, r := d[0].(gavel.Key), d[1].(gavel.Key), d[2].(float64)
			truth := min(1, r/tp.Isolated[a])
			est, _ := ft.Pair(a, b)
			e.MAPEPct += 100 * math.Abs(est-truth) / truth
			e.MedianMAPEPct += 100 * math.Abs(ft.Fallback-truth) / truth
			e.MAEFactor += math.Abs(est - truth)
			n++
		}
	}
	e.Pairs = len(held)
	if n > 0 {
		e.MAPEPct /= n
		e.MedianMAPEPct /= n
		e.MAEFactor /= n
	}
	return e
}

// CrossValidate fits the estimator k times, each time holding out one
// fold of the pairs of two different job types that both ran (fold i:
// every k-th such pair from the i-th), and returns the error on each fold.
func CrossValidate(tp *gavel.Throughputs, k int) []HeldOutError {
	out := make([]HeldOutError, 0, k)
	for fold := 0; fold < k; fold++ {
		var train, held []gavel.Pair
		n := 0
		for _, p := range tp.Pairs {
			if p.A != p.B && p.RateA > 0 && p.RateB > 0 {
				n++
				if n%k == fold {
					held = append(held, p)
					continue
				}
			}
			train = append(train, p)
		}
		out = append(out, Evaluate(Fit(MeasuredFactors(tp, train)), tp, held))
	}
	return out
}
