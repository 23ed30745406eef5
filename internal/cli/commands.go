package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// app is one execution of the command line: where it writes, a merge's
// records when a merge runs the shards' command again, and the command
// line as given (a shard records it; a merge runs it again).
type app struct {
	ctx            context.Context
	stdout, stderr io.Writer
	merge          *experiment.Shards
	raw            []string
	// studies are the study values the tree registered flags for, by name
	// (each tree has its own).
	studies map[string]experiment.Study
}

func newApp(ctx context.Context, stdout, stderr io.Writer, merge *experiment.Shards) *app {
	return &app{ctx: ctx, stdout: stdout, stderr: stderr, merge: merge, studies: map[string]experiment.Study{}}
}

// errHelpShown is a usage error whose message was already printed (the
// help text on a bare `wattsched`): exit 2, nothing more.
var errHelpShown = errors.New("help shown")

// execute runs the command line args and returns its error (nil: done).
func (a *app) execute(args []string) error {
	root := a.root()
	args = longFlagsTwoDashes(root, args)
	a.raw = args
	root.SetArgs(args)
	_, err := root.ExecuteC()
	return err
}

// longFlagsTwoDashes gives a long flag written with one dash, as the
// standard library's flag package read it (-seeds 3, -force), its second
// dash: pflag would read -seeds as the one-letter flags s, e, e, d, s
// (and -catalog as -c atalog).
func longFlagsTwoDashes(root *cobra.Command, args []string) []string {
	c, _, err := root.Find(args)
	if err != nil {
		return args
	}
	out := slices.Clone(args)
	for i, arg := range out {
		if arg == "--" {
			break
		}
		if !strings.HasPrefix(arg, "-") || strings.HasPrefix(arg, "--") {
			continue
		}
		name, _, _ := strings.Cut(arg[1:], "=")
		if len(name) > 1 && (name == "help" || name == "version" && !c.HasParent() || c.Flags().Lookup(name) != nil) {
			out[i] = "-" + arg
		}
	}
	return out
}

// exitCode maps an error of execute to the process's exit status and
// prints it: 0 none, 2 a usage error (a command line that names no
// command, an unknown command or flag, a bad flag value or combination),
// 1 a run error.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelpShown) {
		return 2
	}
	var ue usageError
	if strings.HasPrefix(err.Error(), "unknown command ") { // cobra's, with its suggestions
		fmt.Fprintf(stderr, "wattsched: %v\nRun 'wattsched --help' for usage.\n", strings.TrimRight(err.Error(), "\n")+"\n")
		return 2
	}
	fmt.Fprintf(stderr, "wattsched: %v\n", err)
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// cmdUsageHint is the line a usage error of c ends with.
func cmdUsageHint(c *cobra.Command) string {
	return fmt.Sprintf("Run '%s --help' for usage.", c.CommandPath())
}

// root is the command tree.
func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "wattsched",
		Short: "energy-aware GPU-cluster scheduling toolkit",
		Long: `wattsched — energy-aware GPU-cluster scheduling toolkit.

It simulates GPU clusters placing pods or jobs under scheduling policies and
reports energy, cost, carbon and waiting: run a scenario file (docs/scenarios.md),
compare policies on your own trace and cluster with confidence intervals, or
reproduce one of five papers' evaluations beside the paper's claims. Every
command writes its results into one directory (-o DIR), all or nothing.`,
		Example: `  wattsched run -o out/demo                                   # the embedded PWR scenario
  wattsched compare -c examples/byo-replay.yaml -o out/byo --seeds 5
  wattsched reproduce pwr -o out/pwr --seeds 10
  kubectl get nodes,pods -A -o json | wattsched import k8s -f - -o mycluster`,
		Version:           versionLine(),
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(c *cobra.Command, args []string) error {
			// A bare `wattsched`: the help, on standard error, exit 2.
			c.SetOut(a.stderr)
			c.HelpFunc()(c, args)
			return errHelpShown
		},
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetContext(a.ctx)
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().BoolP("version", "v", false, "wattsched's version, how the binary was built and whether HiGHS is linked (as 'wattsched version')")
	root.SetUsageTemplate(usageTemplate)
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(helpCmd())
	root.AddCommand(a.runCmd("run"), a.runCmd("compare"), a.mergeCmd(), a.reproduceCmd(), a.benchCmd(), a.tracesCmd(), a.validateCmd(),
		a.versionCmd(), a.importCmd(), a.calibrateCmd(), a.powerBudgetCmd(), completionCmd(root))
	onceStrings(root)
	return root
}

