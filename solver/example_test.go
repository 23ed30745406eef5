//go:build highs

package solver_test

import (
	"context"
	"fmt"
	"math"

	"github.com/wattsched/wattsched/solver"
)

// A knapsack with one general integer: maximise 5a + 4b + 3c subject to
// 2a + 3b + c <= 5 with a, b binary and c integer in [0, 2]. The best
// choices: a=1, c=2 (weight 4, value 11) beats a=1, b=1 (weight 5, value 9).
func Example() {
	m := solver.NewModel("knapsack")
	a := m.AddVar("a", 0, 1, 5, solver.Binary)
	b := m.AddVar("b", 0, 1, 4, solver.Binary)
	c := m.AddVar("c", 0, 2, 3, solver.Integer)
	m.AddRow("weight", math.Inf(-1), 5, solver.Term{Var: a, Coef: 2}, solver.Term{Var: b, Coef: 3}, solver.Term{Var: c, Coef: 1})
	m.Maximize()
	res, err := solver.HiGHS().Solve(context.Background(), m, solver.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Objective, res.Value(a), res.Value(b), res.Value(c))
	// Output: optimal 11 1 0 2
}
