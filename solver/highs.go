//go:build highs

package solver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/lanl/highs"
)

// The HiGHS C API functions and constants this file reads results with. They
// are declared here rather than by including interfaces/highs_c_api.h, whose
// constants are definitions (the highs package includes that header once).

// #cgo pkg-config: highs
// #define _GNU_SOURCE
// #include <stdint.h>
// #include <stdio.h>
// #include <stdlib.h>
// #include <sys/types.h>
//
// // discard is a write function that keeps nothing.
// #if defined(__linux__)
// static ssize_t wattsched_discard(void *cookie, const char *buf, size_t n) { return (ssize_t)n; }
// #else
// static int wattsched_discard(void *cookie, const char *buf, int n) { return n; }
// #endif
//
// // wattsched_quiet_stdout points the C library's stdout stream (the FILE
// // that printf and puts write to, not file descriptor 1) at a stream that
// // discards what it is given. It returns 0 on success.
// static int wattsched_quiet_stdout(void) {
// #if defined(__linux__)
// 	cookie_io_functions_t io = {0};
// 	io.write = wattsched_discard;
// 	FILE *f = fopencookie(NULL, "w", io);
// #else
// 	FILE *f = funopen(NULL, NULL, wattsched_discard, NULL, NULL);
// #endif
// 	if (f == NULL) return -1;
// 	fflush(stdout);
// 	stdout = f;
// 	return 0;
// }
//
// // wattsched_printf prints a line as HiGHS does (printf to stdout).
// static void wattsched_printf(const char *s) { printf("%s\n", s); fflush(stdout); }
// #include "util/HighsInt.h"
// extern const HighsInt kHighsStatusError;
// extern const HighsInt kHighsSolutionStatusFeasible;
// extern const HighsInt kHighsModelStatusOptimal;
// extern const HighsInt kHighsModelStatusInfeasible;
// extern const HighsInt kHighsModelStatusUnboundedOrInfeasible;
// extern const HighsInt kHighsModelStatusUnbounded;
// extern const HighsInt kHighsModelStatusTimeLimit;
// extern const HighsInt kHighsModelStatusIterationLimit;
// HighsInt Highs_run(void* highs);
// void Highs_destroy(void* highs);
// void Highs_resetGlobalScheduler(const HighsInt blocking);
// HighsInt Highs_setSolution(void* highs, const double* col_value, const double* row_value, const double* col_dual, const double* row_dual);
// HighsInt Highs_getModelStatus(const void* highs);
// HighsInt Highs_getNumCol(const void* highs);
// HighsInt Highs_getSolution(const void* highs, double* col_value, double* col_dual, double* row_value, double* row_dual);
// HighsInt Highs_getIntInfoValue(const void* highs, const char* info, HighsInt* value);
// HighsInt Highs_getInt64InfoValue(const void* highs, const char* info, int64_t* value);
// HighsInt Highs_getDoubleInfoValue(const void* highs, const char* info, double* value);
import "C"

// HiGHS returns the HiGHS backend: the model is passed to HiGHS through the
// github.com/lanl/highs binding and solved with HiGHS's dual simplex (LPs) or
// branch and cut (MILPs). The HiGHS library is linked statically (see
// docs/solver.md for how the Makefile installs it).
func HiGHS() Solver { return highsSolver{} }

// Available reports whether this build links HiGHS (the highs build tag).
func Available() bool { return true }

type highsSolver struct{}

// handle returns the HiGHS object behind a highs.RawModel. The binding keeps
// it in its only (unexported) field, and its Solve discards the solution, the
// bound and the node count when HiGHS ends with a warning, which is how a time
// limit ends; so this backend runs HiGHS and reads the results itself through
// the C API. The layout is that of github.com/lanl/highs v1.0.0, pinned in
// go.mod; TestHiGHSHandle checks it.
func handle(raw *highs.RawModel) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(raw))
}