// onceStrings makes every string flag of c and its subcommands a usage
// error when given twice (-c a.yaml -c b.yaml, -o x -o y): pflag keeps
// the last silently, and which one a user meant is not ours to guess.
func onceStrings(c *cobra.Command) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "string" {
			f.Value = &onceValue{Value: f.Value}
		}
	})
	for _, sub := range c.Commands() {
		onceStrings(sub)
	}
}

// onceValue is a flag value that may be set once.
type onceValue struct {
	pflag.Value
	set   bool
	first string
}

// Set implements pflag.Value.
func (o *onceValue) Set(s string) error {
	if o.set {
		return fmt.Errorf("given twice (%q, then %q): give it once", o.first, s)
	}
	o.set, o.first = true, s
	return o.Value.Set(s)
}

// usageTemplate is cobra's, with flags listed by flagUsages (a
// one-letter flag as -o, not -o, --o) and an example before the flags.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

Available Commands:{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{flagUsages .LocalFlags}}{{end}}{{if .HasAvailableInheritedFlags}}

Global Flags:
{{flagUsages .InheritedFlags}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

func init() {
	cobra.AddTemplateFuncs(template.FuncMap{"flagUsages": flagUsages})
}

// flagUsages lists fs's visible flags, one a line: the flag (-o for a
// one-letter name, --name otherwise) with its value's name, then what it
// does and its default, wrapped at 100 columns.
func flagUsages(fs *pflag.FlagSet) string {
	type row struct{ left, right string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "--" + f.Name
		switch {
		case len(f.Name) == 1:
			left = "-" + f.Name
		case f.Shorthand != "":
			left = "-" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if v, ok := f.Annotations[valueAnnotation]; ok {
			varname = v[0]
		} else if v, ok := valueNames[f.Name]; ok && varname != "" {
			varname = v
		}
		if varname != "" && f.NoOptDefVal == "" {
			left += " " + varname
		}
		if d := flagDefault(f); d != "" {
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{"  " + left, usage})
		width = max(width, utf8.RuneCountInString(left)+2)
	})
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.left)
		b.WriteString(strings.Repeat(" ", width-utf8.RuneCountInString(r.left)+3))
		b.WriteString(wrap(r.right, width+3, 100))
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// valueAnnotation names a flag's value in help where valueNames's name
// for it does not fit the command (calibrate's -o is a file).
const valueAnnotation = "wattsched/value"

// valueNames name the values of flags in help (-o DIR, not -o string).
var valueNames = map[string]string{
	"c": "FILE", "o": "DIR", "f": "FILE", "seeds": "N", "shard": "i/n", "max-memory": "SIZE", "catalog": "FILE",
	"solver-log": "FILE", "equivalence": "PCT", "policies": "a,b", "trace": "NAME", "kubeconfig": "FILE", "context": "NAME",
	"prometheus": "URL", "range": "START,END[,STEP]", "pod-times": "FILE", "from": "FILE", "save": "FILE", "curve": "x,y,...",
	"pods": "FILE", "node-label": "LABEL", "gpu-label": "LABEL", "model-label": "LABEL", "power-metric": "METRIC",
	"util-metric": "METRIC", "suffix": "TEXT", "timeout": "DURATION", "jobs": "N", "seed": "S", "swf": "FILE",
	"procs-per-node": "P", "nodes": "N", "pai-jobs": "FILE", "pai-tasks": "FILE", "philly": "FILE", "start": "TIME",
	"hours": "H", "per-hour": "R", "models": "FILE", "prices": "FILE", "carbon": "FILE", "compat": "MODE",
}

// flagDefault is a flag's default as help shows it ("": none worth
// showing: false, zero, empty).
func flagDefault(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]":
		return ""
	}
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// wrap breaks s into lines of at most width columns, the lines after the
// first indented by indent (where the first starts).
func wrap(s string, indent, width int) string {
	avail := max(width-indent, 30)
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := utf8.RuneCountInString(w)
		if i > 0 && n+1+l > avail {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			n = 0
		} else if i > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

var (
	unknownFlagRE  = regexp.MustCompile(`^unknown flag: --(\S+)$`)
	unknownShortRE = regexp.MustCompile(`^unknown shorthand flag: '(.)' in -(\S+)$`)
	badBoolRE      = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-., )?(--\S+)" flag: strconv.ParseBool`)
)

