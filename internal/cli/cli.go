// Package cli implements the wattsched command: subcommands, flags,
// progress output and the built-in policy registry.
package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/solver"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/trace/k8sdump"
	"github.com/wattsched/wattsched/userfile"
)

// Version is wattsched's version, written into every result.
const Version = "0.1.0"

// Run executes the command line and returns the process exit code: 0
// done (and --help, help CMD), 2 a usage error, 1 a run error.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return exitCode(newApp(ctx, stdout, stderr, nil).execute(args), stderr)
}

// TerminatingSignals are the signals HandleSignals handles.
var TerminatingSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// HandleSignals makes SIGINT, SIGTERM, SIGHUP and SIGQUIT stop the process
// with one line and exit status 130, after removing every results
// directory and output file being written (each output keeps its earlier
// contents). A result published whole before the signal stands, and the
// line says so.
func HandleSignals(stderr io.Writer) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, TerminatingSignals...)
	go func() {
		s := <-sig
		fmt.Fprintln(stderr, stoppedLine(s, outdir.Abandon()))
		os.Exit(130)
	}()
}

// stoppedLine is the line a terminating signal prints, given the results
// directories published whole before it.
func stoppedLine(s os.Signal, published []string) string {
	if len(published) == 0 {
		return fmt.Sprintf("wattsched: %v: stopped; no partial results were written", s)
	}
	return fmt.Sprintf("wattsched: %v: stopped; the results in %s are complete, nothing partial was written", s, strings.Join(published, ", "))
}

type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// versionLine is Version and, when the binary carries build information,
// the module version (a tag with go install ...@vX), the VCS revision and
// the Go toolchain. Results record Version only, so that they do not
// depend on how the binary was built.
func versionLine() string {
	line := "wattsched " + Version
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return line + "\n" + highsLine()
	}
	var extra []string
	if v := bi.Main.Version; v != "" {
		extra = append(extra, "module "+v)
	}
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			extra = append(extra, "revision "+st.Value)
		case "vcs.modified":
			if st.Value == "true" {
				extra = append(extra, "modified")
			}
		}
	}
	extra = append(extra, bi.GoVersion)
	return line + " (" + strings.Join(extra, ", ") + ")\n" + highsLine()
}

// highsLine says whether the binary links the HiGHS solver, and which
// version.
func highsLine() string {
	if !solver.Available() {
		return "HiGHS: not linked (built without the highs tag: 'reproduce cedla' and mode slotted need it; 'make build' links it)"
	}
	return "HiGHS: linked, version " + solver.Version()
}

// importOptions are import k8s's flags.
type importOptions struct {
	in, kubeconfig, kcontext, out, promURL, rng, podTimes *string
	force, strict                                         *bool
	systemNS                                              *[]string
}

// importFlags registers import k8s's flags on fs.
func importFlags(fs *pflag.FlagSet) *importOptions {
	return &importOptions{
		in:         fs.StringP("f", "f", "", "the JSON of 'kubectl get nodes,pods -A -o json' (- for standard input)"),
		kubeconfig: fs.String("kubeconfig", "", "read the nodes and pods of a live cluster through this kubeconfig file"),
		kcontext:   fs.String("context", "", "with --kubeconfig: the context to use (default: the file's current-context)"),
		out:        fs.StringP("o", "o", "", "directory for nodes.csv, pods.csv and scenario.yaml (required)"),
		force:      fs.Bool("force", false, "replace an earlier wattsched output directory"),
		strict:     fs.Bool("strict", false, "fail on the first pod that cannot be imported instead of skipping it with a warning"),
		promURL:    fs.String("prometheus", "", "also take pods' start and completion times from kube-state-metrics (kube_pod_start_time, kube_pod_completion_time) on this Prometheus server, with --range"),
		rng:        fs.String("range", "", "with --prometheus: START,END[,STEP] of the range query (RFC 3339 or Unix seconds; STEP default 15s)"),
		podTimes:   fs.String("pod-times", "", "a saved /api/v1/query_range JSON answer of those series (instead of --prometheus)"),
		systemNS:   fs.StringSlice("system-namespace", nil, "a namespace whose pods are the cluster's own, like kube-system's: kept out of the jobs, their requests reserved on their nodes (repeat or comma-separate)"),
	}
}

