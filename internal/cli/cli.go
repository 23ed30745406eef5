// Package cli implements the wattsched command: subcommands, flags,
// progress output and the built-in policy registry.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/trace/alibaba2023"
	"github.com/wattsched/wattsched/trace/philly"
)

// fgdSimAnchorSeconds is the CPU time the public FGD simulator needs for one
// Default-trace inflation run on this machine kind, as the project's issue states it.
const fgdSimAnchorSeconds = 1800.0

// Version is wattsched's version, written into every result.
const Version = "0.1.0"

const usage = `wattsched — energy-aware GPU-cluster scheduling toolkit

Usage:
  wattsched run [-c scenario.yaml] -o DIR [--seeds N] [--force]
        run a scenario: inflation, replay or hpc (default: the embedded pwr-default scenario)
  wattsched reproduce pwr -o DIR [--seeds N] [--trace NAME[,NAME...]] [--compat fgd-sim] [--force]
        reproduce the PWR paper's comparison on openb traces and check its claims
  wattsched reproduce vahrm -o DIR [--jobs N] [--quick] [--seed S] [--swf FILE [--procs-per-node P]] [--force]
        reproduce the VAHRM paper's evaluation (stand-in data, see the output)
  wattsched reproduce powerflow -o DIR [--quick] [--seed S] [--nodes N] [--pai-jobs F --pai-tasks F | --philly F [--start T]] [--hours H] [--force]
        reproduce the PowerFlow paper's evaluation (stand-in data, see the output)
  wattsched bench [--policies a,b] [--trace NAME]
        time one inflation run per policy on the 1213-node cluster (one core)
  wattsched traces
        list the embedded openb traces
  wattsched version
`

// Run executes the command line and returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:], stdout, stderr)
	case "reproduce":
		err = cmdReproduce(ctx, args[1:], stdout, stderr)
	case "bench":
		err = cmdBench(args[1:], stdout)
	case "traces":
		fmt.Fprintln(stdout, strings.Join(alibaba2023.Traces(), "\n"))
	case "version":
		fmt.Fprintln(stdout, "wattsched", Version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "wattsched: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "wattsched: %v\n", err)
			return 2
		}
		log.Debug("failed", "err", err)
		fmt.Fprintf(stderr, "wattsched: %v\n", err)
		return 1
	}
	return 0
}

type usageError struct{ error }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// progress reports finished runs: a rewritten line on a terminal, a line
// per tenth of the work otherwise (CI logs).
func progress(stderr io.Writer) func(done, total int, what string) {
	start := time.Now()
	tty := false
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return func(done, total int, what string) {
		el := time.Since(start).Seconds()
		switch {
		case tty:
			fmt.Fprintf(stderr, "\r[%d/%d] %-40s %6.1fs", done, total, what, el)
			if done == total {
				fmt.Fprintln(stderr)
			}
		case done == total || done*10/total != (done-1)*10/total:
			fmt.Fprintf(stderr, "[%d/%d] %s %.1fs\n", done, total, what, el)
		}
	}
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	cfg := fs.String("c", "", "scenario YAML file (default: embedded pwr-default)")
	out := fs.String("o", "", "results directory (required)")
	seeds := fs.Int("seeds", 0, "override the scenario's number of seeds")
	force := fs.Bool("force", false, "replace a non-empty results directory")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" {
		return usageError{errors.New("run: -o DIR is required")}
	}
	var s *experiment.Scenario
	var err error
	if *cfg == "" {
		s, err = experiment.Builtin("pwr-default")
	} else {
		s, err = experiment.Load(*cfg)
	}
	if err != nil {
		return err
	}
	if *seeds > 0 {
		s.Seeds = *seeds
		if err := s.Validate(); err != nil {
			return err
		}
	}
	switch s.Mode {
	case "replay":
		return runReplay(s, *out, *force, stdout, stderr)
	case "hpc":
		return runHPC(s, *out, *force, stdout, stderr)
	}
	res, err := runInflation(ctx, s, stderr)
	if err != nil {
		return err
	}
	return finish(*out, *force, s, res, nil, stdout)
}