// flagError turns a flag parsing error of c into a usage error that names
// the command, suggests the flags meant by a mistyped one (cobra and
// pflag suggest none), and says where the usage is.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	hint := ""
	switch {
	case unknownFlagRE.MatchString(msg):
		hint = suggestFlags(c, unknownFlagRE.FindStringSubmatch(msg)[1])
	case unknownShortRE.MatchString(msg):
		// -seedz: a long flag written with one dash (a known one got its
		// second dash from longFlagsTwoDashes)
		name, _, _ := strings.Cut(unknownShortRE.FindStringSubmatch(msg)[2], "=")
		hint = suggestFlags(c, name)
	case badBoolRE.MatchString(msg):
		m := badBoolRE.FindStringSubmatch(msg)
		msg = fmt.Sprintf("invalid boolean value %q for %s: want true or false (or the flag alone)", m[1], m[2])
	}
	return usageError{fmt.Errorf("%s%s%s\n%s", cmdPrefix(c), msg, hint, cmdUsageHint(c))}
}

// cmdPrefix is "run: ", "reproduce pwr: ", ... ("" for the root), which
// an error of c starts with (after "wattsched: ").
func cmdPrefix(c *cobra.Command) string {
	if !c.HasParent() {
		return ""
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ") + ": "
}

// suggestFlags is the "Did you mean this?" block for a mistyped flag
// name: the flags of c within two edits of it, or that it begins; "" when
// none.
func suggestFlags(c *cobra.Command, typed string) string {
	var out []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || len(f.Name) == 1 {
			return
		}
		if editDistance(typed, f.Name) <= 2 || (len(typed) > 1 && strings.HasPrefix(f.Name, typed)) {
			out = append(out, "--"+f.Name)
		}
	})
	if len(out) == 0 {
		return ""
	}
	return "\n\nDid you mean this?\n\t" + strings.Join(out, "\n\t") + "\n"
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// cmdline is the command line that ran c as its manifest records it and a
// merge runs it again: c's path (run, reproduce pwr, ...) and the rest of
// the line as given.
func (a *app) cmdline(c *cobra.Command) []string {
	path := strings.Fields(c.CommandPath())[1:]
	rest := slices.Clone(a.raw)
	for _, w := range path {
		if i := slices.Index(rest, w); i >= 0 {
			rest = slices.Delete(rest, i, i+1)
		}
	}
	return append(path, rest...)
}

// noArgs refuses positional arguments with the command's own message.
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%sunexpected argument %q\n%s", cmdPrefix(c), args[0], cmdUsageHint(c))}
	}
	return nil
}

func (a *app) runCmd(name string) *cobra.Command {
	c := &cobra.Command{Use: "run [-c scenario.yaml] -o DIR [flags]",
		Short: "run a scenario: inflation, replay, hpc, elastic, coloc or slotted",
		Long: `Run a scenario file (docs/scenarios.md) and write its results into DIR: summary.json,
CSVs of every run, plots and report.html. Without -c it runs the embedded
pwr-default scenario (the PWR paper's inflation on the openb Default trace).

The scenario's mode picks the engine: inflation (capacity curves), replay (a
trace at its recorded times), hpc (an SWF job log under VAHRM and baselines),
elastic (training jobs under PowerFlow and baselines), coloc (co-located
training jobs under EaCO and baselines) or slotted (CE-DLA's 15-minute plans).
Everything is checked before any run: the scenario, its policies and hardware,
the memory the runs need (--max-memory) and the output directory.`,
		Example: `  wattsched run -o out/demo
  wattsched run -c examples/replay-openb.yaml -o out/replay --seeds 3
  wattsched run -c examples/byo-replay.yaml -o out/byo --explain
  wattsched run -c examples/slotted-cedla.yaml -o out/cedla --solver-log out/highs.log`,
		Args: cobra.ArbitraryArgs}
	if name == "compare" {
		c.Use = "compare -c scenario.yaml -o DIR [flags]"
		c.Short = "replay your trace on your cluster under several policies and seeds"
		c.Long = `Replay a trace at its recorded times (a mode: replay scenario) under each of the
scenario's policies, crossed with its variants (power-down, power limit, PUE,
grid, catalog) and seeds. Every metric is a mean with its 95% confidence
interval, with a verdict per system against an equivalence threshold
(--equivalence), wait and completion-time distributions, step plots of power
and a plain-language summary at the top of report.html (docs/scenarios.md#verdicts).`
		c.Example = `  wattsched compare -c examples/byo-replay.yaml -o out/byo --seeds 5
  wattsched compare -c mycluster/scenario.yaml -o mycluster-compare --equivalence 0.5%
  wattsched compare -c examples/replay-openb.yaml -o out/shard-0 --shard 0/4`
	}
	f := newScenarioFlags(name, c.Flags())
	c.MarkFlagFilename("c", "yaml", "yml")
	c.MarkFlagDirname("o")
	c.MarkFlagFilename("catalog", "yaml", "yml")
	c.RunE = func(c *cobra.Command, args []string) error {
		r, err := parseScenarioRun(name, c.Flags(), f, args, a.stderr, a.merge)
		if err != nil {
			return err
		}
		if name == "compare" {
			return cmdCompare(r, a.cmdline(c), a.stdout)
		}
		return cmdRun(a.ctx, r, a.cmdline(c), a.stdout)
	}
	return c
}