// cmdImport turns a Kubernetes dump, or a live cluster's nodes and pods,
// into a scenario directory.
func cmdImport(ctx context.Context, o *importOptions, args []string, stdout, stderr io.Writer) error {
	in, kubeconfig, kcontext, out, force, strict := o.in, o.kubeconfig, o.kcontext, o.out, o.force, o.strict
	switch {
	case len(args) > 0 || *out == "":
		return usageError{errors.New("import k8s: -o DIR and one of -f FILE or --kubeconfig FILE are required, nothing else")}
	case (*in == "") == (*kubeconfig == ""):
		return usageError{errors.New("import k8s: give exactly one of -f FILE (a kubectl dump) and --kubeconfig FILE (a live cluster)")}
	case *kcontext != "" && *kubeconfig == "":
		return usageError{errors.New("import k8s: --context goes with --kubeconfig")}
	}
	for _, ns := range *o.systemNS {
		if err := trace.CheckName(ns); err != nil {
			return usageError{fmt.Errorf("import k8s --system-namespace: %w", err)}
		}
	}
	times, err := newImportTimes(*o.promURL, *o.rng, *o.podTimes, *strict)
	if err != nil {
		return err
	}
	claim, err := outdir.ClaimDir(*out, *force)
	if err != nil {
		return err
	}
	defer claim.Release()
	var r io.Reader = os.Stdin
	name := "standard input"
	switch {
	case *kubeconfig != "":
		kc, err := k8sdump.ReadKubeconfig(*kubeconfig, *kcontext)
		if err != nil {
			return err
		}
		b, err := k8sdump.Fetch(ctx, kc)
		if err != nil {
			return err
		}
		r, name = bytes.NewReader(b), fmt.Sprintf("cluster %s (context %s)", kc.Server, kc.Context)
	case *in != "-":
		f, err := userfile.OpenRegular(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		r, name = f, *in
	}
	d, err := k8sdump.ReadWith(r, name, k8sdump.Options{Strict: *strict, SystemNamespaces: *o.systemNS})
	if err != nil {
		return err
	}
	if err := times.fill(ctx, d); err != nil {
		return err
	}
	cat := hw.Default()
	var unknown []string
	for _, n := range d.Nodes {
		if _, err := cat.GPU(n.GPUModel); n.GPUs > 0 && err != nil && !slices.Contains(unknown, n.GPUModel) {
			unknown = append(unknown, n.GPUModel)
		}
	}
	res := importResults(d, name, unknown, times.line)
	printImportWarnings(stderr, d)
	return emit(stdout, claim, []*experiment.Results{res})
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
	phase, lastDone, lastTotal := start, 0, 0
	return func(done, total int, what string) {
		now := time.Now()
		el := now.Sub(start).Seconds()
		if total != lastTotal || done <= lastDone { // a new batch of runs
			phase = now
		}
		lastDone, lastTotal = done, total
		// After a few seconds of a batch, an estimate of what is left of
		// it (linear in the runs done so far).
		eta := ""
		if pe := now.Sub(phase).Seconds(); pe > 3 && done < total && done > 1 {
			eta = fmt.Sprintf(", about %.0fs left", pe/float64(done-1)*float64(total-done))
		}
		switch {
		case tty:
			fmt.Fprintf(stderr, "\r[%d/%d] %-40s %6.1fs%-22s", done, total, what, el, eta)
			if done == total {
				fmt.Fprintln(stderr)
			}
		case done == total || done*10/total != (done-1)*10/total:
			fmt.Fprintf(stderr, "[%d/%d] %s %.1fs%s\n", done, total, what, el, eta)
		}
	}
}

// env is what every study and scenario run gets.
func env(stderr io.Writer) *experiment.Env {
	return &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Progress: progress(stderr),
		Note: func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) },
		RunProgress: func(what string, done, total int, unit string) {
			fmt.Fprintf(stderr, "  %s: %d of %d %s\n", what, done, total, unit)
		}}
}

