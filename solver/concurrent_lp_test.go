//go:build highs

package solver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/wattsched/wattsched/solver"
)

// transport is a transportation LP: n sources with supplies, n sinks with
// demands (total supply exceeds demand), a random cost per pair; the
// simplex needs many iterations and presolve does not solve it.
func transport(r *rand.Rand, n int) *solver.Model {
	m := solver.NewModel(fmt.Sprintf("transport%d", n))
	x := make([][]solver.Var, n)
	for i := range n {
		x[i] = make([]solver.Var, n)
		for j := range n {
			x[i][j] = m.AddVar(fmt.Sprintf("x[%d,%d]", i, j), 0, inf, float64(1+r.IntN(100)), solver.Continuous)
		}
	}
	for i := range n {
		var ts []solver.Term
		for j := range n {
			ts = append(ts, term(x[i][j], 1))
		}
		m.AddRow(fmt.Sprintf("supply[%d]", i), -inf, float64(20+r.IntN(20)), ts...)
	}
	for j := range n {
		var ts []solver.Term
		for i := range n {
			ts = append(ts, term(x[i][j], 1))
		}
		m.AddRow(fmt.Sprintf("demand[%d]", j), float64(5+r.IntN(15)), inf, ts...)
	}
	return m
}

// TestConcurrentLPs: LPs solved side by side (as the seeds of a CE-DLA
// run are) give the sequential solves' optima. TestQuietStdout runs it in
// a child process: HiGHS 1.3.1 printed "Iteration total error" lines to
// stdout when two simplex solves overlapped.
func TestConcurrentLPs(t *testing.T) {
	const workers, per = 4, 12
	var ms []*solver.Model
	for s := range uint64(workers * per) {
		ms = append(ms, transport(rand.New(rand.NewPCG(s, 7)), 30))
	}
	seq := make([]float64, len(ms))
	for i, m := range ms[:workers] {
		r, err := solver.HiGHS().Solve(context.Background(), m, exact)
		if err != nil || r.Status != solver.Optimal {
			t.Fatalf("%d: %v %v", i, r.Status, err)
		}
		seq[i] = r.Objective
	}
	par := make([]float64, len(ms))
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(ms); k += workers {
				r, err := solver.HiGHS().Solve(context.Background(), ms[k], exact)
				if err == nil && r.Status != solver.Optimal {
					err = fmt.Errorf("status %v", r.Status)
				}
				par[k], errs[k] = r.Objective, err
			}
		}()
	}
	wg.Wait()
	for i := range ms {
		if errs[i] != nil {
			t.Errorf("model %d: %v", i, errs[i])
		} else if i < workers && par[i] != seq[i] {
			t.Errorf("model %d: parallel optimum %v, sequential %v", i, par[i], seq[i])
		}
	}
}
