//go:build !highs

package solver

import (
	"context"
	"errors"
)

// ErrNoHiGHS is what HiGHS's Solve returns in a binary built without the
// highs build tag (plain `go build` or `go install`): the HiGHS library is
// linked only by the project's Makefile (`make build`, `make test`), which
// installs it and sets the tag.
var ErrNoHiGHS = errors.New("solver: this wattsched was built without HiGHS: build it with 'make build' (which installs the HiGHS library), or 'make setup' then 'eval \"$(make -s env)\"' and 'go build -tags highs'")

// Available reports whether this build links HiGHS (the highs build tag).
func Available() bool { return false }

// HiGHS is the HiGHS backend; in this build it only reports ErrNoHiGHS.
func HiGHS() Solver { return noHiGHS{} }

type noHiGHS struct{}

func (noHiGHS) Solve(_ context.Context, m *Model, o Options) (Result, error) {
	return Result{Status: Error}, ErrNoHiGHS
}

// Version is "" in a build without HiGHS (solver/version_highs.go has the
// linked library's).
func Version() string { return "" }