func (a *app) mergeCmd() *cobra.Command {
	c := &cobra.Command{Use: "merge -o DIR SHARD_DIR... [--force]",
		Short: "put the outputs of --shard 0/n .. n-1/n together: the files one unsharded run writes",
		Long: `Put together the directories that 'run', 'compare' or 'reproduce' wrote with
--shard i/n (one per shard, from any machines, in any order) into exactly the
files one unsharded run of the same command writes. The shards must come from
one command, version, binary and set of input files, and none may be missing
(docs/kubernetes.md#sweeps-over-many-machines---shard-wattsched-merge).`,
		Example: `  for i in 0 1 2 3; do wattsched reproduce vahrm --shard $i/4 -o out/shard-$i; done
  wattsched merge -o out/vahrm out/shard-0 out/shard-1 out/shard-2 out/shard-3
  wattsched merge -o out/vahrm out/shard-* --force`,
		DisableFlagsInUseLine: true,
		Args:                  cobra.ArbitraryArgs,
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}}
	out := c.Flags().StringP("o", "o", "", "results directory (required)")
	force := c.Flags().Bool("force", false, "replace a non-empty results directory")
	c.MarkFlagDirname("o")
	c.RunE = func(c *cobra.Command, args []string) error {
		if *out == "" || len(args) == 0 {
			return usageError{errors.New("merge: want 'merge -o DIR SHARD_DIR...' (the directories that --shard i/n wrote)")}
		}
		return cmdMerge(a.ctx, *out, *force, args, a.stdout, a.stderr)
	}
	return c
}

// studyExamples are each study's example command lines (its docs page has
// more).
var studyExamples = map[string]string{
	"pwr": `  wattsched reproduce pwr -o out/pwr --seeds 10
  wattsched reproduce pwr -o out/fgdsim --seeds 10 --compat fgd-sim
  wattsched reproduce pwr -o out/pwr-gs --seeds 3 --trace gpushare40,gpushare100`,
	"vahrm": `  wattsched reproduce vahrm -o out/vahrm-q --quick
  wattsched reproduce vahrm -o out/vahrm --jobs 20000 --seed 7 --force
  wattsched reproduce vahrm -o out/mine --swf logs/site.swf.gz --procs-per-node 4 --jobs 5000`,
	"powerflow": `  wattsched reproduce powerflow -o out/pf-quick --quick
  wattsched reproduce powerflow -o out/pf-grid --grid
  wattsched reproduce powerflow -o out/pf --philly cluster_job_log.csv.gz --start "2017-10-20 00:00:00" --hours 24`,
	"eaco": `  wattsched reproduce eaco -o out/eaco-q --quick
  wattsched reproduce eaco -o out/eaco --sweep`,
	"cedla": `  wattsched reproduce cedla -o out/cedla-q --quick
  wattsched reproduce cedla -o out/cedla --seeds 5 --prices my-prices.csv --carbon my-carbon.csv --force`,
}

func (a *app) reproduceCmd() *cobra.Command {
	var names []string
	for _, st := range studies() {
		names = append(names, st.Name())
	}
	c := &cobra.Command{Use: "reproduce PAPER -o DIR [flags]",
		Short: "reproduce a paper's evaluation and check its claims: " + strings.Join(names, ", "),
		Long: `Reproduce one paper's evaluation: the runs, the paper's claims beside the
measured figures ("N of M claims hold" first), and what stands in for the
paper's private data. Each paper's page, docs/reproduce-PAPER.md, says how it
was reproduced and what was measured. Every reproduction takes -o DIR, --force
and --max-memory SIZE; ` + strings.Join(shardable, ", ") + ` also take --shard i/n.`,
		Example: `  wattsched reproduce pwr -o out/pwr --seeds 10
  wattsched reproduce cedla -o out/cedla-q --quick
  wattsched reproduce eaco --help`,
		Args: cobra.ArbitraryArgs,
		// A mistyped paper's flags are not the parent's: the paper is
		// what the error names.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		ValidArgs:          names,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("reproduce: which paper? (available: %s)\n%s", strings.Join(names, ", "), cmdUsageHint(c))}
			}
			c.SuggestionsMinimumDistance = 2
			hint := ""
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				hint = "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
			}
			return usageError{fmt.Errorf("reproduce: unknown paper %q (available: %s)%s\n%s", args[0], strings.Join(names, ", "), hint, cmdUsageHint(c))}
		}}
	for _, st := range studies() {
		c.AddCommand(a.studyCmd(st))
	}
	return c
}