// destroy frees raw's HiGHS object at once, not when the garbage
// collector finalises raw (the binding's finaliser): the collector sees
// only the small Go value, so the C side of every solve (the model, its
// factors, a MILP's search) stayed allocated until a collection that a
// small Go heap reaches rarely; a slotted run of 100 jobs grew to 437 MB
// (docs/performance.md). The results are copied out before.
func destroy(raw *highs.RawModel) {
	runtime.SetFinalizer(raw, nil)
	if h := handle(raw); h != nil {
		C.Highs_destroy(h)
	}
	*(*unsafe.Pointer)(unsafe.Pointer(raw)) = nil
}

// numCols returns the number of columns HiGHS holds for raw, read through
// handle.
func numCols(raw *highs.RawModel) int {
	n := int(C.Highs_getNumCol(handle(raw)))
	runtime.KeepAlive(raw)
	return n
}

// Solve implements Solver.
func (highsSolver) Solve(ctx context.Context, m *Model, o Options) (Result, error) {
	start := time.Now()
	empty := func(st Status) Result {
		return Result{Status: st, Objective: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1), Time: time.Since(start)}
	}
	if err := m.Validate(); err != nil {
		return empty(Error), err
	}
	if err := o.Validate(); err != nil {
		return empty(Error), err
	}
	if err := ctx.Err(); err != nil {
		return empty(Error), fmt.Errorf("solver: model %q: %w", m.name, err)
	}
	if m.emptyRowExcludingZero() {
		// No point satisfies such a row; HiGHS cannot be passed a
		// model without coefficients.
		return empty(Infeasible), nil
	}
	limit := timeBudget(ctx, o)

	// HiGHS 1.3.1's branch and cut assumes a bounded LP relaxation: given
	// an unbounded MILP it may report a finite "optimum" (docs/solver.md).
	// Unless the relaxation is bounded by its columns' bounds and costs
	// alone, it is solved first.
	relaxUnbounded := false
	if m.hasInteger() && !m.costBounded() {
		lp, err := m.runHiGHS(limit, o, true)
		if err != nil {
			return empty(Error), err
		}
		switch lp.Status {
		case Infeasible, TimeLimit:
			return empty(lp.Status), nil
		case Unbounded, InfeasibleOrUnbounded:
			relaxUnbounded = true
		}
		if limit > 0 {
			if limit -= time.Since(start); limit <= 0 {
				return empty(TimeLimit), nil
			}
		}
	}

	res, err := m.runHiGHS(limit, o, false)
	res.Time = time.Since(start)
	if err != nil || !relaxUnbounded {
		return res, err
	}
	// The relaxation is unbounded: a feasible point makes the MILP
	// unbounded (rational data); without one it is infeasible or unbounded.
	switch {
	case res.HasSolution:
		return empty(Unbounded), nil
	case res.Status == Infeasible || res.Status == TimeLimit:
		return empty(res.Status), nil
	}
	return empty(InfeasibleOrUnbounded), nil
}

// hasInteger reports whether the model has integer or binary columns.
func (m *Model) hasInteger() bool {
	for _, c := range m.cols {
		if c.kind != Continuous {
			return true
		}
	}
	return false
}

// costBounded reports whether no column can improve the objective without
// limit: every column whose bound is infinite in one direction has a cost
// that worsens the objective (or leaves it) in that direction. Every ray of
// the feasible region moves only such columns that way, so then a feasible
// LP relaxation has a finite optimum.
func (m *Model) costBounded() bool {
	sign := 1.0 // minimising
	if m.maximize {
		sign = -1
	}
	for j, c := range m.cols {
		lo, hi := m.bounds(j)
		cost := sign * c.obj
		if (math.IsInf(hi, 1) && cost < 0) || (math.IsInf(lo, -1) && cost > 0) {
			return false
		}
	}
	return true
}

// hasNoLowerBound reports whether a column has lower bound -Inf.
func (m *Model) hasNoLowerBound() bool {
	for j := range m.cols {
		if lo, _ := m.bounds(j); math.IsInf(lo, -1) {
			return true
		}
	}
	return false
}

