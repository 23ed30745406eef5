package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// MaxBruteForceAssignments is the most assignments of the integer and binary
// columns BruteForce will enumerate; a larger model is an error.
const MaxBruteForceAssignments = 1 << 20

// BruteForce returns a pure-Go backend for small models, meant for checking
// other backends in tests: it enumerates every assignment of the integer and
// binary columns (their bounds must be finite and the product of their domain
// sizes at most MaxBruteForceAssignments) and, for each one, solves the linear
// program left over the continuous columns with a dense two-phase simplex
// (Bland's rule). The first best assignment in enumeration order wins (the
// first column varies slowest, from its lower bound up). Result.Nodes counts
// the assignments evaluated. Options.TimeLimit and the context's deadline stop
// the enumeration (TimeLimit, with the incumbent and no bound); RelGap,
// Threads, Seed, Log and Start are ignored.
func BruteForce() Solver { return bruteSolver{} }

type bruteSolver struct{}

// Solve implements Solver.
func (bruteSolver) Solve(ctx context.Context, m *Model, o Options) (Result, error) {
	start := time.Now()
	res := Result{Status: Error, Objective: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1)}
	fail := func(err error) (Result, error) {
		res.Status, res.HasSolution, res.X = Error, false, nil
		res.Objective = math.NaN()
		res.Time = time.Since(start)
		return res, err
	}
	if err := m.Validate(); err != nil {
		return fail(err)
	}
	if err := o.Validate(); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("solver: model %q: %w", m.name, err))
	}

	// Integer columns and their domains; continuous columns.
	var ints, conts []int
	total := 1.0
	for j, c := range m.cols {
		if c.kind == Continuous {
			conts = append(conts, j)
			continue
		}
		lo, hi := m.bounds(j)
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return fail(fmt.Errorf("solver: model %q: %s: brute force needs finite bounds on integer columns", m.name, m.colRef(j)))
		}
		ints = append(ints, j)
		total *= math.Floor(hi+intTol) - math.Ceil(lo-intTol) + 1
	}
	if total > MaxBruteForceAssignments {
		return fail(fmt.Errorf("solver: model %q: brute force would enumerate %.0f assignments (at most %d)", m.name, total, MaxBruteForceAssignments))
	}
	lp := newSubLP(m, conts)

	sign := 1.0
	if m.maximize {
		sign = -1
	}
	limit := timeBudget(ctx, o)
	x := make([]float64, len(m.cols))
	for _, j := range ints {
		lo, _ := m.bounds(j)
		x[j] = math.Ceil(lo - intTol)
	}
	best := math.Inf(1)
	var bestX []float64
	var evaluated int64
	for {
		if evaluated%4096 == 0 && evaluated > 0 {
			if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return fail(fmt.Errorf("solver: model %q: %w", m.name, err))
			}
			if ctx.Err() != nil || (limit > 0 && time.Since(start) >= limit) {
				res.Status = TimeLimit
				break
			}
		}
		evaluated++
		st, err := lp.solve(x)
		if err != nil {
			return fail(fmt.Errorf("solver: model %q: %w", m.name, err))
		}
		switch st {
		case lpUnbounded:
			res.Status = Unbounded
			res.Nodes = evaluated
			res.Time = time.Since(start)
			return res, nil
		case lpOptimal:
			if v := sign * m.Objective(x); v < best {
				best = v
				bestX = append(bestX[:0], x...)
			}
		}
		if !nextAssignment(m, ints, x) {
			res.Status = Optimal
			break
		}
	}
	res.Nodes = evaluated
	res.Time = time.Since(start)
	if bestX == nil {
		if res.Status == Optimal {
			res.Status = Infeasible
		}
		return res, nil
	}
	res.HasSolution = true
	res.X = bestX
	res.Objective = m.Objective(bestX)
	if res.Status == Optimal {
		res.Bound, res.Gap = res.Objective, 0
	}
	return res, nil
}

