package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/experiment/planpower"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/scenario"
)

// planPowerFlags are plan power's flags.
type planPowerFlags struct {
	cfg, out string
	force    bool
	opt      planpower.Options
}

// planCmd is `plan`, whose one plan is `plan power`: how many nodes a
// scenario's power domains can take at a chosen risk.
func (a *app) planCmd() *cobra.Command {
	c := &cobra.Command{Use: "plan power -c scenario.yaml -o DIR --add MODEL[:GPUS] [flags]",
		Short: "plan capacity from replays: how many nodes each power domain can take",
		Long: `Plan capacity from replays of a scenario's workload. 'plan power' answers
how many more nodes of a GPU model each power domain (rack, PDU, row) of a
scenario's topology can carry, at a chosen risk that a domain's hourly power
exceeds its limit (docs/power-domains.md, "The planner").`,
		Example: "  wattsched plan power -c examples/power-domains.yaml -o out/plan --add A100:8",
		Args:    noArgs}
	var f planPowerFlags
	p := &cobra.Command{Use: "power -c scenario.yaml -o DIR --add MODEL[:GPUS] [--risk R] [--seeds N] [--draws N] [--max-add K] [--overall] [--cap] [--policy NAME] [--force]",
		Short: "each power domain's hourly power, and how many nodes of a model fit at a risk",
		Long: `Replay a scenario's workload (mode replay, with a topology: docs/power-domains.md)
with each power domain's limit lifted, and report each domain's hourly highest
power (p50, p95, p99, max over the replay's hours and the seeds). Then add nodes
of the --add model to every innermost domain at once, 1, 2, ... up to --max-add
each, replaying every step, and answer per domain the most nodes for which the
probability that the domain's hourly power exceeds its limit stays at most
--risk: the probability over the replay's hours x --seeds seeds (tie orders) x
--draws draws of the catalog's power error (draw 0 the catalog's figures, the
others each GPU model's busy power scaled by a factor within its measured p95
band). Each answer is a replayed step, never an extrapolation; the ranges over
the seeds and over the draws are shown beside it. --overall answers for the
cluster as a whole instead (nodes spread over the domains with most headroom
first). --cap also replays each step with the limits enforced, and reports what
capping costs in completion time. Writes summary.json, plan.csv, answers.csv,
a plot per domain and report.html into DIR. The power is the PWR model's
estimate: no measured per-node power series is public.`,
		Example: `  wattsched plan power -c examples/power-domains.yaml -o out/plan --add A100:8
  wattsched plan power -c examples/power-domains.yaml -o out/plan --add V100M16 --risk 0.001 --seeds 3 --cap
  wattsched plan power -c mycluster/scenario.yaml -o out/plan-all --add A10 --overall`,
		DisableFlagsInUseLine: true, Args: noArgs}
	fs := p.Flags()
	fs.StringVarP(&f.cfg, "c", "c", "", "scenario YAML file, mode replay, with a topology (required)")
	fs.StringVarP(&f.out, "o", "o", "", "results directory (required)")
	fs.BoolVar(&f.force, "force", false, "replace a non-empty results directory")
	fs.StringVar(&f.opt.Add, "add", "", "GPU model of the nodes to add, MODEL or MODEL:GPUS (vCPU and memory: the commonest shape of that model in the cluster)")
	fs.Float64Var(&f.opt.Risk, "risk", 0.01, "the most probability (over hours x seeds x power-error draws) that a domain's hourly power exceeds its limit")
	fs.IntVar(&f.opt.Seeds, "seeds", 2, "replays per step, each with its seed's tie order")
	fs.IntVar(&f.opt.Draws, "draws", 3, "draws of the catalog's power error per seed (1: the catalog's figures only)")
	fs.IntVar(&f.opt.MaxAdd, "max-add", 8, "the most nodes added to each innermost domain")
	fs.BoolVar(&f.opt.Overall, "overall", false, "answer for the cluster as a whole: nodes spread over the innermost domains")
	fs.BoolVar(&f.opt.Cap, "cap", false, "also replay each step with the limits enforced: what capping costs in completion time")
	fs.StringVar(&f.opt.Policy, "policy", "", "the scenario's policy that places the pods (default: its first)")
	p.MarkFlagFilename("c", "yaml", "yml")
	p.MarkFlagDirname("o")
	p.RunE = func(*cobra.Command, []string) error { return cmdPlanPower(a.ctx, f, a.stdout, a.stderr) }
	c.AddCommand(p)
	return c
}

// cmdPlanPower checks everything (flags, scenario, topology, the node
// added, the output directory) before any replay, then plans and
// publishes the results at once.
func cmdPlanPower(_ context.Context, f planPowerFlags, stdout, stderr io.Writer) error {
	if f.cfg == "" {
		return usageError{fmt.Errorf("plan power: -c scenario.yaml is required")}
	}
	if f.out == "" {
		return usageError{fmt.Errorf("plan power: -o DIR is required")}
	}
	if err := f.opt.Validate(); err != nil {
		return usageError{fmt.Errorf("plan power: %w", err)}
	}
	s, err := scenario.Load(f.cfg)
	if err != nil {
		return err
	}
	e := env(stderr)
	if err := s.Check(e.Registries); err != nil {
		return err
	}
	if e.Catalog, err = s.HardwareCatalog(e.Catalog); err != nil {
		return fmt.Errorf("%s: scenario %s: %w", f.cfg, s.Name, err)
	}
	if s.Mode != scenario.Replay {
		return fmt.Errorf("%s: scenario %s: mode %s: plan power replays a trace (mode: replay)", f.cfg, s.Name, s.Mode)
	}
	if s.Topology == nil {
		return fmt.Errorf("%s: scenario %s: no topology section: plan power needs the power domains (docs/power-domains.md)", f.cfg, s.Name)
	}
	in, err := tasks.LoadInputs(s)
	if err != nil {
		return fmt.Errorf("%s: scenario %s: %w", f.cfg, s.Name, err)
	}
	if err := tasks.CheckReplay(e, s, in); err != nil {
		return fmt.Errorf("%s: scenario %s: %w", f.cfg, s.Name, err)
	}
	f.opt.FirstSeed = s.FirstSeed
	pl, err := planpower.New(e, s, in, f.opt)
	if err != nil {
		return usageError{fmt.Errorf("plan power: %w", err)}
	}
	claim, err := outdir.ClaimDir(f.out, f.force)
	if err != nil {
		return err
	}
	defer claim.Release()
	plan, err := pl.Run()
	if err != nil {
		return err
	}
	res, err := planpower.Results(Version, s, in.Source, plan)
	if err != nil {
		return err
	}
	return emit(stdout, claim, []*experiment.Results{res})
}