// scenarioRun is a parsed run or compare command line: the scenario with
// its seeds and hardware applied, the environment, and where to write.
type scenarioRun struct {
	s *scenario.Scenario
	e *experiment.Env
	// claim is the output directory, claimed before any work: the
	// command releases it (emit publishes into it).
	claim *outdir.DirClaim
	// solverLog is --solver-log: the file for the MILP solver's log,
	// claimed before any work by the rules of every output file (nil:
	// none); the command commits or discards it.
	solverLog *outdir.FileClaim
	// equivalence is compare's --equivalence as a fraction (0: not
	// compare).
	equivalence float64
	// catalogFile is --catalog's file ("": none).
	catalogFile string
}

// shardFlag registers --shard i/n.
func shardFlag(fs *pflag.FlagSet) *string {
	return fs.String("shard", "", "run only shard i of n (0-based, e.g. 2/8) of the runs and write them for 'wattsched merge'")
}

// setShards applies --shard, or a merge's records, to the environment.
func setShards(e *experiment.Env, spec string, merge *experiment.Shards, cmd string) error {
	if merge != nil {
		if spec != "" {
			return usageError{fmt.Errorf("%s: --shard in a merged command", cmd)}
		}
		e.Shards = merge
		return nil
	}
	if spec == "" {
		return nil
	}
	var i, n int
	if _, err := fmt.Sscanf(spec, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != spec {
		return usageError{fmt.Errorf("%s: --shard %q, want i/n such as 0/4", cmd, spec)}
	}
	sh, err := experiment.NewShard(i, n)
	if err != nil {
		return usageError{fmt.Errorf("%s: %w", cmd, err)}
	}
	e.Shards = sh
	return nil
}

// defaultScenario is the embedded scenario a command runs without -c
// ("": none, -c is required).
func defaultScenario(cmd string) string {
	if cmd == "run" {
		return "pwr-default"
	}
	return ""
}

// scenarioFlags are the flags run and compare share.
type scenarioFlags struct {
	shard, cfg, out, catalog *string
	seeds                    *int
	force, strict, explain   *bool
	maxMem                   *string
	// solverLog is --solver-log (run only; nil for compare).
	solverLog *string
	// equivalence is --equivalence (compare only; nil for run).
	equivalence *string
}

// newScenarioFlags registers the flags of run or compare on fs.
func newScenarioFlags(cmd string, fs *pflag.FlagSet) *scenarioFlags {
	f := &scenarioFlags{shard: shardFlag(fs)}
	what := "scenario YAML file"
	if def := defaultScenario(cmd); def != "" {
		what += " (default: embedded " + def + ")"
	}
	f.cfg = fs.StringP("c", "c", "", what)
	f.out = fs.StringP("o", "o", "", "results directory (required)")
	f.seeds = fs.Int("seeds", 0, "override the scenario's number of seeds")
	f.force = fs.Bool("force", false, "replace a non-empty results directory")
	f.catalog = fs.String("catalog", "", "hardware catalog file whose GPU and CPU models join the embedded ones (format: hw/catalog.yaml)")
	f.maxMem = maxMemoryFlag(fs)
	f.strict = fs.Bool("strict", false, "fail before the run when pods can never start (fit no node, or over the power limit on the idle cluster) instead of warning")
	if cmd == "compare" {
		f.equivalence = fs.String("equivalence", "1%", "practical-equivalence threshold in percent of the reference's energy, in (0, 50]: a difference whose interval lies within it is 'no meaningful difference' (docs/scenarios.md#verdicts)")
	}
	f.explain = fs.Bool("explain", false, "write explain.csv: for each placement, the chosen node's score per scorer and the next best nodes' (modes replay and inflation; docs/explain.md)")
	if cmd == "run" {
		f.solverLog = fs.String("solver-log", "", "write HiGHS's log of every CE-DLA solve to this file (mode slotted; off by default: the solver prints nothing)")
	}
	return f
}

// loadScenario reads the scenario -c names, or the command's embedded one.
func loadScenario(cmd, cfg string) (*scenario.Scenario, error) {
	if cfg == "" {
		return scenario.Builtin(defaultScenario(cmd))
	}
	return scenario.Load(cfg)
}

// parseScenarioRun checks the flags run and compare share (f, parsed in
// fs), the positional arguments (none), the scenario, its policies, its
// hardware and the output directory before any work.
func parseScenarioRun(cmd string, fs *pflag.FlagSet, f *scenarioFlags, args []string, stderr io.Writer, merge *experiment.Shards) (*scenarioRun, error) {
	shard, cfg, out, seeds, force, catalog, solverLog, strict, maxMem := f.shard, f.cfg, f.out, f.seeds, f.force, f.catalog, f.solverLog, f.strict, f.maxMem
	memLimit, err := maxMemory(*maxMem)
	if err != nil {
		return nil, err
	}
	if len(args) > 0 {
		return nil, usageError{fmt.Errorf("%s: unexpected argument %q (a scenario file goes with -c)", cmd, args[0])}
	}
	var equivalence float64
	if f.equivalence != nil {
		if equivalence, err = parseEquivalence(*f.equivalence); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", cmd, err)}
		}
	}
	if *out == "" {
		return nil, usageError{fmt.Errorf("%s: -o DIR is required", cmd)}
	}
	if fs.Changed("c") && *cfg == "" {
		return nil, usageError{fmt.Errorf("%s: -c is empty: give a scenario file%s", cmd, map[bool]string{true: " (or leave -c out for the embedded " + defaultScenario(cmd) + ")", false: ""}[defaultScenario(cmd) != ""])}
	}
	if *cfg == "" && defaultScenario(cmd) == "" {
		return nil, usageError{fmt.Errorf("%s: -c scenario.yaml is required", cmd)}
	}
	s, err := loadScenario(cmd, *cfg)
	if err != nil {
		return nil, err
	}
	if fs.Changed("seeds") {
		if *seeds < 1 || *seeds > 1000 {
			return nil, usageError{fmt.Errorf("%s: --seeds %d, want 1..1000", cmd, *seeds)}
		}
		s.Seeds = *seeds
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("%s: scenario %s with --seeds %d: %w", cmd, s.Name, *seeds, err)
		}
	}
	e := env(stderr)
	e.Strict = *strict
	if len(s.Variants) > 0 && cmd != "compare" {
		return nil, usageError{fmt.Errorf("%s: scenario %s has variants, which 'wattsched compare' crosses with its policies; run replays the scenario's own settings: use compare, or remove variants", cmd, s.Name)}
	}
	e.MaxMemory = memLimit
	if err := s.Check(e.Registries); err != nil {
		return nil, err
	}
	if err := setShards(e, *shard, merge, cmd); err != nil {
		return nil, err
	}
	if e.Shards != nil && !slices.Contains(shardableModes, s.Mode) {
		return nil, usageError{fmt.Errorf("%s: --shard is supported for modes %v, not yet for mode %s", cmd, shardableModes, s.Mode)}
	}
	if *catalog != "" {
		if s.Mode != scenario.Inflation && s.Mode != scenario.Replay {
			return nil, usageError{fmt.Errorf("%s: --catalog applies to modes inflation and replay, not %s", cmd, s.Mode)}
		}
		f, err := hw.ParseFile(*catalog)
		if err != nil {
			return nil, err
		}
		if e.Catalog, err = e.Catalog.With(f, *catalog); err != nil {
			return nil, err
		}
	}
	e.BaseCatalog = e.Catalog
	if e.Catalog, err = s.HardwareCatalog(e.Catalog); err != nil {
		if *cfg != "" { // name the file its hardware section is in
			return nil, fmt.Errorf("%s: scenario %s: %w", *cfg, s.Name, err)
		}
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	if *f.explain {
		if err := setExplain(cmd, s, e); err != nil {
			return nil, err
		}
	}
	r := &scenarioRun{s: s, e: e, equivalence: equivalence, catalogFile: *catalog}
	if solverLog != nil && *solverLog != "" {
		if s.Mode != scenario.Slotted {
			return nil, usageError{fmt.Errorf("%s: --solver-log applies to mode slotted (CE-DLA's solves), not %s", cmd, s.Mode)}
		}
		if err := checkBesideResults(cmd, "--solver-log", *solverLog, *out); err != nil {
			return nil, err
		}
		if _, err := outdir.CheckFile(*solverLog, *force); err != nil {
			return nil, fmt.Errorf("%s: --solver-log: %w", cmd, err)
		}
	}
	// The claims come last: every check that can fail goes above them, and
	// the caller releases them (defer r.claim.Release()).
	if r.claim, err = outdir.ClaimDir(*out, *force); err != nil {
		return nil, err
	}
	if solverLog != nil && *solverLog != "" {
		if r.solverLog, err = outdir.CreateFile(*solverLog, *force); err != nil {
			r.claim.Release()
			return nil, fmt.Errorf("%s: --solver-log: %w", cmd, err)
		}
	}
	return r, nil
}

