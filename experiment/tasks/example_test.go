package tasks_test

import (
	"fmt"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
)

// Run the PWR paper's comparison programmatically and read one curve point.
func ExampleRunInflation() {
	s, _ := scenario.Builtin("pwr-default")
	s.Seeds = 1
	s.Policies = s.Policies[:3] // FGD, PWR, 0.05*PWR+0.95*FGD
	in, _ := tasks.LoadInputs(s)
	env := &experiment.Env{Version: "example", Registries: builtin.Registries(), Catalog: hw.Default()}
	res, err := tasks.RunInflation(env, s, in)
	if err != nil {
		panic(err)
	}
	curves := res.Curves()
	p, _ := tasks.At(tasks.Series(curves, "PWR"), 0.5)
	fmt.Printf("PWR at 50%% requested: saving vs FGD above 10%%: %v\n", p.SavingVsFGD > 0.10)
	// Output: PWR at 50% requested: saving vs FGD above 10%: true
}
