package cli

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/wattsched/wattsched/solver"
)

// commandPaths lists every command of the tree but the hidden ones
// (__complete) as its words after "wattsched": {} is the root.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, sub := range c.Commands() {
			if !sub.Hidden {
				walk(sub, append(slices.Clone(path), sub.Name()))
			}
		}
	}
	walk(newApp(context.Background(), io.Discard, io.Discard, nil).root(), nil)
	if len(out) < 15 {
		t.Fatalf("only %d commands in the tree: %v", len(out), out)
	}
	return out
}

// Every command has a one-line summary, a description and an example,
// and `CMD --help`, `CMD -h` and `help CMD` print them to standard output
// and exit 0.
func TestEveryCommandHelp(t *testing.T) {
	root := newApp(context.Background(), io.Discard, io.Discard, nil).root()
	for _, path := range commandPaths(t) {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		name := strings.Join(append([]string{"wattsched"}, path...), " ")
		switch {
		case c.Short == "" || strings.Contains(c.Short, "\n"):
			t.Errorf("%s: summary %q, want one line", name, c.Short)
		case len(c.Long) < 2*len(c.Short):
			t.Errorf("%s: description %q, want more than its summary", name, c.Long)
		case !strings.Contains(c.Example, "wattsched "):
			t.Errorf("%s: example %q, want a command line", name, c.Example)
		}
		for _, args := range [][]string{append(slices.Clone(path), "--help"), append(slices.Clone(path), "-h"), append([]string{"help"}, path...)} {
			code, out, errs := run(t, args...)
			if code != 0 || errs != "" {
				t.Errorf("%v: exit %d, stderr %q, want 0 and nothing", args, code, errs)
			}
			firstLong, _, _ := strings.Cut(c.Long, "\n")
			firstEx, _, _ := strings.Cut(c.Example, "\n")
			for _, want := range []string{firstLong, "Usage:", "Examples:", firstEx} {
				if !strings.Contains(out, want) {
					t.Errorf("%v: help lacks %q:\n%s", args, want, out)
				}
			}
		}
	}
}

