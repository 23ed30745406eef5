// Package solver states small mixed-integer linear programs (MILPs) and solves
// them with a backend: HiGHS (the real one, through cgo) or BruteForce (pure Go,
// exhaustive over the integer variables, for checking small models in tests).
//
// A Model is built incrementally with AddVar and AddRow and checked when it is
// solved: a NaN or infinite coefficient, a lower bound above the upper bound or
// a term that names an unknown variable is an error that names the row or
// column. A Solver returns a Result whose Status tells optimal, infeasible,
// unbounded and time-limited results apart; a Result never carries an empty
// solution silently (HasSolution says whether X holds a feasible point).
package solver

import (
	"fmt"
	"math"
	"slices"
)

// Kind is the domain of a variable.
type Kind int

// The kinds of variable.
const (
	// Continuous variables take any real value within their bounds.
	Continuous Kind = iota
	// Integer variables take integer values within their bounds.
	Integer
	// Binary variables take 0 or 1 (their bounds are intersected with [0, 1]).
	Binary
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Continuous:
		return "continuous"
	case Integer:
		return "integer"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Var is a variable of a Model: its column index, in the order of AddVar.
type Var int

// Term is one coefficient of a row: Coef times the value of Var.
type Term struct {
	Var  Var
	Coef float64
}

type column struct {
	name        string
	lo, hi, obj float64
	kind        Kind
}

type row struct {
	name   string
	lo, hi float64
	terms  []Term
}

// Model is a MILP: minimise (or maximise) the sum of obj*x over the columns
// subject to lo <= sum(terms) <= hi for every row and lo <= x <= hi for every
// column, with integrality by Kind. The zero Model is not usable; call NewModel.
type Model struct {
	name     string
	cols     []column
	rows     []row
	maximize bool
}

// NewModel returns an empty minimisation model; name appears in its errors.
func NewModel(name string) *Model {
	return &Model{name: name}
}

// Name returns the model's name.
func (m *Model) Name() string { return m.name }

// AddVar adds a column with bounds lo <= x <= hi (either may be infinite),
// objective coefficient obj and kind k, and returns it. The values are checked
// when the model is solved.
func (m *Model) AddVar(name string, lo, hi, obj float64, k Kind) Var {
	m.cols = append(m.cols, column{name: name, lo: lo, hi: hi, obj: obj, kind: k})
	return Var(len(m.cols) - 1)
}

// AddRow adds the constraint lo <= sum of terms <= hi. Use math.Inf(-1) or
// math.Inf(1) for a one-sided row and lo == hi for an equality. A variable
// named in several terms has its coefficients added. The terms are copied;
// they are checked when the model is solved.
func (m *Model) AddRow(name string, lo, hi float64, terms ...Term) {
	t := make([]Term, len(terms))
	copy(t, terms)
	m.rows = append(m.rows, row{name: name, lo: lo, hi: hi, terms: t})
}

// Maximize makes the model maximise its objective (the default is to minimise).
func (m *Model) Maximize() { m.maximize = true }

// Maximizing reports whether the model maximises its objective.
func (m *Model) Maximizing() bool { return m.maximize }

// NumVars returns the number of columns.
func (m *Model) NumVars() int { return len(m.cols) }

// NumRows returns the number of rows.
func (m *Model) NumRows() int { return len(m.rows) }

// VarName returns the name given to v in AddVar.
func (m *Model) VarName(v Var) string {
	if v < 0 || int(v) >= len(m.cols) {
		return fmt.Sprintf("Var(%d)", int(v))
	}
	return m.cols[v].name
}

// colRef names column j in errors.
func (m *Model) colRef(j int) string {
	return fmt.Sprintf("column %d %q", j, m.cols[j].name)
}

// rowRef names row i in errors.
func (m *Model) rowRef(i int) string {
	return fmt.Sprintf("row %d %q", i, m.rows[i].name)
}

// bounds returns the effective bounds of column j (binary columns intersected
// with [0, 1]).
func (m *Model) bounds(j int) (lo, hi float64) {
	c := m.cols[j]
	lo, hi = c.lo, c.hi
	if c.kind == Binary {
		lo, hi = math.Max(lo, 0), math.Min(hi, 1)
	}
	return lo, hi
}

// Validate checks every column and row and returns the first fault found,
// naming the model and the row or column. Solvers call it before solving.
func (m *Model) Validate() error {
	if m == nil {
		return fmt.Errorf("solver: nil model")
	}
	if len(m.cols) == 0 {
		return fmt.Errorf("solver: model %q has no variables", m.name)
	}
	for j, c := range m.cols {
		if err := m.checkColumn(j, c); err != nil {
			return fmt.Errorf("solver: model %q: %s: %w", m.name, m.colRef(j), err)
		}
	}
	for i, r := range m.rows {
		if err := m.checkRow(r); err != nil {
			return fmt.Errorf("solver: model %q: %s: %w", m.name, m.rowRef(i), err)
		}
	}
	return nil
}

func (m *Model) checkColumn(j int, c column) error {
	switch c.kind {
	case Continuous, Integer, Binary:
	default:
		return fmt.Errorf("unknown kind %d", int(c.kind))
	}
	if math.IsNaN(c.obj) || math.IsInf(c.obj, 0) {
		return fmt.Errorf("objective coefficient %v is not finite", c.obj)
	}
	if err := checkBounds(c.lo, c.hi); err != nil {
		return err
	}
	lo, hi := m.bounds(j)
	if c.kind == Binary && lo > hi {
		return fmt.Errorf("binary bounds [%v, %v] leave no value in {0, 1}", c.lo, c.hi)
	}
	if c.kind != Continuous && math.Ceil(lo-intTol) > math.Floor(hi+intTol) {
		return fmt.Errorf("integer bounds [%v, %v] contain no integer", c.lo, c.hi)
	}
	return nil
}

func (m *Model) checkRow(r row) error {
	if err := checkBounds(r.lo, r.hi); err != nil {
		return err
	}
	for k, t := range r.terms {
		if t.Var < 0 || int(t.Var) >= len(m.cols) {
			return fmt.Errorf("term %d names unknown variable %d (the model has %d)", k, int(t.Var), len(m.cols))
		}
		if math.IsNaN(t.Coef) || math.IsInf(t.Coef, 0) {
			return fmt.Errorf("term %d: coefficient %v of %s is not finite", k, t.Coef, m.colRef(int(t.Var)))
		}
	}
	return nil
}

func checkBounds(lo, hi float64) error {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return fmt.Errorf("bound is NaN (lo %v, hi %v)", lo, hi)
	case math.IsInf(lo, 1):
		return fmt.Errorf("lower bound is +Inf")
	case math.IsInf(hi, -1):
		return fmt.Errorf("upper bound is -Inf")
	case lo > hi:
		return fmt.Errorf("lower bound %v is above upper bound %v", lo, hi)
	}
	return nil
}