// nextAssignment advances the integer columns like an odometer whose last
// column turns fastest; it returns false after the last assignment.
func nextAssignment(m *Model, ints []int, x []float64) bool {
	for k := len(ints) - 1; k >= 0; k-- {
		j := ints[k]
		lo, hi := m.bounds(j)
		if x[j]+1 <= math.Floor(hi+intTol) {
			x[j]++
			return true
		}
		x[j] = math.Ceil(lo - intTol)
	}
	return false
}

type lpStatus int

const (
	lpOptimal lpStatus = iota
	lpInfeasible
	lpUnbounded
)

// subLP is the linear program over the continuous columns of a model once
// its integer columns are fixed.
type subLP struct {
	m     *Model
	conts []int // model column of each LP column
	pos   []int // LP column of each model column, -1 for integer columns
}

func newSubLP(m *Model, conts []int) *subLP {
	pos := make([]int, len(m.cols))
	for j := range pos {
		pos[j] = -1
	}
	for k, j := range conts {
		pos[j] = k
	}
	return &subLP{m: m, conts: conts, pos: pos}
}

// solve fixes the integer columns at their values in x, solves for the
// continuous ones and writes them into x when the LP is optimal.
func (s *subLP) solve(x []float64) (lpStatus, error) {
	m := s.m
	n := len(s.conts)
	feasTol := func(b float64) float64 { return 1e-9 * math.Max(1, math.Abs(b)) }
	if n == 0 {
		for _, r := range m.rows {
			a := 0.0
			for _, t := range r.terms {
				a += t.Coef * x[t.Var]
			}
			if a < r.lo-feasTol(r.lo) || a > r.hi+feasTol(r.hi) {
				return lpInfeasible, nil
			}
		}
		return lpOptimal, nil
	}

	// Substitute y = shift + dir*z with z >= 0 (a free column becomes
	// z+ - z-, the second part in column n+k).
	shift := make([]float64, n)
	dir := make([]float64, n)
	free := make([]int, n) // index of the z- column, or -1
	nz := n
	var ub [][2]float64 // (z column, upper bound on z)
	for k, j := range s.conts {
		lo, hi := m.bounds(j)
		free[k] = -1
		switch {
		case !math.IsInf(lo, 0):
			shift[k], dir[k] = lo, 1
			if !math.IsInf(hi, 0) {
				ub = append(ub, [2]float64{float64(k), hi - lo})
			}
		case !math.IsInf(hi, 0):
			shift[k], dir[k] = hi, -1
		default:
			shift[k], dir[k] = 0, 1
			free[k] = nz
			nz++
		}
	}
	cost := make([]float64, nz)
	sign := 1.0
	if m.maximize {
		sign = -1
	}
	for k, j := range s.conts {
		c := sign * m.cols[j].obj
		cost[k] = c * dir[k]
		if free[k] >= 0 {
			cost[free[k]] = -c
		}
	}

	// Constraint rows a.z (<=, >=, =) b.
	type con struct {
		a   []float64
		b   float64
		sen int // -1: <=, 0: =, +1: >=
	}
	var cons []con
	for _, r := range m.rows {
		a := make([]float64, nz)
		fixed := 0.0
		for _, t := range r.terms {
			k := s.pos[t.Var]
			if k < 0 {
				fixed += t.Coef * x[t.Var]
				continue
			}
			fixed += t.Coef * shift[k]
			a[k] += t.Coef * dir[k]
			if free[k] >= 0 {
				a[free[k]] -= t.Coef
			}
		}
		switch {
		case r.lo == r.hi:
			cons = append(cons, con{a, r.lo - fixed, 0})
		default:
			if !math.IsInf(r.hi, 1) {
				cons = append(cons, con{a, r.hi - fixed, -1})
			}
			if !math.IsInf(r.lo, -1) {
				cons = append(cons, con{a, r.lo - fixed, 1})
			}
		}
	}
	for _, u := range ub {
		a := make([]float64, nz)
		a[int(u[0])] = 1
		cons = append(cons, con{a, u[1], -1})
	}

	// Tableau: z columns, one slack per inequality, one artificial per row,
	// then the right-hand side.
	mr := len(cons)
	nSlack := 0
	for _, c := range cons {
		if c.sen != 0 {
			nSlack++
		}
	}
	nArt := mr
	N := nz + nSlack + nArt
	t := &tableau{rows: make([][]float64, mr), basis: make([]int, mr), n: N}
	si := nz
	for i, c := range cons {
		row := make([]float64, N+1)
		copy(row, c.a)
		if c.sen != 0 {
			row[si] = float64(-c.sen) // +1 slack for <=, -1 surplus for >=
			si++
		}
		row[N] = c.b
		if c.b < 0 {
			for q := range row {
				row[q] = -row[q]
			}
		}
		row[nz+nSlack+i] = 1
		t.rows[i] = row
		t.basis[i] = nz + nSlack + i
	}
	isArt := func(q int) bool { return q >= nz+nSlack && q < N }

	// Phase 1: minimise the sum of the artificials.
	t.obj = make([]float64, N+1)
	for _, row := range t.rows {
		for q := 0; q <= N; q++ {
			if !isArt(q) {
				t.obj[q] -= row[q]
			}
		}
	}
	if st, err := t.simplex(func(q int) bool { return true }); err != nil {
		return 0, err
	} else if st != lpOptimal {
		return 0, fmt.Errorf("brute force LP: phase 1 unbounded")
	}
	if -t.obj[N] > 1e-7 {
		return lpInfeasible, nil
	}
	for i := range t.rows {
		if !isArt(t.basis[i]) {
			continue
		}
		for q := 0; q < nz+nSlack; q++ {
			if math.Abs(t.rows[i][q]) > 1e-9 {
				t.pivot(i, q)
				break
			}
		}
	}

	// Phase 2: the objective over the z columns.
	t.obj = make([]float64, N+1)
	copy(t.obj, cost)
	for i, row := range t.rows {
		if b := t.basis[i]; b < nz && cost[b] != 0 {
			cb := cost[b]
			for q := 0; q <= N; q++ {
				t.obj[q] -= cb * row[q]
			}
		}
	}
	st, err := t.simplex(func(q int) bool { return !isArt(q) })
	if err != nil || st != lpOptimal {
		return st, err
	}
	z := make([]float64, N)
	for i, b := range t.basis {
		z[b] = t.rows[i][N]
	}
	for k, j := range s.conts {
		v := shift[k] + dir[k]*z[k]
		if free[k] >= 0 {
			v -= z[free[k]]
		}
		x[j] = v
	}
	return lpOptimal, nil
}

