package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/powerflow"
	"github.com/wattsched/wattsched/experiment/pwr"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/experiment/vahrm"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/alibaba2023"
	"github.com/wattsched/wattsched/trace/philly"
)

// engineBudget is the most CPU that ten times the work may cost, as a
// multiple of the CPU of the work once (issue 39).
const engineBudget = 12.0

// EnginePoint is one engine's run at one size: what grew, and the CPU of
// the run at 1x and 10x.
type EnginePoint struct {
	Engine, Work string
	// Jobs are the jobs (tasks, pods) at 1x and 10x.
	Jobs [2]int
	// CPU is each size's CPU seconds (getrusage, user + system,
	// GOMAXPROCS=1), the least of the repetitions.
	CPU [2]float64
}

// Ratio is the 10x run's CPU over the 1x run's.
func (p EnginePoint) Ratio() float64 { return p.CPU[1] / p.CPU[0] }

// engineCase is one engine's work at a size factor (1 or 10): prepare
// builds the inputs and models (not timed) and returns the run (timed),
// which returns the jobs (tasks, pods) it ran.
type engineCase struct {
	engine, work string
	prepare      func(factor int) (run func() (int, error), err error)
}

// engineScenario parses a scenario text and returns a run of it through
// its mode's runner, quietly and on one worker (the runner loads its own
// inputs and models: that part is timed too), and its job count.
func engineScenario(text string, count int) (func() (int, error), error) {
	s, err := scenario.Parse([]byte(text), "bench-engines")
	if err != nil {
		return nil, err
	}
	env := &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
	return func() (int, error) { _, err := runners(s.Mode)(context.Background(), env, s); return count, err }, nil
}

// engineCases are the six engines' workloads, and the replay engine's
// with gang jobs. Where an engine runs jobs
// on a fixed machine (hpc, elastic, coloc, slotted), 10x is ten times the
// jobs arriving at the same rate over ten times the horizon on the same
// nodes; where the nodes set the work (inflation draws tasks until the
// cluster is full) or the trace sets the rate (replay, every copy of the
// pod list at its recorded times), 10x is ten times the nodes and the
// jobs together.
func engineCases() []engineCase {
	return []engineCase{
		{"inflation", "openb Default to the PWR study's capacity, FGD; node list x1 / x10", func(f int) (func() (int, error), error) {
			s, err := pwr.Scenario("default", 1, "")
			if err != nil {
				return nil, err
			}
			s.Policies = s.Policies[:1]
			in, err := tasks.LoadInputs(s)
			if err != nil {
				return nil, err
			}
			if in, err = scaledInputs(in, f); err != nil {
				return nil, err
			}
			env := &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
			return func() (int, error) {
				res, err := tasks.RunInflation(env, s, in)
				if err != nil {
					return 0, err
				}
				return res.Runs[0].Tasks, nil
			}, nil
		}},
		{"replay", "openb Default pods x1 / x10 at their recorded times on the node list x1 / x10, FGD", func(f int) (func() (int, error), error) {
			s, err := scenario.Parse([]byte(replayBenchYAML), "bench-engines")
			if err != nil {
				return nil, err
			}
			s.Policies = s.Policies[:1]
			in, err := tasks.LoadInputs(s)
			if err != nil {
				return nil, err
			}
			if in, err = scaledInputs(in, f); err != nil {
				return nil, err
			}
			if in.Pods, err = alibaba2023.RepeatPods(in.Pods, f); err != nil {
				return nil, err
			}
			env := &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
			return func() (int, error) { _, err := tasks.RunReplay(env, s, in); return len(in.Pods), err }, nil
		}},
		{"gangs", "the Philly day (2017-10-13, 1,896 jobs) as pods of at most 4 GPUs (its 8- and 16-GPU jobs gangs of 2 and 4 pods), x1 / x10 at the recorded times on 96 nodes of 4 P100 x1 / x10, FGD", gangBench},
		{"mig", "openb Default pods x1 / x10, GPU shares as A100 MIG instances (trace.shares_as_mig), at their recorded times on the node list x1 / x10 with the G3 (A100) nodes in dynamic MIG, FGD", migBench},
		{"hpc", "NASA iPSC log, first 1,500 / 15,000 jobs, SR 8, 540 nodes, VAHRM+IDEAL (workload 4)", func(f int) (func() (int, error), error) {
			env, err := vahrm.NewEnvIdeal(builtin.Registries(), 1500*f, 42)
			if err != nil {
				return nil, err
			}
			systems, err := vahrm.Systems("VAHRM+IDEAL")
			if err != nil {
				return nil, err
			}
			set := vahrm.DefaultSetting()
			set.SR = 8
			return func() (int, error) {
				_, err := env.Run(systems[0], vahrm.Workloads()[4], set)
				return len(env.Log.Jobs), err
			}, nil
		}},
		{"elastic", "the Philly day's jobs of at most 12 h, repeated 1 / 10 times a day apart, 48 nodes, PowerFlow at eta 0.5", func(f int) (func() (int, error), error) {
			env, err := powerflow.NewEnv(builtin.Registries(), powerflow.DefaultSetup())
			if err != nil {
				return nil, err
			}
			gj, err := philly.Day()
			if err != nil {
				return nil, err
			}
			// Jobs that outlast the day they arrive in would pile up over
			// the repeated days (ten times as many at once at 10x): that
			// is the workload growing, not the engine.
			gj = slices.DeleteFunc(gj, func(j trace.GPUJob) bool { return j.DurationSec > 12*3600 })
			jobs := repeatDays(env.Jobs(gj, 42), f)
			return func() (int, error) {
				_, err := env.RunCase("PowerFlow", 0.5, jobs, 48, false)
				return len(jobs), err
			}, nil
		}},
		{"coloc", "Gavel msr jobs, Poisson 25 per hour, 2,000 / 20,000 jobs on 128 nodes, FIFO and EaCO", func(f int) (func() (int, error), error) {
			n := 2000 * f
			return engineScenario(fmt.Sprintf(`name: bench-coloc
mode: coloc
seeds: 1
coloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 25, count: %d, nodes: 128, systems: [FIFO, EaCO]}
`, n), n)
		}},
		{"slotted", "100 / 1,000 generated jobs over 1 / 10 days of slots (NYISO 2023 prices), 24 nodes per type, FIFO and EPRONS", func(f int) (func() (int, error), error) {
			n := 100 * f
			return engineScenario(fmt.Sprintf(`name: bench-slotted
mode: slotted
seeds: 1
grid: {region: US-NY-NYIS, start: "2023-03-01 00:00:00"}
slotted:
  nodes: {GTX1060-3GB: 24, GTX1060-6GB: 24, RTX2060: 24, GTX1080: 24}
  slots: %d
  jobs: {count: %d}
  inference: {req_per_min: 5000}
  systems: [FIFO, EPRONS]
`, 96*f, n), n)
		}},
	}
}

