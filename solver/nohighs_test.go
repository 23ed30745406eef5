//go:build !highs

package solver

import (
	"context"
	"errors"
	"testing"
)

// Without the highs tag the HiGHS backend says how to get it, and the
// brute-force backend still works.
func TestWithoutHiGHS(t *testing.T) {
	m := NewModel("tiny")
	x := m.AddVar("x", 0, 3, 1, Integer)
	m.AddRow("c", 2, 3, Term{x, 1})
	if _, err := HiGHS().Solve(context.Background(), m, Options{}); !errors.Is(err, ErrNoHiGHS) {
		t.Fatalf("HiGHS without the tag: %v, want ErrNoHiGHS", err)
	}
	r, err := BruteForce().Solve(context.Background(), m, Options{})
	if err != nil || r.Status != Optimal || r.Value(x) != 2 {
		t.Fatalf("brute force: %+v %v, want x = 2 optimal", r, err)
	}
}