// tableau is a dense simplex tableau in canonical form.
type tableau struct {
	rows  [][]float64 // constraint rows; column n is the right-hand side
	obj   []float64   // reduced costs; obj[n] is minus the objective
	basis []int
	n     int
}

const simplexTol = 1e-9

// simplex runs primal simplex iterations with Bland's rule over the columns
// allowed to enter.
func (t *tableau) simplex(allowed func(int) bool) (lpStatus, error) {
	for iter := 0; iter < 50000; iter++ {
		enter := -1
		for q := 0; q < t.n; q++ {
			if allowed(q) && t.obj[q] < -simplexTol {
				enter = q
				break
			}
		}
		if enter < 0 {
			return lpOptimal, nil
		}
		leave := -1
		var best float64
		for i, row := range t.rows {
			if row[enter] > simplexTol {
				r := row[t.n] / row[enter]
				if leave < 0 || r < best-1e-12 || (math.Abs(r-best) <= 1e-12 && t.basis[i] < t.basis[leave]) {
					leave, best = i, r
				}
			}
		}
		if leave < 0 {
			return lpUnbounded, nil
		}
		t.pivot(leave, enter)
	}
	return 0, fmt.Errorf("brute force LP: no convergence in 50000 iterations")
}

func (t *tableau) pivot(r, q int) {
	pr := t.rows[r]
	p := pr[q]
	for k := range pr {
		pr[k] /= p
	}
	elim := func(row []float64) {
		f := row[q]
		if f == 0 {
			return
		}
		for k := range row {
			row[k] -= f * pr[k]
		}
	}
	for i, row := range t.rows {
		if i != r {
			elim(row)
		}
	}
	elim(t.obj)
	t.basis[r] = q
}