// runHiGHS solves the model (or, with relax, its LP relaxation) once with
// HiGHS under the time limit.
func (m *Model) runHiGHS(limit time.Duration, o Options, relax bool) (Result, error) {
	if err := quietStdout(); err != nil {
		return Result{Status: Error, Objective: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1)},
			fmt.Errorf("solver: model %q: %w", m.name, err)
	}
	if effectiveThreads(o.Threads) == 1 {
		return m.runHiGHSHere(limit, o, relax)
	}
	var res Result
	var err error
	onThreadedSolver(effectiveThreads(o.Threads), func() { res, err = m.runHiGHSHere(limit, o, relax) })
	return res, err
}

// quiet holds the outcome of pointing the C library's stdout away.
var quiet struct {
	once sync.Once
	err  error
}

// quietStdout makes sure, once per process, that what HiGHS prints with
// printf and puts is discarded. Options silence HiGHS's log (output_flag,
// log_to_console), but HiGHS 1.3.1 also prints a few lines with printf
// that no option controls: reportSimplexPhaseIterations
// (simplex/HSimplexReport.cpp) prints "Iteration total error ..." whenever
// its process-wide static iteration counters disagree, which happens when
// two solves run at the same time in one process (its only guard,
// HighsSimplexInfo::run_quiet, is never set true). Those lines went to
// file descriptor 1, into the middle of the CLI's tables. The C library's
// stdout stream (not the descriptor, which Go writes to directly) is
// pointed at a stream that discards; nothing else in this program writes
// through it. docs/solver.md.
func quietStdout() error {
	quiet.once.Do(func() {
		if C.wattsched_quiet_stdout() != 0 {
			quiet.err = errors.New("cannot open a discarding stream for HiGHS's printf output")
		}
	})
	return quiet.err
}

// cPrintf prints s and a newline the way HiGHS prints what no option
// silences: with the C library's printf. Tests use it.
func cPrintf(s string) {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	C.wattsched_printf(cs)
}

// effectiveThreads is the thread count a solve asking for n runs with:
// at least 1, at most MaxThreads.
func effectiveThreads(n int) int {
	return min(max(n, 1), MaxThreads())
}

// threaded is the one OS thread on which every solve with more than one
// thread runs. HiGHS 1.3.1 keeps its task scheduler per OS thread
// (HighsTaskExecutor's thread_local handle): the first solve on a thread
// starts threads-1 worker threads that live as long as the thread, and a
// later solve there asking for another count fails; goroutines move
// between OS threads, so solves with several threads on arbitrary threads
// would leave threads-1 workers behind on every OS thread that ever ran
// one. On one locked thread there is one scheduler, so the process holds
// at most MaxThreads-1 HiGHS workers; solves with several threads take
// turns (each already uses the CPUs), and one asking for another count
// than the scheduler's replaces it. Solves with one thread start no
// worker and run where they are called.
var threaded struct {
	once sync.Once
	jobs chan threadedJob
}

// threadedJob is a solve for the threaded solver: its thread count and
// the solve.
type threadedJob struct {
	threads int
	run     func()
}

// onThreadedSolver runs f, a solve with n > 1 threads, on the threaded
// solver's OS thread and waits for it.
func onThreadedSolver(n int, f func()) {
	threaded.once.Do(func() {
		threaded.jobs = make(chan threadedJob)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread keeps HiGHS's scheduler
			// The thread may have run a one-thread solve before it was
			// locked, which left a scheduler of one thread.
			current := 0
			for job := range threaded.jobs {
				if job.threads != current {
					// Stops the workers of the scheduler in place (waiting
					// for them); the solve starts one with its count.
					C.Highs_resetGlobalScheduler(1)
					current = job.threads
				}
				job.run()
			}
		}()
	})
	done := make(chan struct{})
	threaded.jobs <- threadedJob{threads: n, run: func() {
		defer close(done)
		f()
	}}
	<-done
}