// studyCmd is `reproduce NAME`: -o, --force, --max-memory, --shard where
// the study is shardable (elsewhere a hidden flag that says so), and the
// study's own flags.
func (a *app) studyCmd(st experiment.Study) *cobra.Command {
	a.studies[st.Name()] = st
	use, short, _ := strings.Cut(st.Synopsis(), "\n")
	short = strings.TrimSpace(short)
	ex := studyExamples[st.Name()]
	if ex == "" {
		ex = "  wattsched reproduce " + st.Name() + " -o out/" + st.Name()
	}
	long := strings.ToUpper(short[:1]) + short[1:] + ".\n\n" +
		"docs/reproduce-" + st.Name() + ".md says how the paper was reproduced, what stands in for\n" +
		"its data and what was measured. The runs' memory is estimated before any work\n" +
		"and refused above --max-memory (default: half the machine's memory)."
	if slices.Contains(shardable, st.Name()) {
		long += "\nWith --shard i/n it runs one shard of the runs, for 'wattsched merge'."
	}
	c := &cobra.Command{Use: st.Name() + " " + use, Short: short, Long: long, Example: ex,
		DisableFlagsInUseLine: true, Args: cobra.ArbitraryArgs}
	fs := c.Flags()
	out := fs.StringP("o", "o", "", "results directory (required)")
	force := fs.Bool("force", false, "replace a non-empty results directory")
	shard := shardFlag(fs)
	if !slices.Contains(shardable, st.Name()) {
		fs.MarkHidden("shard") // refused below with a message that says so
	}
	maxMem := maxMemoryFlag(fs)
	fs.AddGoFlagSet(studyFlagSet(st))
	c.MarkFlagDirname("o")
	if fs.Lookup("trace") != nil {
		c.RegisterFlagCompletionFunc("trace", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return alibaba2023.Traces(), cobra.ShellCompDirectiveNoFileComp
		})
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		return cmdReproduce(a.ctx, st, reproduceFlags{out: *out, force: *force, shard: *shard, maxMem: *maxMem}, args, a.cmdline(c), a.stdout, a.stderr, a.merge)
	}
	return c
}

func (a *app) benchCmd() *cobra.Command {
	c := &cobra.Command{Use: "bench [--policies a,b] [--trace NAME] [--scale 1,10 [--reps N] [--plot FILE.svg] | --replay | --engines all | --reproductions all]",
		Short: "time one inflation run per policy on the 1213-node cluster (one core), and each paper's engine",
		Long: `Time one inflation run per policy of the PWR comparison on the openb cluster
(1,213 nodes, one core), against a budget of 1 s per run; with no flags it then
times the VAHRM replay and decision, the PowerFlow sweep and decision, the EaCO
study and decision, and CE-DLA's rolling plan (docs/performance.md).

--scale runs each policy on the GPU node list repeated that many times (1,10:
1,213 and 12,130 nodes, with the tasks to 1.3x capacity) and prints the CPU time
and its ratio to the first factor; --replay replays the openb Default pods
x20 on the GPU node list x10 (163,040 pods on 12,130 nodes); --engines runs each
engine (inflation, replay, hpc, elastic, coloc, slotted) at 1x and 10x its work
and prints the CPU ratio against the budget of 12x; --reproductions runs each
full reproduction (pwr: 13 traces, 10 seeds; vahrm; powerflow; eaco; cedla) or
the ones named (also powerflow-grid and each one's -quick variant) as a child
process into a temporary directory (--keep DIR keeps the results) and prints
its CPU seconds, wall seconds, peak RSS, the load average, the machine and a
digest of its results, against the budget of 300 s on a quiet machine.`,
		Example: `  wattsched bench
  wattsched bench --policies FGD,PWR --trace gpushare40
  wattsched bench --scale 1,10 --reps 3 --plot scale.svg
  wattsched bench --replay --policies FGD
  wattsched bench --engines coloc,hpc --reps 2
  wattsched bench --reproductions all
  wattsched bench --reproductions vahrm,powerflow-grid --keep out/timed --procs 1`,
		DisableFlagsInUseLine: true, Args: noArgs}
	var f benchFlags
	c.Flags().StringVar(&f.policies, "policies", "", "comma-separated policy names (default: all of the PWR comparison)")
	c.Flags().StringVar(&f.trace, "trace", "default", "openb pod list")
	c.Flags().StringVar(&f.scale, "scale", "", "instead: cluster factors (e.g. 1,10): one inflation run per policy on the GPU node list repeated that many times, CPU time and the ratio to the first factor")
	c.Flags().IntVar(&f.reps, "reps", 1, "with --scale: repetitions, interleaved; the least CPU time of each run is kept")
	c.Flags().StringVar(&f.plot, "plot", "", "with --scale: also write an SVG of the CPU time per task over the node count to this file")
	c.Flags().BoolVar(&f.force, "force", false, "replace an existing --plot file (never a symbolic link or a file inside a result)")
	c.Flags().BoolVar(&f.replay, "replay", false, "instead: replay the openb Default pods x--replay-pods on the GPU node list x--replay-nodes, one run per single scorer and 0.1*PWR+0.9*FGD")
	c.Flags().IntVar(&f.replayNodes, "replay-nodes", 10, "with --replay: node list factor")
	c.Flags().IntVar(&f.replayPods, "replay-pods", 20, "with --replay: pod list factor")
	c.Flags().StringVar(&f.engines, "engines", "", "instead: all, or comma-separated engines (inflation, replay, gangs, mig, hpc, elastic, coloc, slotted): each at 1x and 10x its work, the CPU ratio against the 12x budget (--reps applies)")
	c.Flags().StringVar(&f.repros, "reproductions", "", "instead: all (the full runs), or comma-separated reproductions (pwr, vahrm, powerflow, eaco, cedla, powerflow-grid, NAME-quick): each timed as a child process (CPU, wall, peak RSS, load)")
	c.Flags().StringVar(&f.keep, "keep", "", "with --reproductions: write the results to this new directory (one folder and its stdout per reproduction) and keep them")
	c.Flags().IntVar(&f.procs, "procs", 0, "with --reproductions: GOMAXPROCS of the reproductions (0: all cores)")
	c.RegisterFlagCompletionFunc("trace", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return alibaba2023.Traces(), cobra.ShellCompDirectiveNoFileComp
	})
	c.RunE = func(*cobra.Command, []string) error { return cmdBench(f, a.stdout, a.stderr) }
	return c
}

