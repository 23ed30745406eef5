package fit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Bound limits one parameter to [Lo, Hi]; Hi may be +Inf.
type Bound struct{ Lo, Hi float64 }

// NLS is a bounded nonlinear least-squares problem: minimise the sum of
// squared residuals over parameters within Bounds. Bounds are enforced by
// reparameterisation (a logistic map for two-sided bounds, softplus for
// lower bounds only), so the solver itself is unconstrained
// Levenberg-Marquardt with a forward-difference Jacobian.
type NLS struct {
	Bounds []Bound
	// Start is the first starting point (inside Bounds).
	Start []float64
	// M is the number of residuals; Residuals fills r (len M) at x.
	M         int
	Residuals func(x, r []float64)
	// MaxIter bounds the iterations per start (default 200).
	MaxIter int
}

func (b Bound) toX(z float64) float64 {
	if math.IsInf(b.Hi, 1) {
		if z > 30 {
			return b.Lo + z
		}
		return b.Lo + math.Log1p(math.Exp(z))
	}
	return b.Lo + (b.Hi-b.Lo)/(1+math.Exp(-z))
}

func (b Bound) toZ(x float64) float64 {
	if math.IsInf(b.Hi, 1) {
		d := math.Max(x-b.Lo, 1e-12)
		if d > 30 {
			return d
		}
		return math.Log(math.Expm1(d))
	}
	w := (x - b.Lo) / (b.Hi - b.Lo)
	w = math.Min(math.Max(w, 1e-9), 1-1e-9)
	return math.Log(w / (1 - w))
}

// Solve runs Levenberg-Marquardt from Start and from starts-1 further
// points (Start perturbed in the reparameterised space by a seeded normal
// draw) and returns the best parameters and their sum of squared residuals.
func (p *NLS) Solve(starts int, seed uint64) ([]float64, float64, error) {
	k := len(p.Bounds)
	if len(p.Start) != k || k == 0 || p.M == 0 || p.Residuals == nil {
		return nil, 0, errors.New("fit: NLS needs bounds, a start of the same length, residuals")
	}
	for i, b := range p.Bounds {
		if !(b.Lo < b.Hi) || p.Start[i] < b.Lo || p.Start[i] > b.Hi {
			return nil, 0, fmt.Errorf("fit: parameter %d: start %v outside [%v, %v]", i, p.Start[i], b.Lo, b.Hi)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e6c73))
	z0 := make([]float64, k)
	for i, b := range p.Bounds {
		z0[i] = b.toZ(p.Start[i])
	}
	var best []float64
	bestSSE := math.Inf(1)
	z := make([]float64, k)
	for s := 0; s < max(starts, 1); s++ {
		copy(z, z0)
		if s > 0 {
			for i := range z {
				z[i] += rng.NormFloat64()
			}
		}
		x, sse := p.lm(z)
		if sse < bestSSE {
			best, bestSSE = x, sse
		}
	}
	if best == nil || math.IsNaN(bestSSE) || math.IsInf(bestSSE, 0) {
		return nil, 0, errors.New("fit: NLS found no finite solution")
	}
	return best, bestSSE, nil
}

func (p *NLS) lm(z []float64) ([]float64, float64) {
	k, m := len(z), p.M
	x := make([]float64, k)
	toX := func(z, x []float64) {
		for i, b := range p.Bounds {
			x[i] = b.toX(z[i])
		}
	}
	r, rt := make([]float64, m), make([]float64, m)
	sse := func(z []float64, r []float64) float64 {
		toX(z, x)
		p.Residuals(x, r)
		var s float64
		for _, v := range r {
			s += v * v
		}
		if math.IsNaN(s) {
			return math.Inf(1)
		}
		return s
	}
	cur := sse(z, r)
	jac := make([][]float64, k) // column-major: jac[j][i] = dr_i/dz_j
	for j := range jac {
		jac[j] = make([]float64, m)
	}
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1)
	}
	g := make([]float64, k)
	zt := make([]float64, k)
	lambda := 1e-3
	iters := p.MaxIter
	if iters == 0 {
		iters = 200
	}
	for it := 0; it < iters && cur > 0; it++ {
		for j := range z {
			h := 1e-6 * math.Max(1, math.Abs(z[j]))
			copy(zt, z)
			zt[j] += h
			sse(zt, rt)
			for i := range rt {
				jac[j][i] = (rt[i] - r[i]) / h
			}
		}
		for i := 0; i < k; i++ {
			g[i] = dot(jac[i], r)
			for j := 0; j <= i; j++ {
				v := dot(jac[i], jac[j])
				a[i][j], a[j][i] = v, v
			}
		}
		improved := false
		for try := 0; try < 10; try++ {
			sys := make([][]float64, k)
			for i := range sys {
				sys[i] = append([]float64(nil), a[i][:k]...)
				sys[i] = append(sys[i], -g[i])
				sys[i][i] += lambda * (a[i][i] + 1e-12)
			}
			d, ok := solve(sys)
			if !ok {
				lambda *= 10
				continue
			}
			for i := range zt {
				zt[i] = z[i] + d[i]
			}
			if next := sse(zt, rt); next < cur {
				rel := (cur - next) / cur
				copy(z, zt)
				copy(r, rt)
				cur = next
				lambda = math.Max(lambda/3, 1e-12)
				improved = true
				if rel < 1e-10 {
					it = iters
				}
				break
			}
			lambda *= 10
		}
		if !improved {
			break
		}
	}
	toX(z, x)
	return append([]float64(nil), x...), cur
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// solve solves an augmented k x (k+1) system by Gaussian elimination with
// partial pivoting, in place.
func solve(a [][]float64) ([]float64, bool) {
	k := len(a)
	for c := 0; c < k; c++ {
		piv := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if math.Abs(a[piv][c]) < 1e-300 {
			return nil, false
		}
		a[c], a[piv] = a[piv], a[c]
		for r := c + 1; r < k; r++ {
			f := a[r][c] / a[c][c]
			for j := c; j <= k; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	x := make([]float64, k)
	for i := k - 1; i >= 0; i-- {
		s := a[i][k]
		for j := i + 1; j < k; j++ {
			s -= a[i][j] * x[j]
		}
		x[i] = s / a[i][i]
	}
	return x, true
}