// runHiGHSHere is runHiGHS on the calling goroutine's OS thread.
func (m *Model) runHiGHSHere(limit time.Duration, o Options, relax bool) (Result, error) {
	start := time.Now()
	res := Result{Status: Error, Objective: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1)}
	// Options first: HiGHS prints its banner on stdout when a model is
	// passed with output on.
	raw := highs.NewRawModel()
	defer destroy(raw)
	logPath, err := setHiGHSOptions(raw, limit, o)
	if logPath != "" {
		defer os.Remove(logPath)
	}
	if err != nil {
		return res, fmt.Errorf("solver: model %q: HiGHS options: %w", m.name, err)
	}
	if (relax || !m.hasInteger()) && m.hasNoLowerBound() {
		// HiGHS 1.3.1's LP presolve can abort the process on LPs with
		// columns unbounded below (docs/solver.md); those LPs are solved
		// without it.
		if err := raw.SetStringOption("presolve", "off"); err != nil && !isWarning(err) {
			return res, fmt.Errorf("solver: model %q: HiGHS option presolve: %w", m.name, err)
		}
	}
	if err := m.toHiGHS(raw, relax); err != nil {
		return res, fmt.Errorf("solver: model %q: pass to HiGHS: %w", m.name, err)
	}
	if n := numCols(raw); n != len(m.cols) {
		return res, fmt.Errorf("solver: model %q: HiGHS holds %d columns, the model %d", m.name, n, len(m.cols))
	}
	if o.Start != nil && !relax {
		if err := m.setStart(raw, o.Start); err != nil {
			return res, err
		}
	}

	h := handle(raw)
	runStatus := C.Highs_run(h)
	res, err = m.readHiGHS(h, runStatus, !relax && m.hasInteger())
	runtime.KeepAlive(raw)
	res.Time = time.Since(start)
	if logPath != "" {
		if cerr := copyLog(o.Log, logPath); cerr != nil && err == nil {
			err = fmt.Errorf("solver: model %q: copy HiGHS log: %w", m.name, cerr)
			res.Status, res.HasSolution, res.X = Error, false, nil
		}
	}
	return res, err
}

// toHiGHS passes the model's columns, rows, integrality (unless relax) and
// sense to a HiGHS object.
func (m *Model) toHiGHS(raw *highs.RawModel, relax bool) error {
	n := len(m.cols)
	lo, hi, cost := make([]float64, n), make([]float64, n), make([]float64, n)
	kinds := make([]highs.VariableType, n)
	integer := false
	for j, c := range m.cols {
		lo[j], hi[j] = m.bounds(j)
		cost[j] = c.obj
		if c.kind != Continuous && !relax {
			kinds[j] = highs.IntegerType
			integer = true
		}
	}
	if err := raw.AddColumnBounds(lo, hi); err != nil {
		return err
	}
	if err := raw.SetColumnCosts(cost); err != nil {
		return err
	}
	if integer {
		if err := raw.SetIntegrality(kinds); err != nil {
			return err
		}
	}
	rlo, rhi, rstart, index, value := m.sparseRows()
	if len(index) == 0 {
		// The binding cannot pass rows without coefficients: every row
		// is empty (and holds, see emptyRowExcludingZero), so one free
		// row on the first column stands in.
		rlo, rhi = []float64{math.Inf(-1)}, []float64{math.Inf(1)}
		rstart, index, value = []int{0}, []int{0}, []float64{1}
	}
	if err := raw.AddCompSparseRows(rlo, rstart, index, value, rhi); err != nil {
		return err
	}
	if err := raw.SetMaximization(m.maximize); err != nil {
		return err
	}
	return nil
}