// checkBesideResults refuses an output file (flag) that is the results
// directory out, lies inside it, or is one of the names its claim and
// temporaries take beside it: the file would be lost, or would take the
// results' place.
func checkBesideResults(cmd, flag, file, out string) error {
	f, errF := filepath.Abs(filepath.Clean(file))
	o, errO := filepath.Abs(filepath.Clean(out))
	if errF != nil || errO != nil {
		return nil
	}
	base := filepath.Base(f)
	if f == o || strings.HasPrefix(f, o+string(filepath.Separator)) ||
		(filepath.Dir(f) == filepath.Dir(o) && strings.HasPrefix(base, "."+filepath.Base(o)+".")) {
		return usageError{fmt.Errorf("%s: %s %s is the results directory -o %s, inside it or beside it as its temporary: give a file elsewhere", cmd, flag, file, out)}
	}
	return nil
}

// setExplain applies --explain: a usage error for a mode whose placements
// are not a Placer's weighted scores, or with --shard; otherwise each run
// keeps its share of tasks.ExplainBudget decisions.
func setExplain(cmd string, s *scenario.Scenario, e *experiment.Env) error {
	if !slices.Contains(tasks.ExplainModes, s.Mode) {
		return usageError{fmt.Errorf("%s: --explain applies to mode %v (placements by weighted node scores), not %s: scenario %s", cmd, tasks.ExplainModes, s.Mode, s.Name)}
	}
	if e.Shards != nil {
		return usageError{fmt.Errorf("%s: --explain with --shard or merge: not supported; explain an unsharded run", cmd)}
	}
	runs := len(s.Policies)
	switch {
	case cmd == "compare": // a run per policy, setting and seed
		runs = len(tasks.CompareSystems(s)) * s.Seeds
	case s.Mode == scenario.Inflation: // a run per policy and seed
		runs *= s.Seeds
	}
	e.ExplainDecisions = tasks.ExplainPerRun(runs)
	return nil
}

