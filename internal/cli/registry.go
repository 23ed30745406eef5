package cli

import (
	"context"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/cedla"
	"github.com/wattsched/wattsched/experiment/eaco"
	"github.com/wattsched/wattsched/experiment/powerflow"
	"github.com/wattsched/wattsched/experiment/pwr"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/experiment/vahrm"
	"github.com/wattsched/wattsched/scenario"
)

// studies is the one place that lists the paper reproductions
// (`wattsched reproduce <name>`); each call returns fresh values.
func studies() []experiment.Study {
	return []experiment.Study{&pwr.Study{}, &vahrm.Study{}, &powerflow.Study{}, &eaco.Study{}, &cedla.Study{}}
}

// runner runs a scenario of one mode.
type runner func(context.Context, *experiment.Env, *scenario.Scenario) ([]*experiment.Results, error)

// runners is the one place that maps scenario modes to their runners (the
// policies themselves come from policy/builtin's registries).
func runners(m scenario.Mode) runner {
	switch m {
	case scenario.HPC:
		return vahrm.RunScenario
	case scenario.Elastic:
		return powerflow.RunScenario
	case scenario.Coloc:
		return eaco.RunScenario
	case scenario.Slotted:
		return cedla.RunScenario
	}
	return tasks.RunTasks
}