func (a *app) tracesCmd() *cobra.Command {
	c := &cobra.Command{Use: "traces", Short: "list the embedded openb traces",
		Long: `List the embedded openb pod lists (Alibaba's GPU cluster trace of 2023), one a line:
the names a scenario's trace.pods, 'reproduce pwr --trace' and 'bench --trace' take.`,
		Example: "  wattsched traces",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, strings.Join(alibaba2023.Traces(), "\n"))
			return nil
		}}
	s := &cobra.Command{Use: "scale --factor N (--nodes openb-gpu|FILE | --pods NAME|FILE) -o FILE",
		Short: "write a node or pod list repeated N times with renamed copies",
		Long: `Write the node list (--nodes: openb-gpu, openb-all or a CSV file) or the pod list
(--pods: an embedded openb name or a CSV file) repeated --factor times, copy k>0 of
a name with the suffix -x<k> and every pod copy at its original times: the larger
clusters of the scaling benchmarks (docs/performance.md).`,
		Example: `  wattsched traces scale --factor 10 --nodes openb-gpu -o nodes-x10.csv
  wattsched traces scale --factor 20 --pods default -o pods-x20.csv`,
		DisableFlagsInUseLine: true, Args: noArgs}
	var f scaleFlags
	s.Flags().IntVar(&f.factor, "factor", 0, "copies of the list (1..10000); copy k>0 of a name gets the suffix -x<k>")
	s.Flags().StringVar(&f.nodes, "nodes", "", "node list to repeat: openb-gpu, openb-all or a CSV file")
	s.Flags().StringVar(&f.pods, "pods", "", "pod list to repeat instead: an embedded openb name (default, ...) or a CSV file; every copy keeps the original times")
	s.Flags().StringVarP(&f.out, "o", "o", "", "output CSV file (required)")
	s.Flags().BoolVar(&f.force, "force", false, "replace an existing -o file (never a symbolic link or a file inside a result)")
	s.RunE = func(*cobra.Command, []string) error { return cmdTracesScale(f, a.stdout) }
	c.AddCommand(s, a.tracesPhillyCmd())
	return c
}