// cmdRun runs a parsed run command line; cmdline is the line as given,
// which a shard records.
func cmdRun(ctx context.Context, r *scenarioRun, cmdline []string, stdout io.Writer) error {
	defer r.claim.Release()
	if r.solverLog != nil {
		defer r.solverLog.Discard()
		r.e.SolverLog = &lockedWriter{w: r.solverLog}
	}
	results, inputs, err := sharded(r.e.Shards, cmdline, func() ([]*experiment.Results, error) { return runners(r.s.Mode)(ctx, r.e, r.s) })
	if r.solverLog != nil {
		// The log of the solves that ran, also of a failed run (where it
		// says why), whole or not at all.
		if cerr := r.solverLog.Commit(); cerr != nil {
			return errors.Join(err, fmt.Errorf("run: --solver-log: %w", cerr))
		}
	}
	if r.e.Shards.Sharding() {
		return emitShard(stdout, r.claim, r.e.Shards, cmdline, inputs, err)
	}
	if err != nil {
		return err
	}
	if err := r.e.Shards.CheckMerged(); err != nil {
		return err
	}
	return emit(stdout, r.claim, results)
}

// parseEquivalence reads --equivalence: a percentage in (0, 50], with or
// without a trailing %, as a fraction.
func parseEquivalence(v string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil || !(p > 0 && p <= 100*tasks.MaxEquivalence) {
		return 0, fmt.Errorf("--equivalence %q: want a percentage of the reference's energy in (0, %g] such as 1 or 0.5%%", v, 100*tasks.MaxEquivalence)
	}
	return p / 100, nil
}

