package powerflow_test

import (
	"flag"
	"fmt"
	"testing"

	"github.com/wattsched/wattsched/experiment/powerflow"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/trace/philly"
)

var ablation = flag.Bool("ablation", false, "run the growth ablation of docs/reproduce-powerflow.md")

// TestGrowthAblation measures what docs/reproduce-powerflow.md says about
// PowerFlow's shortfall: PowerFlow as built vs PowerFlow with every job held
// to its requested GPU count (no elastic growth), and the mean GPU power at
// the highest frequency (the paper's Pmax). About 20 s; run with
//
//	go test ./experiment/powerflow -run GrowthAblation -v -args -ablation
func TestGrowthAblation(t *testing.T) {
	if !*ablation {
		t.Skip("measurement for the docs: pass -args -ablation")
	}
	env, err := powerflow.NewEnv(builtin.Registries(), powerflow.DefaultSetup())
	if err != nil {
		t.Fatal(err)
	}
	gj, err := philly.Day()
	if err != nil {
		t.Fatal(err)
	}
	jobs := env.Jobs(gj, 42)
	capped := append([]policy.ElasticJob(nil), jobs...)
	for i := range capped {
		capped[i].MaxGPUs = capped[i].ReqGPUs
	}
	run := func(name string, param float64, js []policy.ElasticJob) *powerflow.RunResult {
		r, err := env.RunCase(name, param, js, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	fmt.Println("| eta | PowerFlow JCT h / MWh | mean MHz | GPU-h on 16+ GPUs | mean wait h | held to requested GPUs: JCT h / MWh | mean MHz | mean wait h |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, eta := range []float64{0.1, 0.2, 0.3, 0.5, 0.95} {
		a, b := run("PowerFlow", eta, jobs), run("PowerFlow", eta, capped)
		fmt.Printf("| %g | %.2f / %.3f | %.0f | %.0f%% | %.2f | %.2f / %.3f | %.0f | %.2f |\n", eta, a.AvgJCTh, a.EnergyMWh, a.MeanMHz, 100*a.LargeShare, a.MeanWaitH,
			b.AvgJCTh, b.EnergyMWh, b.MeanMHz, b.MeanWaitH)
	}
	for _, n := range []string{"Gandiva+Zeus", "Tiresias+Zeus"} {
		r := run(n, 0, jobs)
		fmt.Printf("%s: %.2f h / %.3f MWh, mean %.0f MHz, mean wait %.2f h\n", n, r.AvgJCTh, r.EnergyMWh, r.MeanMHz, r.MeanWaitH)
	}
	r := run("Gandiva", 1410, jobs)
	fmt.Printf("mean GPU power of running jobs at 1410 MHz (Gandiva, no restarts): %.1f W\n", r.JobMWh*1e6/r.GPUHours)
}

// TestPowerCorrectionAblation measures what docs/reproduce-powerflow.md
// says about the power limit: PowerFlow as built (correct_power with its
// 3% guard band on unmetered jobs), with the correction alone
// (unmetered_guard 0) and with the models alone (correct_power false): the
// power drawn against the limit and what the correction costs. About
// 2 min; run with
//
//	go test ./experiment/powerflow -run PowerCorrectionAblation -v -args -ablation
func TestPowerCorrectionAblation(t *testing.T) {
	if !*ablation {
		t.Skip("measurement for the docs: pass -args -ablation")
	}
	env, err := powerflow.NewEnv(builtin.Registries(), powerflow.DefaultSetup())
	if err != nil {
		t.Fatal(err)
	}
	gj, err := philly.Day()
	if err != nil {
		t.Fatal(err)
	}
	jobs := env.Jobs(gj, 42)
	fmt.Println("| eta | variant | JCT h | MWh | max actual / limit | h above limit | kWh above | restarts |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, eta := range []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.95} {
		for _, v := range []struct {
			name    string
			correct bool
			guard   float64
		}{{"as built", true, 0.03}, {"correction, no guard band", true, 0}, {"models only", false, 0}} {
			sys, err := powerflow.System(powerflow.NamePowerFlow, eta)
			if err != nil {
				t.Fatal(err)
			}
			r, err := env.Run(sys.WithArg("correct_power", v.correct).WithArg("unmetered_guard", v.guard), jobs, 0, false)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("| %g | %s | %.2f | %.3f | %.4f | %.2f | %.2f | %d |\n", eta, v.name, r.AvgJCTh, r.EnergyMWh, r.MaxActualW/r.LimitW, r.AboveLimitH, r.AboveLimitKWh, r.Restarts)
		}
	}
}