func (a *app) tracesPhillyCmd() *cobra.Command {
	p := &cobra.Command{Use: "philly --table FILE --from YYYY-MM-DD [--days N] [--min-gpus N] -o FILE",
		Short: "write a window of a Philly job table as a pod list, multi-machine jobs as gangs",
		Long: `Read a Philly job table in the Pollux/AdaptDL form (timestamp, duration, num_gpus,
gpu_time, cluster) and write the jobs submitted in --days days from --from (with
at least --min-gpus GPUs) as an openb pod list: a job of at most --node-gpus GPUs
is one pod, a larger one a gang of as few pods as its GPUs need, GPUs spread
evenly (gang and gang_size columns; docs/formats.md#gang-jobs). The table records
no CPU or memory: each pod gets --cpu-per-gpu and --mem-per-gpu per GPU.`,
		Example:               `  wattsched traces philly --table philly_jobs_pollux.csv --from 2017-11-06 --days 7 --min-gpus 2 -o philly-pods.csv`,
		DisableFlagsInUseLine: true, Args: noArgs}
	var f phillyFlags
	p.Flags().StringVar(&f.table, "table", "", "Philly job table, Pollux/AdaptDL form (required)")
	p.Flags().StringVar(&f.from, "from", "", "first day of the window, YYYY-MM-DD (required); submit times count from its midnight")
	p.Flags().IntVar(&f.days, "days", 1, "days in the window (1..366)")
	p.Flags().IntVar(&f.minGPUs, "min-gpus", 1, "keep jobs of at least this many GPUs")
	p.Flags().IntVar(&f.shape.NodeGPUs, "node-gpus", 8, "GPUs of one machine: the most one pod takes (1..8)")
	p.Flags().Int64Var(&f.shape.CPUMilliPerGPU, "cpu-per-gpu", 4000, "milli-vCPU per GPU of a pod")
	p.Flags().Int64Var(&f.shape.MemMiBPerGPU, "mem-per-gpu", 32768, "memory MiB per GPU of a pod")
	p.Flags().StringVarP(&f.out, "o", "o", "", "output CSV file (required)")
	p.Flags().BoolVar(&f.force, "force", false, "replace an existing -o file (never a symbolic link or a file inside a result)")
	p.RunE = func(*cobra.Command, []string) error { return cmdTracesPhilly(f, a.stdout) }
	return p
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{Use: "version", Short: "wattsched's version, how the binary was built and whether HiGHS is linked",
		Long: `Print wattsched's version and, when the binary carries build information, its
module version, VCS revision and Go toolchain; then whether the HiGHS solver is
linked (and which version), which CE-DLA (reproduce cedla, mode slotted) needs.
Results record the version only. 'wattsched --version' prints the same.`,
		Example: "  wattsched version\n  wattsched --version",
		Args:    noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, versionLine())
			return nil
		}}
}

func (a *app) importCmd() *cobra.Command {
	wantK8s := func(c *cobra.Command) error {
		return usageError{fmt.Errorf("import: want 'import k8s -f cluster.json -o DIR' (kubectl get nodes,pods -A -o json > cluster.json) or 'import k8s --kubeconfig FILE [--context NAME] -o DIR'\n%s", cmdUsageHint(c))}
	}
	c := &cobra.Command{Use: "import k8s ...",
		Short: "turn a Kubernetes cluster's nodes and pods into an openb node list, pod list and scenario",
		Long: `Import a real cluster into the simulator: its nodes as an openb node list, its
pods as an openb pod list, a scenario that compares policies on them, and a
report of what was imported and what was skipped. The one source so far is
Kubernetes: 'wattsched import k8s', from a kubectl dump or a live cluster.`,
		Example:               "  kubectl get nodes,pods -A -o json | wattsched import k8s -f - -o mycluster",
		DisableFlagsInUseLine: true, Args: cobra.ArbitraryArgs,
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE:               func(c *cobra.Command, _ []string) error { return wantK8s(c) }}
	k := &cobra.Command{Use: "k8s (-f cluster.json | --kubeconfig FILE [--context NAME]) -o DIR [flags]",
		Short: "turn 'kubectl get nodes,pods -A -o json' or a live cluster into an openb node list, pod list and scenario",
		Long: `Turn 'kubectl get nodes,pods -A -o json' (-f FILE, or -f - to read it from a pipe),
or the nodes and pods of a live cluster read through a kubeconfig, into an openb
node list and pod list, a scenario (a replay when pods have run times) and a
report of what was imported. MIG devices and aliyun.com/gpu-mem become GPU
shares; system pods (DaemonSet, static and mirror pods, kube-system and each
--system-namespace) are not jobs: their requests are reserved on their nodes.
Pods it cannot read are skipped with a warning (--strict: an error). Times a dump lost can come from
kube-state-metrics in Prometheus (--prometheus with --range, or a saved answer
with --pod-times). Formats: docs/formats.md#a-kubernetes-cluster-wattsched-import-k8s.`,
		Example: `  kubectl get nodes,pods -A -o json | wattsched import k8s -f - -o mycluster
  wattsched import k8s -f cluster.json -o mycluster --strict
  wattsched import k8s --kubeconfig ~/.kube/config --context prod -o mycluster`,
		Args: cobra.ArbitraryArgs}
	f := importFlags(k.Flags())
	k.MarkFlagFilename("f", "json")
	k.MarkFlagDirname("o")
	k.RunE = func(c *cobra.Command, args []string) error { return cmdImport(a.ctx, f, args, a.stdout, a.stderr) }
	c.AddCommand(k)
	return c
}