// cmdCompare replays a scenario's trace under its policies on every seed
// and reports means with confidence intervals; cmdline is the command line
// as given, which a shard records.
func cmdCompare(r *scenarioRun, cmdline []string, stdout io.Writer) error {
	defer r.claim.Release()
	if r.s.Mode != scenario.Replay {
		return usageError{fmt.Errorf("compare: scenario %s has mode %s; compare replays a trace at its recorded times (mode replay, e.g. examples/replay-openb.yaml)", r.s.Name, r.s.Mode)}
	}
	in, err := tasks.LoadInputs(r.s)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", r.s.Name, err)
	}
	results, inputs, err := sharded(r.e.Shards, cmdline, func() ([]*experiment.Results, error) {
		runs, err := tasks.RunCompare(r.e, r.s, in)
		if err != nil {
			return nil, err
		}
		res, err := tasks.CompareResults(Version, r.e, r.s, in, runs, tasks.CompareOptions{Equivalence: r.equivalence, CatalogFile: r.catalogFile})
		return []*experiment.Results{res}, err
	})
	if r.e.Shards.Sharding() {
		return emitShard(stdout, r.claim, r.e.Shards, cmdline, inputs, err)
	}
	if err != nil {
		return err
	}
	if err := r.e.Shards.CheckMerged(); err != nil {
		return err
	}
	return emit(stdout, r.claim, results)
}

// emit publishes the results into the claimed directory, then prints what
// each holds.
func emit(stdout io.Writer, claim *outdir.DirClaim, results []*experiment.Results) error {
	if err := claim.Publish(Version, results); err != nil {
		return err
	}
	dir := claim.Dir
	for _, r := range results {
		// A claims table's verdict ("N of M claims hold") comes first.
		for _, t := range r.Tables {
			if t.Lead != "" {
				fmt.Fprintln(stdout, t.Lead)
			}
		}
		for _, l := range r.Head {
			fmt.Fprintln(stdout, l)
		}
		for _, t := range r.Tables {
			printTable(stdout, t)
		}
		for _, l := range r.Tail {
			fmt.Fprintln(stdout, l)
		}
		fmt.Fprintf(stdout, "results in %s (%s)\n", filepath.Join(dir, r.Dir), r.Listing)
	}
	return nil
}

func printTable(w io.Writer, t report.Table) {
	fmt.Fprintf(w, "%s\n", t.Title)
	if t.Lead != "" {
		fmt.Fprintln(w, t.Lead)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.Head, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// reproduceFlags are the flags every study takes.
type reproduceFlags struct {
	out, shard, maxMem string
	force              bool
}

// studyFlagSet is a flag set holding st's own flags (experiment.Study
// registers them on the standard library's flag package).
func studyFlagSet(st experiment.Study) *flag.FlagSet {
	fs := flag.NewFlagSet(st.Name(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	st.Flags(fs)
	return fs
}

// cmdReproduce runs one study, its flags parsed: a check before any work,
// the run, the results; cmdline is the command line as given, which a
// shard records.
func cmdReproduce(ctx context.Context, st experiment.Study, f reproduceFlags, args, cmdline []string, stdout, stderr io.Writer, merge *experiment.Shards) error {
	out, force, shard, maxMem := &f.out, &f.force, &f.shard, &f.maxMem
	memLimit, err := maxMemory(*maxMem)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usageError{fmt.Errorf("reproduce %s: unexpected argument %q", st.Name(), args[0])}
	}
	if *out == "" {
		return usageError{fmt.Errorf("reproduce %s: -o DIR is required", st.Name())}
	}
	if err := st.Check(); err != nil {
		return usageError{err}
	}
	e := env(stderr)
	e.MaxMemory = memLimit
	if err := setShards(e, *shard, merge, "reproduce "+st.Name()); err != nil {
		return err
	}
	if e.Shards != nil && !slices.Contains(shardable, st.Name()) {
		return usageError{fmt.Errorf("reproduce %s: --shard is supported for %s, not yet for %s", st.Name(), strings.Join(shardable, ", "), st.Name())}
	}
	claim, err := outdir.ClaimDir(*out, *force)
	if err != nil {
		return err
	}
	defer claim.Release()
	results, inputs, err := sharded(e.Shards, cmdline, func() ([]*experiment.Results, error) { return st.Run(ctx, e) })
	if e.Shards.Sharding() {
		return emitShard(stdout, claim, e.Shards, cmdline, inputs, err)
	}
	if err != nil {
		return err
	}
	if err := e.Shards.CheckMerged(); err != nil {
		return err
	}
	return emit(stdout, claim, results)
}

// lockedWriter serialises Writes to w: the solver's logs of runs side by
// side each arrive in one Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write implements io.Writer.
func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