func runInflation(_ context.Context, s *experiment.Scenario, stderr io.Writer) (*experiment.InflationResult, error) {
	in, err := experiment.LoadInputs(s.Trace)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	fmt.Fprintf(stderr, "%s: %d policies x %d seeds on %s\n", s.Name, len(s.Policies), s.Seeds, in.Source)
	r := &experiment.Runner{Registry: Registry(), Catalog: hw.Default(), Progress: progress(stderr)}
	return r.RunInflation(s, in)
}

func runReplay(s *experiment.Scenario, dir string, force bool, stdout, stderr io.Writer) error {
	in, err := experiment.LoadInputs(s.Trace)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	fmt.Fprintf(stderr, "%s: replaying %d tasks under %d policies on %s\n", s.Name, len(in.Pods), len(s.Policies), in.Source)
	r := &experiment.Runner{Registry: Registry(), Catalog: hw.Default(), Progress: progress(stderr)}
	runs, err := r.RunReplay(s, in)
	if err != nil {
		return err
	}
	if err := experiment.PrepareDir(dir, force); err != nil {
		return err
	}
	if err := experiment.WriteReplay(dir, Version, s, in, runs); err != nil {
		return err
	}
	printTable(stdout, experiment.ReplayTable(runs))
	fmt.Fprintf(stdout, "results in %s (summary.json, jobs.csv, timeline.csv, power.svg, report.html)\n", dir)
	return nil
}

func runHPC(s *experiment.Scenario, dir string, force bool, stdout, stderr io.Writer) error {
	log, err := experiment.LoadHPCLog(s.HPC)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if err := experiment.PrepareDir(dir, force); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s: %d jobs of %s on the 540-node VAHRM system, %d workloads x %d systems x %d seeds\n", s.Name, len(log.Jobs), s.HPC.SWF, len(s.HPC.Workloads), len(s.HPC.Systems), s.Seeds)
	r, err := experiment.RunHPCScenario(s, log, Version, 0, progress(stderr))
	if err != nil {
		return err
	}
	if err := experiment.WriteHPCScenario(dir, r); err != nil {
		return err
	}
	for _, x := range r.StandIns {
		fmt.Fprintln(stdout, "stand-in:", x)
	}
	fmt.Fprintln(stdout)
	printTable(stdout, experiment.HPCScenarioTable(r))
	fmt.Fprintf(stdout, "results in %s (summary.json, runs.csv, energy_by_workload.svg, report.html)\n", dir)
	return nil
}

func finish(dir string, force bool, s *experiment.Scenario, res *experiment.InflationResult, claims []experiment.Claim, stdout io.Writer) error {
	curves := res.Curves()
	ps := res.Summaries(curves)
	cr := experiment.EvaluateClaims(claims, curves)
	sum := experiment.NewSummary(Version, res, ps, cr)
	cmp, err := experiment.CompareFGDSim(res)
	if err != nil {
		return err
	}
	sum.FGDSimCompare = cmp
	if err := experiment.PrepareDir(dir, force); err != nil {
		return err
	}
	if err := experiment.WriteInflation(dir, sum, curves, res); err != nil {
		return err
	}
	printTable(stdout, experiment.SummaryTable(ps))
	if len(cr) > 0 {
		printTable(stdout, experiment.ClaimsTable(cr))
	}
	if cmp != nil {
		fmt.Fprintf(stdout, "FGD vs the FGD simulator's published curves: largest gap %.3f points at %d%% requested (%s)\n\n",
			float64(cmp.MaxAbsDiff), cmp.AtPercent, cmp.Note)
	}
	fmt.Fprintf(stdout, "results in %s (summary.json, capacity.csv, fgdsim_alloc.csv, report.html, *.svg)\n", dir)
	return nil
}