func (a *app) calibrateCmd() *cobra.Command {
	c := &cobra.Command{Use: "calibrate (--prometheus URL --range START,END[,STEP] | --from query.json) -o catalog.yaml [flags]",
		Short: "fit GPU idle and full power (or a curve) from measured DCGM series; write a catalog file",
		Long: `Fit each GPU model's idle and full power (or a piecewise curve, --curve) from
measured DCGM exporter series in Prometheus (--prometheus with --range) or a
saved range-query answer (--from), over utilisation or, with --pods, over the
GPU share allocated to the pods that ran (a 'kubectl get pods -A -o json'
dump). It reports the fit's error and writes a catalog file that 'run
--catalog', a scenario's catalog and the Kubernetes plugins read
(docs/measured-power.md).`,
		Example: `  wattsched calibrate --prometheus http://prometheus:9090 --range 2026-11-20T00:00:00Z,2026-11-21T00:00:00Z,15s -o my-gpus.yaml
  wattsched calibrate --from query.json -o my-gpus.yaml --curve 0.25,0.5,0.75
  wattsched calibrate --from query.json --pods pods.json -o my-gpus.yaml`,
		DisableFlagsInUseLine: true, Args: cobra.ArbitraryArgs}
	f := calibrateFlags(c.Flags())
	c.Flags().SetAnnotation("o", valueAnnotation, []string{"FILE"})
	c.MarkFlagFilename("from", "json")
	c.MarkFlagFilename("pods", "json")
	c.RunE = func(c *cobra.Command, args []string) error { return cmdCalibrate(a.ctx, f, args, a.stdout) }
	return c
}

// helpCmd is `help [COMMAND...]`: the help of a command, as its --help;
// an unknown one is a usage error with suggestions.
func helpCmd() *cobra.Command {
	return &cobra.Command{Use: "help [command]", Short: "the help of a command (as 'wattsched COMMAND --help')",
		Long: `Print the help of a command: what it does, its usage line, examples and
flags, exactly as 'wattsched COMMAND --help' prints it. Without a command, the
list of commands.`,
		Example: `  wattsched help
  wattsched help reproduce eaco`,
		ValidArgsFunction: func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 { // reproduce NOPE, import NOPE
				hint := ""
				cmd.SuggestionsMinimumDistance = 2
				if s := cmd.SuggestionsFor(rest[0]); len(s) > 0 {
					hint = "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
				}
				return usageError{fmt.Errorf("help: %s has no command %q%s", cmd.CommandPath(), rest[0], hint)}
			}
			cmd.InitDefaultHelpFlag()
			cmd.InitDefaultVersionFlag()
			return cmd.Help()
		}}
}

// completionCmd is `completion SHELL` for bash, zsh, fish and PowerShell
// (cobra's scripts, which ask `wattsched __complete` for the words).
func completionCmd(root *cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: "completion bash|zsh|fish|powershell",
		Short: "a shell completion script: bash, zsh, fish or powershell",
		Long: `Print a completion script for the shell: commands, papers, flags, embedded
traces and file names complete on TAB. Load it in the current shell, or install
it where the shell loads completions at start. The bash script needs the
bash-completion package (as kubectl's does); zsh needs compinit.`,
		Example: `  source <(wattsched completion bash)                                     # bash, this shell
  wattsched completion bash > /etc/bash_completion.d/wattsched           # bash, every shell
  wattsched completion zsh > "${fpath[1]}/_wattsched"                    # zsh (compinit enabled)
  wattsched completion fish > ~/.config/fish/completions/wattsched.fish  # fish
  wattsched completion powershell | Out-String | Invoke-Expression       # PowerShell`,
		DisableFlagsInUseLine: true,
		ValidArgs:             []string{"bash", "zsh", "fish", "powershell"},
		Args:                  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("completion: want one of bash, zsh, fish, powershell\n%s", cmdUsageHint(c))}
			}
			w := c.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(w)
			}
			return usageError{fmt.Errorf("completion: unknown shell %q, want one of bash, zsh, fish, powershell\n%s", args[0], cmdUsageHint(c))}
		}}
	return c
}