// intTol is the tolerance within which a value counts as an integer.
const intTol = 1e-6

// Objective returns the objective value of the point x (one value per column).
func (m *Model) Objective(x []float64) float64 {
	s := 0.0
	for j, c := range m.cols {
		if j < len(x) {
			s += c.obj * x[j]
		}
	}
	return s
}

// Check returns nil when x satisfies every bound, row and integrality of the
// model within the absolute tolerance tol, and otherwise an error naming the
// first row or column that x violates and by how much.
func (m *Model) Check(x []float64, tol float64) error {
	if len(x) != len(m.cols) {
		return fmt.Errorf("solver: model %q: point has %d values for %d columns", m.name, len(x), len(m.cols))
	}
	for j, c := range m.cols {
		lo, hi := m.bounds(j)
		v := x[j]
		if math.IsNaN(v) || v < lo-tol || v > hi+tol {
			return fmt.Errorf("solver: model %q: %s = %v is outside [%v, %v]", m.name, m.colRef(j), v, lo, hi)
		}
		if c.kind != Continuous && math.Abs(v-math.Round(v)) > tol {
			return fmt.Errorf("solver: model %q: %s = %v is not integral", m.name, m.colRef(j), v)
		}
	}
	for i, r := range m.rows {
		s := 0.0
		for _, t := range r.terms {
			s += t.Coef * x[t.Var]
		}
		if s < r.lo-tol || s > r.hi+tol {
			return fmt.Errorf("solver: model %q: %s = %v is outside [%v, %v]", m.name, m.rowRef(i), s, r.lo, r.hi)
		}
	}
	return nil
}

// pointTol is the relative tolerance with which solvers' points are checked.
const pointTol = 1e-5

// checkRelative is Check with tolerances relative to the magnitudes
// involved: tol*(1+|bound|) for a column, tol*(1+|bound|+sum|coef*x|) for a
// row, tol for integrality (checked only when integral is true).
func (m *Model) checkRelative(x []float64, tol float64, integral bool) error {
	if len(x) != len(m.cols) {
		return fmt.Errorf("solver: model %q: point has %d values for %d columns", m.name, len(x), len(m.cols))
	}
	for j, c := range m.cols {
		lo, hi := m.bounds(j)
		v := x[j]
		if math.IsNaN(v) || v < lo-tol*(1+math.Abs(lo)) || v > hi+tol*(1+math.Abs(hi)) {
			return fmt.Errorf("solver: model %q: %s = %v is outside [%v, %v]", m.name, m.colRef(j), v, lo, hi)
		}
		if integral && c.kind != Continuous && math.Abs(v-math.Round(v)) > tol {
			return fmt.Errorf("solver: model %q: %s = %v is not integral", m.name, m.colRef(j), v)
		}
	}
	for i, r := range m.rows {
		s, mag := 0.0, 0.0
		for _, t := range r.terms {
			s += t.Coef * x[t.Var]
			mag += math.Abs(t.Coef * x[t.Var])
		}
		if s < r.lo-tol*(1+math.Abs(r.lo)+mag) || s > r.hi+tol*(1+math.Abs(r.hi)+mag) {
			return fmt.Errorf("solver: model %q: %s = %v is outside [%v, %v]", m.name, m.rowRef(i), s, r.lo, r.hi)
		}
	}
	return nil
}

// sparseRows returns the rows in compressed sparse row form with duplicate
// variables merged and zero coefficients dropped, in column order per row.
func (m *Model) sparseRows() (lo, hi []float64, start, index []int, value []float64) {
	lo = make([]float64, len(m.rows))
	hi = make([]float64, len(m.rows))
	start = make([]int, len(m.rows))
	acc := make([]float64, len(m.cols))
	seen := make([]bool, len(m.cols))
	var order []int
	for i, r := range m.rows {
		lo[i], hi[i] = r.lo, r.hi
		start[i] = len(index)
		order = order[:0]
		for _, t := range r.terms {
			if !seen[t.Var] {
				seen[t.Var] = true
				order = append(order, int(t.Var))
			}
			acc[t.Var] += t.Coef
		}
		slices.Sort(order)
		for _, j := range order {
			if c := acc[j]; c != 0 {
				index = append(index, j)
				value = append(value, c)
			}
			acc[j], seen[j] = 0, false
		}
	}
	return lo, hi, start, index, value
}