// Help names flags' values as the usage lines do (-o DIR, --seeds N), not
// by their Go types.
func TestHelpNamesValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--help"}, []string{"\n  -c FILE ", "\n  -o DIR ", "\n  --seeds N ", "\n  --shard i/n ", "\n  --max-memory SIZE "}},
		{[]string{"calibrate", "--help"}, []string{"\n  -o FILE ", "\n  --range START,END[,STEP] "}},
		{[]string{"reproduce", "vahrm", "--help"}, []string{"\n  --swf FILE ", "\n  --quick "}},
	} {
		_, out, _ := run(t, c.args...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: help lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

// A bare `wattsched` prints the help on standard error and exits 2.
func TestBareCommandIsUsageError(t *testing.T) {
	code, out, errs := run(t)
	if code != 2 || out != "" || !strings.Contains(errs, "Available Commands:") || !strings.Contains(errs, "reproduce") {
		t.Errorf("bare wattsched: exit %d, stdout %q, stderr %q; want 2 and the help on stderr", code, out, errs)
	}
}

// Flags may follow positional arguments: merge's own usage line, with
// --force last, reads the shard directories (and not --force as one).
func TestFlagsAnywhere(t *testing.T) {
	d := t.TempDir()
	a, b := filepath.Join(d, "a"), filepath.Join(d, "b")
	code, _, errs := run(t, "merge", "-o", filepath.Join(d, "out"), a, b, "--force")
	if code != 1 || !strings.Contains(errs, filepath.Join(a, "shard.json")) || strings.Contains(errs, "--force/") {
		t.Errorf("merge -o DIR A B --force: exit %d, %q; want 1 naming %s", code, errs, filepath.Join(a, "shard.json"))
	}
	// A flag between a run's flags and after its scenario works the same.
	code, _, errs = run(t, "run", "-o", filepath.Join(d, "r"), "--seeds", "0", "--strict")
	if code != 2 || !strings.Contains(errs, "run: --seeds 0, want 1..1000") {
		t.Errorf("run ... --strict: exit %d, %q", code, errs)
	}
}

// A long flag written with one dash, as the standard library's flag
// package read it, is still that flag (not -s -e -e -d -s, nor -c atalog).
func TestOneDashLongFlags(t *testing.T) {
	d := t.TempDir()
	if code, _, errs := run(t, "run", "-o", d, "-seeds", "0"); code != 2 || !strings.Contains(errs, "run: --seeds 0, want 1..1000") {
		t.Errorf("run -seeds 0: exit %d, %q", code, errs)
	}
	cat := filepath.Join(d, "missing.yaml")
	if code, _, errs := run(t, "run", "-o", filepath.Join(d, "o"), "-catalog", cat, "-force"); code != 1 || !strings.Contains(errs, cat) {
		t.Errorf("run -catalog FILE -force: exit %d, %q; want 1 naming %s", code, errs, cat)
	}
	if code, out, _ := run(t, "reproduce", "eaco", "-help"); code != 0 || !strings.Contains(out, "Usage:") {
		t.Errorf("reproduce eaco -help: exit %d", code)
	}
	if code, out, _ := run(t, "-version"); code != 0 || !strings.HasPrefix(out, "wattsched "+Version) {
		t.Errorf("-version: exit %d, %q", code, out)
	}
}

// Mistyped commands, papers and flags get suggestions; each is a usage
// error (exit 2).
func TestSuggestions(t *testing.T) {
	d := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"comapre"}, []string{`unknown command "comapre"`, "Did you mean this?\n\tcompare\n"}},
		{[]string{"reproduce", "ecao", "-o", d}, []string{`reproduce: unknown paper "ecao"`, "Did you mean this?\n\teaco\n"}},
		{[]string{"run", "-o", d, "--seed", "3"}, []string{"run: unknown flag: --seed", "Did you mean this?\n\t--seeds\n", "Run 'wattsched run --help' for usage."}},
		{[]string{"reproduce", "pwr", "-o", d, "--seed", "3"}, []string{"reproduce pwr: unknown flag: --seed", "\t--seeds\n"}},
		{[]string{"compare", "-o", d, "-seedz", "3"}, []string{"compare: unknown shorthand flag", "\t--seeds\n"}},
		{[]string{"calibrate", "--promethus", "http://x"}, []string{"\t--prometheus\n"}},
		{[]string{"--verison"}, []string{"wattsched: unknown flag: --verison", "\t--version\n", "Run 'wattsched --help' for usage."}},
		{[]string{"traces", "x"}, []string{`wattsched: traces: unexpected argument "x"`}},
	} {
		code, _, errs := run(t, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", c.args, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, errs)
			}
		}
	}
	if code, _, errs := run(t, "help", "reproduce", "pwx"); code != 2 || !strings.Contains(errs, "Did you mean this?\n\tpwr\n") {
		t.Errorf("help reproduce pwx: exit %d, %q; want 2 and a suggestion", code, errs)
	}
	if code, _, errs := run(t, "help", "comapre"); code != 2 || !strings.Contains(errs, "Did you mean this?\n\tcompare\n") {
		t.Errorf("help comapre: exit %d, %q; want 2 and a suggestion", code, errs)
	}
	if code, _, errs := run(t, "run", "-o", d, "--zzzzzz"); code != 2 || strings.Contains(errs, "Did you mean") {
		t.Errorf("a flag like none: exit %d, %q; want 2 and no suggestion", code, errs)
	}
}