// repeatDays is jobs followed by copies of themselves shifted by a day,
// factor copies in all, with IDs in arrival order.
func repeatDays(jobs []policy.ElasticJob, factor int) []policy.ElasticJob {
	out := make([]policy.ElasticJob, 0, len(jobs)*factor)
	for d := range factor {
		for _, j := range jobs {
			j.Submit += job.Time(d) * 24 * 3600 * 1000
			j.ID = len(out)
			out = append(out, j)
		}
	}
	return out
}

// measureEngines runs every engine at 1x and 10x, reps times, interleaved,
// keeping each size's least CPU; engines not in keep (when keep is not
// empty) are left out.
func measureEngines(keep map[string]bool, reps int, progress func(string)) ([]EnginePoint, error) {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var pts []EnginePoint
	for _, c := range engineCases() {
		if len(keep) > 0 && !keep[c.engine] {
			continue
		}
		p := EnginePoint{Engine: c.engine, Work: c.work}
		for r := range reps {
			for i, f := range []int{1, 10} {
				run, err := c.prepare(f)
				if err != nil {
					return nil, fmt.Errorf("%s x%d: %w", c.engine, f, err)
				}
				cpu0 := cpuSeconds()
				n, err := run()
				if err != nil {
					return nil, fmt.Errorf("%s x%d: %w", c.engine, f, err)
				}
				cpu := cpuSeconds() - cpu0
				if r == 0 || cpu < p.CPU[i] {
					p.CPU[i] = cpu
				}
				p.Jobs[i] = n
				if progress != nil {
					progress(fmt.Sprintf("%s x%d: %.2f CPU s", c.engine, f, cpu))
				}
			}
		}
		pts = append(pts, p)
	}
	return pts, nil
}