// setStart passes a starting point: its column values and the row
// activities they give (no duals).
func (m *Model) setStart(raw *highs.RawModel, start []float64) error {
	if len(start) != len(m.cols) {
		return fmt.Errorf("solver: model %q: options: Start has %d values for %d columns", m.name, len(start), len(m.cols))
	}
	_, _, _, index, _ := m.sparseRows()
	var rows []float64
	if len(index) == 0 {
		rows = []float64{start[0]} // the free row toHiGHS stands in
	} else {
		rows = make([]float64, len(m.rows))
		for i, r := range m.rows {
			for _, t := range r.terms {
				rows[i] += t.Coef * start[t.Var]
			}
		}
	}
	col := make([]float64, len(start))
	copy(col, start)
	st := C.Highs_setSolution(handle(raw), (*C.double)(&col[0]), (*C.double)(&rows[0]), nil, nil)
	runtime.KeepAlive(raw)
	if st == C.kHighsStatusError {
		return fmt.Errorf("solver: model %q: HiGHS refused the starting point", m.name)
	}
	return nil
}

// emptyRowExcludingZero reports whether a row has only zero coefficients
// (or none) and bounds that exclude 0: no point satisfies it.
func (m *Model) emptyRowExcludingZero() bool {
	for _, r := range m.rows {
		if r.lo <= 0 && r.hi >= 0 {
			continue
		}
		empty := true
		for _, t := range r.terms {
			empty = empty && t.Coef == 0
		}
		if empty {
			return true
		}
	}
	return false
}