func printTable(w io.Writer, t report.Table) {
	fmt.Fprintf(w, "%s\n", t.Title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Head, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "vahrm" {
		return cmdReproduceVAHRM(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "powerflow" {
		return cmdReproducePowerFlow(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "pwr" {
		return usageError{errors.New("reproduce: which paper? (available: pwr, vahrm, powerflow)")}
	}
	fs := newFlags("reproduce pwr", stderr)
	out := fs.String("o", "", "results directory (required)")
	seeds := fs.Int("seeds", 10, "seeds per policy (the paper used 10)")
	traces := fs.String("trace", "default", "openb pod list(s), comma-separated (see 'wattsched traces')")
	compat := fs.String("compat", "", "fgd-sim: draw tasks and break ties exactly as the public FGD simulator")
	force := fs.Bool("force", false, "replace a non-empty results directory")
	if err := fs.Parse(args[1:]); err != nil {
		return usageError{err}
	}
	if *out == "" {
		return usageError{errors.New("reproduce: -o DIR is required")}
	}
	names := strings.Split(*traces, ",")
	var scs []*experiment.Scenario
	for _, t := range names {
		s, err := experiment.PWRScenario(strings.TrimSpace(t), *seeds, *compat)
		if err != nil {
			return err
		}
		scs = append(scs, s)
	}
	if len(scs) > 1 {
		if err := experiment.PrepareDir(*out, *force); err != nil {
			return err
		}
	}
	for _, s := range scs {
		res, err := runInflation(ctx, s, stderr)
		if err != nil {
			return err
		}
		dir := *out
		if len(scs) > 1 {
			dir = *out + string(os.PathSeparator) + s.Trace.Pods
		}
		fmt.Fprintf(stdout, "== PWR reproduction on openb_pod_list_%s (%d seeds) ==\n", s.Trace.Pods, s.Seeds)
		if err := finish(dir, *force, s, res, experiment.PWRClaims(s.Trace.Pods), stdout); err != nil {
			return err
		}
	}
	return nil
}

func cmdReproduceVAHRM(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reproduce vahrm", stderr)
	out := fs.String("o", "", "results directory (required)")
	jobs := fs.Int("jobs", 10000, "jobs taken from the log (the paper used 10,000)")
	quick := fs.Bool("quick", false, "fewer sweep points and systems")
	seed := fs.Uint64("seed", 42, "seed for device power, job types and model errors")
	force := fs.Bool("force", false, "replace a non-empty results directory")
	swfPath := fs.String("swf", "", "an SWF job log to use instead of the embedded NASA iPSC/860 log (.gz allowed)")
	ppn := fs.Int("procs-per-node", 1, "with --swf: processors per node of that log")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" {
		return usageError{errors.New("reproduce vahrm: -o DIR is required")}
	}
	if *jobs < 1 {
		return usageError{fmt.Errorf("reproduce vahrm: --jobs %d, want >= 1", *jobs)}
	}
	var log *experiment.VAHRMLog
	if *swfPath != "" {
		var err error
		if log, err = experiment.LoadHPCLog(&experiment.HPCSpec{SWF: *swfPath, Jobs: *jobs, ProcsPerNode: *ppn}); err != nil {
			return err
		}
	}
	if err := experiment.PrepareDir(*out, *force); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "VAHRM reproduction: 9 workloads x 8 systems, sweeps of SR, PCR, beta, first-run ratio and model error (%d jobs each)\n", *jobs)
	rep, err := experiment.ReproduceVAHRM(Version, experiment.VAHRMOptions{Jobs: *jobs, Log: log, Quick: *quick, Seed: *seed, Progress: progress(stderr)})
	if err != nil {
		return err
	}
	if err := experiment.WriteVAHRM(*out, rep); err != nil {
		return err
	}
	for _, s := range rep.StandIns {
		fmt.Fprintln(stdout, "stand-in:", s)
	}
	fmt.Fprintln(stdout)
	for _, t := range experiment.VAHRMTables(rep) {
		printTable(stdout, t)
	}
	fmt.Fprintf(stdout, "results in %s (summary.json, main.csv, sweep_*.csv, model_error.csv, models.csv, *.svg, report.html)\n", *out)
	return nil
}

func cmdReproducePowerFlow(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reproduce powerflow", stderr)
	out := fs.String("o", "", "results directory (required)")
	quick := fs.Bool("quick", false, "fewer sweep points")
	seed := fs.Uint64("seed", 42, "seed for DNN/batch assignment, measurement noise and random traces")
	nodes := fs.Int("nodes", experiment.DefaultPFSetup().Nodes, "8-GPU nodes in the simulated cluster")
	paiJobs := fs.String("pai-jobs", "", "Alibaba PAI 2020 job table (pai_job_table.csv) to use instead of the embedded Philly day")
	paiTasks := fs.String("pai-tasks", "", "with --pai-jobs: the task table (pai_task_table.csv)")
	phillyFile := fs.String("philly", "", "a Philly job table in the Pollux format (timestamp,duration,num_gpus,gpu_time,cluster; .gz allowed) to use instead of the embedded day")
	start := fs.String("start", "", `with --philly: window start "YYYY-MM-DD HH:MM:SS" (default: the first job)`)
	hours := fs.Float64("hours", 24, "with --pai-jobs or --philly: keep jobs submitted in the first HOURS hours")
	force := fs.Bool("force", false, "replace a non-empty results directory")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" {
		return usageError{errors.New("reproduce powerflow: -o DIR is required")}
	}
	if *nodes < 1 {
		return usageError{fmt.Errorf("reproduce powerflow: --nodes %d, want >= 1", *nodes)}
	}
	if (*paiJobs == "") != (*paiTasks == "") {
		return usageError{errors.New("reproduce powerflow: --pai-jobs and --pai-tasks go together")}
	}
	if *phillyFile != "" && *paiJobs != "" {
		return usageError{errors.New("reproduce powerflow: --philly and --pai-jobs are alternatives")}
	}
	if *start != "" && *phillyFile == "" {
		return usageError{errors.New("reproduce powerflow: --start goes with --philly")}
	}
	if !(*hours > 0) {
		return usageError{fmt.Errorf("reproduce powerflow: --hours %v, want > 0", *hours)}
	}
	setup := experiment.DefaultPFSetup()
	setup.Nodes, setup.Seed = *nodes, *seed
	o := experiment.PFOptions{Setup: setup, Quick: *quick, Progress: progress(stderr)}
	if *paiJobs != "" {
		jobs, err := experiment.LoadPAIJobs(*paiJobs, *paiTasks, *hours)
		if err != nil {
			return err
		}
		o.Jobs, o.JobsSource = jobs, fmt.Sprintf("Alibaba PAI 2020 job and task tables (%d jobs of the first %g h)", len(jobs), *hours)
	}
	if *phillyFile != "" {
		jobs, err := experiment.LoadPhillyJobs(*phillyFile, *start, *hours)
		if err != nil {
			return err
		}
		from := *start
		if from == "" {
			from = "its first job"
		}
		o.Jobs, o.JobsSource = jobs, fmt.Sprintf("Philly job table %s (%d jobs in the %g h from %s)", filepath.Base(*phillyFile), len(jobs), *hours, from)
	}
	if err := experiment.PrepareDir(*out, *force); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "PowerFlow reproduction: fitting models, JCT-vs-energy sweeps of 6 systems, oracle comparison, sensitivity on 100-job traces\n")
	rep, err := experiment.ReproducePowerFlow(Version, o)
	if err != nil {
		return err
	}
	if err := experiment.WritePowerFlow(*out, rep); err != nil {
		return err
	}
	for _, s := range rep.StandIns {
		fmt.Fprintln(stdout, "stand-in:", s)
	}
	fmt.Fprintln(stdout)
	for _, t := range experiment.PFTables(rep) {
		printTable(stdout, t)
	}
	fmt.Fprintf(stdout, "results in %s (summary.json, curves.csv, improvement.csv, models.csv, timeline.csv, oracle.csv, sensitivity.csv, *.svg, report.html)\n", *out)
	return nil
}

// benchPowerFlow times PowerFlow's 10-eta sweep of the 1,896-job day
// (budget: 5 s on one core) and its allocation step with 500 queued jobs.
func benchPowerFlow(stdout io.Writer) error {
	env, err := experiment.NewPFEnv(experiment.DefaultPFSetup())
	if err != nil {
		return err
	}
	gj, err := philly.Day()
	if err != nil {
		return err
	}
	jobs := env.PFJobs(gj, 42)
	start := time.Now()
	runs, err := env.PFSweep(jobs)
	if err != nil {
		return err
	}
	wall := time.Since(start).Seconds()
	dec := 0
	for _, r := range runs {
		dec += r.Decisions
	}
	fmt.Fprintf(stdout, "\nPowerFlow: %d jobs on %d nodes, %d etas one after another, one core\n", len(jobs), env.Setup.Nodes, len(runs))
	fmt.Fprintf(stdout, "sweep wall %.2f s (%.2f s per run, %d decisions in all): %.2fx the 5 s budget\n", wall, wall/float64(len(runs)), dec, wall/5)
	decide, err := env.DecisionBench(jobs, 500)
	if err != nil {
		return err
	}
	decide()
	start = time.Now()
	const n = 200
	for i := 0; i < n; i++ {
		decide()
	}
	per := time.Since(start).Seconds() / n
	fmt.Fprintf(stdout, "allocation step with 500 queued jobs: %.0f decisions/s (%.2f ms each)\n", 1/per, per*1000)
	return nil
}

// benchVAHRM times VAHRM runs and decisions on one core (budgets: a
// 10,000-job run under 2 s, a decision with 2,000 queued jobs under 1 ms).
func benchVAHRM(stdout io.Writer) error {
	env, err := experiment.NewVAHRMEnvIdeal(10000, 42)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nVAHRM: one 10,000-job replay on 540 nodes, one core\n")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "system\tSR\twall s\tjobs/s\tvs 2 s budget\t")
	for _, sys := range []string{"VU-FCFS", "CGVA-FCFS-B", "VAHRM+IDEAL"} {
		for _, sr := range []float64{1, 8} {
			s := experiment.DefaultVAHRMSetting()
			s.SR = sr
			start := time.Now()
			if _, err := env.RunVAHRM(sys, experiment.VAHRMWorkloads()[4], s); err != nil {
				return err
			}
			wall := time.Since(start).Seconds()
			fmt.Fprintf(tw, "%s\t%g\t%.3f\t%.0f\t%.3fx\t\n", sys, sr, wall, 10000/wall, wall/2)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	const reps = 200
	decide, err := env.DecisionBench(2000, 100)
	if err != nil {
		return err
	}
	start := time.Now()
	for range reps {
		decide()
	}
	per := time.Since(start).Seconds() / reps
	fmt.Fprintf(stdout, "VAHRM decision with 2,000 queued jobs and 100 free nodes: %.0f µs (budget 1 ms; the paper reports 30 ms: %.0fx faster)\n", per*1e6, 0.030/per)
	return nil
}

func cmdBench(args []string, stdout io.Writer) error {
	fs := newFlags("bench", os.Stderr)
	pols := fs.String("policies", "", "comma-separated policy names (default: all of the PWR comparison)")
	trace := fs.String("trace", "default", "openb pod list")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	s, err := experiment.PWRScenario(*trace, 1, "")
	if err != nil {
		return err
	}
	if *pols != "" {
		keep := map[string]bool{}
		for _, p := range strings.Split(*pols, ",") {
			keep[strings.TrimSpace(p)] = true
		}
		var ps []experiment.PolicySpec
		for _, p := range s.Policies {
			if keep[p.Name] {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			return fmt.Errorf("bench: no policy matches %q (known: %s)", *pols, strings.Join(s.PolicyNames(), ", "))
		}
		s.Policies = ps
	}
	in, err := experiment.LoadInputs(s.Trace)
	if err != nil {
		return err
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	fmt.Fprintf(stdout, "one inflation run of openb_pod_list_%s to %.1fx capacity on %d nodes, one core (GOMAXPROCS=1)\n", *trace, s.Target, len(in.Nodes))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\ttasks\twall s\tdecisions/s\tvs 1 s budget\t")
	r := &experiment.Runner{Registry: Registry(), Catalog: hw.Default(), Workers: 1}
	var fgdWall float64
	for _, p := range s.Policies {
		one := *s
		one.Policies = []experiment.PolicySpec{p}
		start := time.Now()
		res, err := r.RunInflation(&one, in)
		if err != nil {
			return err
		}
		wall := time.Since(start).Seconds()
		run := res.Runs[0]
		if p.Name == "FGD" {
			fgdWall = wall
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%.2fx\t\n", p.Name, run.Tasks, wall, float64(run.Tasks)/wall, math.Max(wall, 1e-9)/1.0)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if fgdWall > 0 {
		fmt.Fprintf(stdout, "\nThe public Kubernetes-based FGD simulator needs about %.0f s of CPU for this run (anchor given in the project's issue, not measured here): FGD here is %.0fx faster.\n",
			fgdSimAnchorSeconds, fgdSimAnchorSeconds/fgdWall)
	}
	if *trace == "default" && *pols == "" {
		if err := benchVAHRM(stdout); err != nil {
			return err
		}
		return benchPowerFlow(stdout)
	}
	return nil
}
