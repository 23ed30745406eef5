package solver

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"
)

// Options control a solve. The zero value means: no time limit, the backend's
// default relative gap, one thread, seed 0, no log.
type Options struct {
	// TimeLimit stops the search after this wall-clock time (0: none). A
	// deadline on the context passed to Solve shortens it further.
	TimeLimit time.Duration
	// RelGap stops the search once |Objective-Bound| / |Objective| is at most
	// this (0: the backend's default; HiGHS's is 1e-4).
	RelGap float64
	// Threads is the number of threads the backend may use (0 or 1: one;
	// more than MaxThreads: MaxThreads).
	Threads int
	// MaxNodes stops a MIP search after this many branch-and-bound nodes
	// (0: no limit; HiGHS mip_max_nodes): a deterministic limit, unlike
	// TimeLimit. A search it stops ends with Status IterationLimit.
	MaxNodes int
	// Seed is the backend's random seed (HiGHS random_seed).
	Seed int
	// Log receives the backend's log when not nil, in one Write per run of
	// the backend (a solve may run it twice).
	Log io.Writer
	// Start, when not nil, is a point (one value per column) offered to the
	// backend as a first incumbent, e.g. the previous plan of a rolling
	// horizon; HiGHS uses it if it is feasible and ignores it otherwise.
	// BruteForce ignores it.
	Start []float64
}

// Validate names the first bad field of o.
func (o Options) Validate() error {
	switch {
	case o.TimeLimit < 0:
		return fmt.Errorf("solver: options: TimeLimit %v is negative", o.TimeLimit)
	case math.IsNaN(o.RelGap) || o.RelGap < 0 || math.IsInf(o.RelGap, 0):
		return fmt.Errorf("solver: options: RelGap %v is not a finite number >= 0", o.RelGap)
	case o.Threads < 0:
		return fmt.Errorf("solver: options: Threads %d is negative", o.Threads)
	case o.MaxNodes < 0:
		return fmt.Errorf("solver: options: MaxNodes %d is negative", o.MaxNodes)
	case o.Seed < 0:
		return fmt.Errorf("solver: options: Seed %d is negative", o.Seed)
	}
	for j, v := range o.Start {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("solver: options: Start[%d] = %v is not finite", j, v)
		}
	}
	return nil
}

// MaxThreads is the most threads a solve uses: the machine's CPUs
// (runtime.NumCPU). Options.Threads above it is clamped to it, so that a
// setting written on a large machine still runs on a small one; a caller
// that reports its settings says so (experiment/cedla notes it).
func MaxThreads() int { return maxThreads() }

// maxThreads is MaxThreads; tests of the thread handling replace it.
var maxThreads = runtime.NumCPU

// Status is the outcome of a solve.
type Status int

// The statuses. The zero value is Error, so that a Result nobody filled in is
// never taken for an optimal one.
const (
	// Error: the solve failed (Solve also returns an error).
	Error Status = iota
	// Optimal: X is optimal within the relative gap asked for.
	Optimal
	// Infeasible: no point satisfies the rows, bounds and integrality.
	Infeasible
	// Unbounded: the objective can improve without limit.
	Unbounded
	// InfeasibleOrUnbounded: the backend proved one of the two without
	// telling which (HiGHS's presolve may stop there).
	InfeasibleOrUnbounded
	// TimeLimit: the time limit (or the context's deadline) stopped the
	// search; HasSolution says whether an incumbent exists, Gap how far it may
	// be from optimal.
	TimeLimit
	// IterationLimit: a deterministic limit (Options.MaxNodes) stopped the
	// search; HasSolution and Gap as with TimeLimit.
	IterationLimit
)

// String returns the status's name.
func (s Status) String() string {
	switch s {
	case Error:
		return "error"
	case Optimal:
		return "optimal"
	case Infeasible:
		return "infeasible"
	case Unbounded:
		return "unbounded"
	case InfeasibleOrUnbounded:
		return "infeasible or unbounded"
	case TimeLimit:
		return "time limit"
	case IterationLimit:
		return "iteration limit"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is what a Solver found.
type Result struct {
	// Status tells optimal, infeasible, unbounded and time-limited results apart.
	Status Status
	// HasSolution is true when X is a feasible point of the model: always
	// with Optimal, with TimeLimit when an incumbent was found, never otherwise.
	HasSolution bool
	// X holds one value per column when HasSolution, nil otherwise.
	X []float64
	// Objective is the objective value of X (NaN without a solution).
	Objective float64
	// Bound is the best proven bound on the optimum: a lower bound when
	// minimising, an upper bound when maximising (NaN when none is known).
	Bound float64
	// Gap is |Objective-Bound| / max(|Objective|, 1e-9): 0 when proven
	// optimal, +Inf when there is no solution or no bound.
	Gap float64
	// Time is the wall-clock time of the solve.
	Time time.Duration
	// Nodes is the number of branch-and-bound nodes explored (0 for an LP).
	Nodes int64
	// LPIterations is the number of simplex iterations HiGHS reports for
	// the run (HiGHS 1.3.1 counts them for LPs; after branch and cut it
	// reports -1, kept as 0). Deterministic for a model and options.
	LPIterations int64
}

// Value returns the value of v in the solution, or NaN when the result has no
// solution or v is not a column of it.
func (r Result) Value(v Var) float64 {
	if !r.HasSolution || v < 0 || int(v) >= len(r.X) {
		return math.NaN()
	}
	return r.X[v]
}

// Solver solves a Model. Solve returns an error (and Status Error) for a
// fault: an invalid model or options, a cancelled context, a backend failure.
// Infeasible, unbounded and time-limited models are results, not errors.
type Solver interface {
	Solve(ctx context.Context, m *Model, o Options) (Result, error)
}

// relGap is the gap of a solution with objective obj and bound b.
func relGap(obj, b float64) float64 {
	if math.IsNaN(obj) || math.IsNaN(b) || math.IsInf(b, 0) {
		return math.Inf(1)
	}
	d := math.Abs(obj - b)
	if d == 0 {
		return 0
	}
	return d / math.Max(math.Abs(obj), 1e-9)
}

// timeBudget returns the time limit of a solve: the smaller of o.TimeLimit
// and the time left before ctx's deadline (0: none).
func timeBudget(ctx context.Context, o Options) time.Duration {
	limit := o.TimeLimit
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			left = time.Millisecond
		}
		if limit == 0 || left < limit {
			limit = left
		}
	}
	return limit
}
