package cli

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/dotprod"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/policy/gpuclustering"
	"github.com/wattsched/wattsched/policy/gpupacking"
	"github.com/wattsched/wattsched/policy/pwr"
)

// validator is what every policy's Args implements.
type validator interface{ Validate() error }

// factory adapts a policy package's typed constructor to the registry:
// arguments start from the package defaults and are decoded strictly.
func factory[A validator, P policy.Scorer](name string, def A, mk func(A, policy.Deps) (P, error)) policy.ScorerFactory {
	return func(raw []byte, deps policy.Deps) (policy.Scorer, error) {
		a := def
		if len(bytes.TrimSpace(raw)) > 0 {
			dec := yaml.NewDecoder(bytes.NewReader(raw))
			dec.KnownFields(true)
			if err := dec.Decode(&a); err != nil {
				return nil, fmt.Errorf("%s args: %w", name, err)
			}
		}
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("%s args: %w", name, err)
		}
		return mk(a, deps)
	}
}

// Registry is the one place that lists the built-in placement policies.
func Registry() *policy.Registry {
	r := policy.NewRegistry()
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(r.Register(fgd.Name, factory(fgd.Name, fgd.Args{}.Default(), fgd.New)))
	must(r.Register(pwr.Name, factory(pwr.Name, pwr.Args{}.Default(), pwr.New)))
	must(r.Register(bestfit.Name, factory(bestfit.Name, bestfit.Args{}.Default(), bestfit.New)))
	must(r.Register(dotprod.Name, factory(dotprod.Name, dotprod.Args{}.Default(), dotprod.New)))
	must(r.Register(gpupacking.Name, factory(gpupacking.Name, gpupacking.Args{}.Default(), gpupacking.New)))
	must(r.Register(gpuclustering.Name, factory(gpuclustering.Name, gpuclustering.Args{}.Default(), gpuclustering.New)))
	return r
}