// writeEngineTable prints each engine's CPU at 1x and 10x, the ratio and
// whether it is within the budget.
func writeEngineTable(w io.Writer, pts []EnginePoint) error {
	fmt.Fprintf(w, "each engine at 1x and 10x its work, one core (GOMAXPROCS=1), least CPU of the repetitions; budget: 10x the work at most %.0fx the CPU\n", engineBudget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "engine\tjobs 1x\tjobs 10x\tCPU s 1x\tCPU s 10x\tratio\twithin budget\twork")
	for _, p := range pts {
		ok := "yes"
		if p.Ratio() > engineBudget {
			ok = "no"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.2f\t%.1fx\t%s\t%s\n", p.Engine, p.Jobs[0], p.Jobs[1], p.CPU[0], p.CPU[1], p.Ratio(), ok, p.Work)
	}
	return tw.Flush()
}

// cmdBenchEngines is bench --engines: "all" or a comma-separated list.
func cmdBenchEngines(stdout io.Writer, which string, reps int) error {
	if reps < 1 {
		return usageError{fmt.Errorf("--reps %d, want at least 1", reps)}
	}
	keep := map[string]bool{}
	if which != "all" {
		known := map[string]bool{}
		for _, c := range engineCases() {
			known[c.engine] = true
		}
		for _, e := range strings.Split(which, ",") {
			e = strings.TrimSpace(e)
			if !known[e] {
				return usageError{fmt.Errorf("--engines %q: unknown engine %q, want all or some of inflation, replay, gangs, mig, hpc, elastic, coloc, slotted", which, e)}
			}
			keep[e] = true
		}
	}
	pts, err := measureEngines(keep, reps, nil)
	if err != nil {
		return err
	}
	if err := writeEngineTable(stdout, pts); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "peak RSS of this process: %.2f GB\n", peakRSSGB())
	return nil
}

// migBenchYAML is the mig row's scenario: the openb Default replay with
// the GPU-share pods that accept the G3 (A100) nodes as MIG instances on
// those nodes in dynamic MIG.
const migBenchYAML = `name: bench-mig
mode: replay
trace: {pods: default, shares_as_mig: G3}
mig: [{gpu_model: G3, dynamic: true}]
policies: [{name: FGD, scorers: [{policy: fgd, weight: 1000}]}]
`

// migBench is the mig row: the replay row's pods and nodes with MIG
// (migBenchYAML); 10x is ten times the nodes and the pods, as the replay
// row.
func migBench(f int) (func() (int, error), error) {
	s, err := scenario.Parse([]byte(migBenchYAML), "bench-engines")
	if err != nil {
		return nil, err
	}
	in, err := tasks.LoadInputs(s)
	if err != nil {
		return nil, err
	}
	if in, err = scaledInputs(in, f); err != nil {
		return nil, err
	}
	if in.Pods, err = alibaba2023.RepeatPods(in.Pods, f); err != nil {
		return nil, err
	}
	env := &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
	return func() (int, error) { _, err := tasks.RunReplay(env, s, in); return len(in.Pods), err }, nil
}

// gangBench is the gangs row: the embedded Philly day as pods of at most
// 4 GPUs (philly.Pods), its multi-GPU jobs over 4 GPUs gangs, replayed
// under FGD; 10x is ten times the nodes and the pods (each copy its own
// gang), as the replay row.
func gangBench(f int) (func() (int, error), error) {
	s, err := scenario.Parse([]byte(replayBenchYAML), "bench-engines")
	if err != nil {
		return nil, err
	}
	s.Policies = s.Policies[:1]
	gj, err := philly.Day()
	if err != nil {
		return nil, err
	}
	pods, err := philly.Pods(gj, philly.PodShape{NodeGPUs: 4, CPUMilliPerGPU: 4000, MemMiBPerGPU: 32768})
	if err != nil {
		return nil, err
	}
	in := &tasks.Inputs{Source: philly.DayName + " as pods"}
	for i := range 96 {
		in.Nodes = append(in.Nodes, cluster.NodeSpec{Name: fmt.Sprintf("p100-%02d", i), CPUMilli: 32000, MemMiB: 262144, GPUs: 4, GPUModel: "P100"})
	}
	if in, err = scaledInputs(in, f); err != nil {
		return nil, err
	}
	if in.Pods, err = alibaba2023.RepeatPods(pods, f); err != nil {
		return nil, err
	}
	env := &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
	return func() (int, error) { _, err := tasks.RunReplay(env, s, in); return len(in.Pods), err }, nil
}
