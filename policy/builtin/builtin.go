// Package builtin is the one place that lists wattsched's built-in
// policies: it builds a registry per policy family (placement scorers, HPC
// schedulers, elastic schedulers, co-location schedulers, slotted
// planners), each entry with typed arguments decoded
// strictly from YAML. Scenario files, the paper studies and the CLI all
// build policies through these registries.
package builtin

import (
	"fmt"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/afs"
	"github.com/wattsched/wattsched/policy/bestfit"
	"github.com/wattsched/wattsched/policy/cedla"
	"github.com/wattsched/wattsched/policy/dotprod"
	"github.com/wattsched/wattsched/policy/eaco"
	"github.com/wattsched/wattsched/policy/energy"
	"github.com/wattsched/wattsched/policy/eprons"
	"github.com/wattsched/wattsched/policy/fcfs"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/policy/fifo"
	"github.com/wattsched/wattsched/policy/fifopacked"
	"github.com/wattsched/wattsched/policy/gandiva"
	"github.com/wattsched/wattsched/policy/gandivapack"
	"github.com/wattsched/wattsched/policy/gpuclustering"
	"github.com/wattsched/wattsched/policy/gpupacking"
	"github.com/wattsched/wattsched/policy/pambt"
	"github.com/wattsched/wattsched/policy/powerflow"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/policy/slotfifo"
	"github.com/wattsched/wattsched/policy/tiresias"
	"github.com/wattsched/wattsched/policy/vahrm"
	"github.com/wattsched/wattsched/policy/zeus"
	"github.com/wattsched/wattsched/solver"
)

// scorer, hpc, elastic, colocated and slotted adapt typed constructors to
// their family.
func scorer[A policy.Args[A], P policy.Scorer](mk func(A, policy.Deps) (P, error)) policy.Factory[policy.Scorer, policy.Deps] {
	return policy.Typed(func(a A, d policy.Deps) (policy.Scorer, error) { return mk(a, d) })
}

func hpc[A policy.Args[A], P policy.HPCScheduler](mk func(A, policy.HPCDeps) (P, error)) policy.Factory[policy.HPCScheduler, policy.HPCDeps] {
	return policy.Typed(func(a A, d policy.HPCDeps) (policy.HPCScheduler, error) { return mk(a, d) })
}

func elastic[A policy.Args[A], P policy.ElasticScheduler](mk func(A, policy.ElasticDeps) (P, error)) policy.Factory[policy.ElasticScheduler, policy.ElasticDeps] {
	return policy.Typed(func(a A, d policy.ElasticDeps) (policy.ElasticScheduler, error) { return mk(a, d) })
}

func colocated[A policy.Args[A], P policy.ColocScheduler](mk func(A, policy.ColocDeps) (P, error)) policy.Factory[policy.ColocScheduler, policy.ColocDeps] {
	return policy.Typed(func(a A, d policy.ColocDeps) (policy.ColocScheduler, error) { return mk(a, d) })
}

func slotted[A policy.Args[A], P policy.SlotPlanner](mk func(A, policy.SlotDeps) (P, error)) policy.Factory[policy.SlotPlanner, policy.SlotDeps] {
	return policy.Typed(func(a A, d policy.SlotDeps) (policy.SlotPlanner, error) { return mk(a, d) })
}

// newCEDLA builds CE-DLA with the family's solver.
func newCEDLA(a cedla.Args, d policy.SlotDeps) (*cedla.Policy, error) {
	if d.Solver == nil {
		return nil, policy.ErrNoSolver
	}
	s, ok := d.Solver.(solver.Solver)
	if !ok {
		return nil, fmt.Errorf("cedla: SlotDeps.Solver is a %T, want a solver.Solver", d.Solver)
	}
	p, err := cedla.New(a, s, d.RestartSeconds)
	if err != nil {
		return nil, err
	}
	p.Log = d.SolverLog
	return p, nil
}

// Registries returns a fresh set of registries with every built-in policy.
func Registries() *policy.Registries {
	r := policy.NewRegistries()
	errs := []error{
		r.Scorers.Register(fgd.Name, scorer(fgd.New)),
		r.Scorers.Register(pwr.Name, scorer(pwr.New)),
		r.Scorers.Register(energy.Name, scorer(energy.New)),
		r.Scorers.Register(bestfit.Name, scorer(bestfit.New)),
		r.Scorers.Register(dotprod.Name, scorer(dotprod.New)),
		r.Scorers.Register(gpupacking.Name, scorer(gpupacking.New)),
		r.Scorers.Register(gpuclustering.Name, scorer(gpuclustering.New)),

		r.HPC.Register(fcfs.Name, hpc(fcfs.New)),
		r.HPC.Register(vahrm.Name, hpc(vahrm.New)),

		r.Elastic.Register(powerflow.Name, elastic(powerflow.New)),
		r.Elastic.Register(gandiva.Name, elastic(gandiva.New)),
		r.Elastic.Register(tiresias.Name, elastic(tiresias.New)),
		r.Elastic.Register(afs.Name, elastic(afs.New)),
		r.Elastic.Register(zeus.Name, elastic(zeus.New)),

		r.Coloc.Register(fifo.Name, colocated(fifo.New)),
		r.Coloc.Register(fifopacked.Name, colocated(fifopacked.New)),
		r.Coloc.Register(gandivapack.Name, colocated(gandivapack.New)),
		r.Coloc.Register(eaco.Name, colocated(eaco.New)),

		r.Slotted.Register(cedla.Name, slotted(newCEDLA)),
		r.Slotted.Register(slotfifo.Name, slotted(slotfifo.Build)),
		r.Slotted.Register(eprons.Name, slotted(eprons.Build)),
		r.Slotted.Register(pambt.Name, slotted(pambt.Build)),
	}
	for _, err := range errs {
		if err != nil {
			// The list above is fixed: a duplicate is a programming error
			// that every test run reports.
			panic(fmt.Sprintf("builtin registries: %v", err))
		}
	}
	return r
}