// setHiGHSOptions sets the time limit, gap, threads, seed and log; it
// returns the path of the log file HiGHS writes when o.Log is set.
func setHiGHSOptions(raw *highs.RawModel, limit time.Duration, o Options) (string, error) {
	threads := effectiveThreads(o.Threads)
	set := []struct {
		name string
		set  func() error
	}{
		{"log_to_console", func() error { return raw.SetBoolOption("log_to_console", false) }},
		{"output_flag", func() error { return raw.SetBoolOption("output_flag", false) }},
		{"threads", func() error { return raw.SetIntOption("threads", threads) }},
		{"random_seed", func() error { return raw.SetIntOption("random_seed", o.Seed) }},
	}
	if limit > 0 {
		set = append(set, struct {
			name string
			set  func() error
		}{"time_limit", func() error { return raw.SetFloat64Option("time_limit", limit.Seconds()) }})
	}
	if o.MaxNodes > 0 {
		set = append(set, struct {
			name string
			set  func() error
		}{"mip_max_nodes", func() error { return raw.SetIntOption("mip_max_nodes", o.MaxNodes) }})
	}
	if o.RelGap > 0 {
		set = append(set, struct {
			name string
			set  func() error
		}{"mip_rel_gap", func() error { return raw.SetFloat64Option("mip_rel_gap", o.RelGap) }})
	}
	for _, s := range set {
		if err := s.set(); err != nil && !isWarning(err) {
			return "", fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if o.Log == nil {
		return "", nil
	}
	f, err := os.CreateTemp("", "wattsched-highs-*.log")
	if err != nil {
		return "", err
	}
	path := f.Name()
	if err := f.Close(); err != nil {
		return path, err
	}
	if err := raw.SetStringOption("log_file", path); err != nil && !isWarning(err) {
		return path, fmt.Errorf("log_file: %w", err)
	}
	if err := raw.SetBoolOption("output_flag", true); err != nil && !isWarning(err) {
		return path, fmt.Errorf("output_flag: %w", err)
	}
	return path, nil
}

func isWarning(err error) bool {
	var cs highs.CallStatus
	return errors.As(err, &cs) && cs.IsWarning()
}

// readHiGHS turns HiGHS's model status, solution and information into a
// Result.
func (m *Model) readHiGHS(h unsafe.Pointer, runStatus C.HighsInt, integer bool) (Result, error) {
	res := Result{Status: Error, Objective: math.NaN(), Bound: math.NaN(), Gap: math.Inf(1)}
	ms := C.Highs_getModelStatus(h)
	switch ms {
	case C.kHighsModelStatusOptimal:
		res.Status = Optimal
	case C.kHighsModelStatusInfeasible:
		res.Status = Infeasible
	case C.kHighsModelStatusUnbounded:
		res.Status = Unbounded
	case C.kHighsModelStatusUnboundedOrInfeasible:
		res.Status = InfeasibleOrUnbounded
	case C.kHighsModelStatusTimeLimit:
		res.Status = TimeLimit
	case C.kHighsModelStatusIterationLimit:
		res.Status = IterationLimit
	default:
		return res, fmt.Errorf("solver: model %q: HiGHS ended with model status %d (run status %d)", m.name, int(ms), int(runStatus))
	}
	if runStatus == C.kHighsStatusError {
		res.Status = Error
		return res, fmt.Errorf("solver: model %q: HiGHS run failed (model status %d)", m.name, int(ms))
	}
	if integer {
		var nodes C.int64_t
		if C.Highs_getInt64InfoValue(h, cMIPNodeCount, &nodes) != C.kHighsStatusError {
			res.Nodes = int64(nodes)
		}
	}
	var iters C.HighsInt
	if C.Highs_getIntInfoValue(h, cSimplexIterationCount, &iters) != C.kHighsStatusError && iters > 0 {
		// HiGHS 1.3.1 reports -1 after a MIP run: counted as none.
		res.LPIterations = int64(iters)
	}
	if res.Status != Optimal && res.Status != TimeLimit && res.Status != IterationLimit {
		return res, nil
	}
	var pss C.HighsInt
	if C.Highs_getIntInfoValue(h, cPrimalSolutionStatus, &pss) == C.kHighsStatusError {
		res.Status = Error
		return res, fmt.Errorf("solver: model %q: HiGHS primal_solution_status unavailable", m.name)
	}
	if pss != C.kHighsSolutionStatusFeasible {
		if res.Status == Optimal {
			res.Status = Error
			return res, fmt.Errorf("solver: model %q: HiGHS reported optimal without a feasible solution (HiGHS 1.3.1 does this on some infeasible models, see docs/solver.md)", m.name)
		}
		return res, nil // time limit without an incumbent
	}
	n := len(m.cols)
	x := make([]float64, n)
	colDual := make([]float64, n)
	// At least one row was passed (toHiGHS adds one to a model without any).
	nr := max(len(m.rows), 1)
	rowValue := make([]float64, nr)
	rowDual := make([]float64, nr)
	if C.Highs_getSolution(h, (*C.double)(&x[0]), (*C.double)(&colDual[0]),
		(*C.double)(&rowValue[0]), (*C.double)(&rowDual[0])) == C.kHighsStatusError {
		res.Status = Error
		return res, fmt.Errorf("solver: model %q: HiGHS solution unavailable", m.name)
	}
	if integer {
		for j, c := range m.cols {
			if c.kind != Continuous {
				x[j] = math.Round(x[j])
			}
		}
	}
	// HiGHS checks its point itself; this check guards the layer between
	// (and HiGHS 1.3.1's known faults) so that no violated plan passes.
	if err := m.checkRelative(x, pointTol, integer); err != nil {
		res.Status = Error
		return res, fmt.Errorf("HiGHS returned a point that violates the model: %w", err)
	}
	res.HasSolution = true
	res.X = x
	res.Objective = m.Objective(x)
	res.Bound = res.Objective
	if integer {
		var b C.double
		if C.Highs_getDoubleInfoValue(h, cMIPDualBound, &b) != C.kHighsStatusError {
			res.Bound = float64(b)
		} else {
			res.Bound = math.NaN()
		}
	}
	if res.Status == Optimal && !integer {
		res.Gap = 0
	} else {
		res.Gap = relGap(res.Objective, res.Bound)
	}
	return res, nil
}

// The names of the information items read, as C strings allocated once.
var (
	cMIPNodeCount          = C.CString("mip_node_count")
	cPrimalSolutionStatus  = C.CString("primal_solution_status")
	cMIPDualBound          = C.CString("mip_dual_bound")
	cSimplexIterationCount = C.CString("simplex_iteration_count")
)

// copyLog writes the log HiGHS wrote to path to w in one Write, so that
// the logs of solves running side by side into one writer that serialises
// its Writes stay whole.
func copyLog(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