// A flag a command refuses is not listed for it: eaco and cedla have no
// shards (--shard is refused with the old message, not listed), pwr has.
func TestRefusedFlagsNotListed(t *testing.T) {
	for _, st := range studies() {
		_, out, _ := run(t, "reproduce", st.Name(), "--help")
		_, words, _ := run(t, "__complete", "reproduce", st.Name(), "--")
		listed := strings.Contains(out, "--shard")
		offered := strings.Contains(words, "--shard")
		want := slices.Contains(shardable, st.Name())
		if listed != want || offered != want {
			t.Errorf("reproduce %s: --shard in help %v, in completion %v; want %v", st.Name(), listed, offered, want)
		}
		if !want {
			code, _, errs := run(t, "reproduce", st.Name(), "-o", filepath.Join(t.TempDir(), "o"), "--shard", "0/2")
			if code != 2 || !strings.Contains(errs, "--shard is supported for pwr, vahrm, powerflow, not yet for "+st.Name()) {
				t.Errorf("reproduce %s --shard: exit %d, %q", st.Name(), code, errs)
			}
		}
	}
}

// version and --version say whether HiGHS is linked, and its version.
func TestVersionSaysHiGHS(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := run(t, args...)
		want := "HiGHS: not linked"
		if solver.Available() {
			want = "HiGHS: linked, version " + solver.Version()
			if !strings.HasPrefix(solver.Version(), "1.") {
				t.Errorf("solver.Version() = %q, want HiGHS's version", solver.Version())
			}
		}
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("%v: exit %d, %q; want %q", args, code, out, want)
		}
	}
}

// Completion: a script for each shell; bash and zsh load theirs without
// error where installed (`make zsh` installs zsh); the words come from
// the command tree (papers, flags, embedded traces).
func TestCompletionScripts(t *testing.T) {
	scripts := map[string]string{}
	for shell, want := range map[string]string{
		"bash":       "complete -o default -F __start_wattsched wattsched",
		"zsh":        "#compdef wattsched",
		"fish":       "complete -c wattsched",
		"powershell": "Register-ArgumentCompleter",
	} {
		code, out, errs := run(t, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d (%s), script lacks %q", shell, code, errs, want)
		}
		scripts[shell] = out
	}
	dir := t.TempDir()
	for _, c := range []struct{ shell, check string }{
		// bash: the function is defined and bound to wattsched.
		{"bash", `source "$1" && complete -p wattsched && declare -F __start_wattsched`},
		// zsh: with compinit, the script registers _wattsched for wattsched.
		{"zsh", `autoload -U compinit && compinit -u -D && source "$1" && [[ ${_comps[wattsched]} == _wattsched ]] && echo bound`},
	} {
		t.Run(c.shell, func(t *testing.T) {
			sh, err := exec.LookPath(c.shell)
			if err != nil {
				t.Skipf("%s is not installed (make %s installs it): its completion script is generated but not loaded", c.shell, c.shell)
			}
			file := filepath.Join(dir, "wattsched."+c.shell)
			if err := os.WriteFile(file, []byte(scripts[c.shell]), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"-c", c.check, c.shell, file}
			if c.shell == "zsh" {
				args = append([]string{"-f"}, args...) // no user start-up files
			}
			cmd := exec.Command(sh, args...)
			cmd.Env = append(os.Environ(), "HOME="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "error") || strings.Contains(string(out), "not found") {
				t.Errorf("%s loading the completion script: %v\n%s", c.shell, err, out)
			}
		})
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", ""}, []string{"run", "compare", "reproduce", "merge", "completion"}},
		{[]string{"__complete", "reproduce", ""}, []string{"pwr", "vahrm", "powerflow", "eaco", "cedla"}},
		{[]string{"__complete", "reproduce", "pwr", "--trace", ""}, []string{"default", "gpushare40"}},
		{[]string{"__complete", "completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		{[]string{"__complete", "compare", "--eq"}, []string{"--equivalence"}},
	} {
		_, out, _ := run(t, c.args...)
		var words []string
		for _, l := range strings.Split(out, "\n") {
			w, _, _ := strings.Cut(l, "\t")
			words = append(words, w)
		}
		for _, w := range c.want {
			if !slices.Contains(words, w) {
				t.Errorf("%v: completion offers %v, lacks %s", c.args, words, w)
			}
		}
	}
}
