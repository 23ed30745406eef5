package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// docCommand is one `wattsched ...` command line found in the docs or in a
// command's help examples: where, and its words after "wattsched".
type docCommand struct {
	where string
	words []string
	// inline is a command in running text, which may end by naming a flag
	// without its value ("`wattsched calibrate --pods` reads ...").
	inline bool
}

var (
	// fenceLineRE finds a command in a line of a fenced code block: at the
	// line's start (after a prompt or variable assignments) or after a
	// shell operator.
	fenceLineRE = regexp.MustCompile(`(?:^\s*(?:\$\s+)?(?:[A-Z_]+=\S+\s+)*|[|;&]\s*|\bdo\s+|[$<]\(\s*)wattsched\s+(.*)`)
	// inlineRE finds an inline code span.
	inlineRE = regexp.MustCompile("`([^`]+)`")
)

// docCommands finds every `wattsched ...` command line in README.md and
// the Markdown files under docs/.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	files := []string{filepath.Join("..", "..", "README.md")}
	err := filepath.WalkDir(filepath.Join("..", "..", "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []docCommand
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(f), "../../")
		fenced, prompted := false, false
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			where := name + ":" + strconv.Itoa(i+1)
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				if fenced {
					prompted = promptedBlock(lines[i+1:])
				}
				continue
			}
			if fenced {
				// In a block that shows a session ("$ command", then its
				// output), only the prompted lines are commands.
				if prompted && !strings.HasPrefix(strings.TrimSpace(line), "$ ") {
					continue
				}
				if m := fenceLineRE.FindStringSubmatch(line); m != nil {
					out = append(out, docCommand{where, commandWords(m[1], true), false})
				}
				continue
			}
			for _, span := range inlineRE.FindAllStringSubmatch(line, -1) {
				// A table cell escapes | as \|.
				if m := fenceLineRE.FindStringSubmatch(strings.ReplaceAll(span[1], `\|`, "|")); m != nil {
					out = append(out, docCommand{where, commandWords(m[1], false), true})
				}
			}
		}
	}
	return out
}

// promptedBlock says whether the fenced block that starts at lines[0] has a
// line with a shell prompt ("$ ").
func promptedBlock(lines []string) bool {
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "```") {
			return false
		}
		if strings.HasPrefix(l, "$ ") {
			return true
		}
	}
	return false
}

// commandWords turns a documented command line (after "wattsched") into
// the words a user types: shell quoting removed, the line cut at a
// comment or a shell operator; synopsis notation expanded to one line
// that takes every option: [ ] and ( ) dropped, of alternatives a | b
// the first, "..." dropped.
func commandWords(line string, shell bool) []string {
	var toks []string
	var cur strings.Builder
	quote := rune(0)
	has := false
	flush := func() {
		if has {
			toks = append(toks, cur.String())
		}
		cur.Reset()
		has = false
	}
	prev, parens := ' ', 0
scan:
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, has = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && prev == ' ':
			break scan
		case shell && (r == ';' || r == '>' || r == '&' || (r == '|' && cur.Len() == 0 && parens == 0) || (r == ')' && parens == 0)):
			break scan
		case r == '(' || r == ')':
			parens += map[rune]int{'(': 1, ')': -1}[r]
			cur.WriteRune(r)
			has = true
		default:
			cur.WriteRune(r)
			has = true
		}
		prev = r
	}
	flush()
	var words []string
	depth, skipTo := 0, -1 // skipping the other alternatives until depth < skipTo
	for _, tok := range toks {
		open := len(tok) - len(strings.TrimLeft(tok, "[("))
		tok = tok[open:]
		// trailing closers beyond the token's own brackets close groups
		inner := strings.Count(tok, "[") + strings.Count(tok, "(")
		closeN := 0
		for strings.HasSuffix(tok, "]") || strings.HasSuffix(tok, ")") {
			if strings.Count(tok, "]")+strings.Count(tok, ")") <= inner {
				break
			}
			tok = tok[:len(tok)-1]
			closeN++
		}
		depth += open
		if tok == "|" {
			if depth == 0 {
				break // a shell pipe, or "version | --version"
			}
			skipTo = depth
		}
		tok = strings.TrimSuffix(tok, "...")
		if skipTo < 0 && tok != "" && tok != "|" {
			words = append(words, tok)
		}
		depth -= closeN
		if skipTo >= 0 && depth < skipTo {
			skipTo = -1
		}
	}
	return words
}

// placeholderRE is a value that stands for any value (DIR, N, FILE, ...).
var placeholderRE = regexp.MustCompile(`^(?:[A-Z][A-Z0-9_]*|<[a-z-]+>)$`)

// typed gives a placeholder the flag's type a value it accepts.
var typed = map[string]string{"int": "1", "float64": "1", "uint64": "1", "duration": "1s", "float": "1", "uint": "1"}

// resolve finds a command line's command and parses its flags as the
// tree does, placeholders for numbers given a number (and, where mention,
// a last flag without its value given a placeholder); it runs nothing. It
// returns the words so completed.
func resolve(words []string, mention bool) (*cobra.Command, []string, error) {
	root := newApp(context.Background(), io.Discard, io.Discard, nil).root()
	root.InitDefaultHelpCmd() // as Execute does
	c, rest, err := root.Find(words)
	if err != nil {
		return nil, nil, err
	}
	path := words[:len(words)-len(rest)]
	rest = slices.Clone(rest)
	lookup := func(w string) *pflag.Flag {
		name := strings.TrimLeft(w, "-")
		if !strings.HasPrefix(w, "-") || name == "" || strings.Contains(name, "=") || (!strings.HasPrefix(w, "--") && len(name) > 1) {
			return nil
		}
		if f := c.Flags().Lookup(name); f != nil && f.NoOptDefVal == "" {
			return f
		}
		return nil
	}
	if n := len(rest); mention && n > 0 && lookup(rest[n-1]) != nil {
		rest = append(rest, "VALUE")
	}
	for i := 0; i+1 < len(rest); i++ {
		if f := lookup(rest[i]); f != nil && placeholderRE.MatchString(rest[i+1]) {
			if v, ok := typed[f.Value.Type()]; ok {
				rest[i+1] = v
			}
		}
	}
	words = append(slices.Clone(path), rest...)
	if err := c.ParseFlags(rest); err != nil && !errors.Is(err, pflag.ErrHelp) {
		return nil, nil, err
	}
	return c, words, nil
}

// Every command line the docs show, and every example in --help, names a
// command of the tree with flags it takes (parsed as the tree parses
// them, nothing run); the same line with --help appended exits 0; the
// cheap ones (no output directory) run and exit 0.
func TestDocumentedCommandsParse(t *testing.T) {
	cmds := docCommands(t)
	if len(cmds) < 80 {
		t.Fatalf("found only %d command lines in the docs", len(cmds))
	}
	for _, path := range commandPaths(t) {
		c, _, _ := newApp(context.Background(), io.Discard, io.Discard, nil).root().Find(path)
		for _, line := range strings.Split(c.Example, "\n") {
			if m := fenceLineRE.FindStringSubmatch(line); m != nil {
				cmds = append(cmds, docCommand{"help of " + c.CommandPath(), commandWords(m[1], true), false})
			}
		}
	}
	seen := map[string]bool{}
	ran := 0
	for _, dc := range cmds {
		key := strings.Join(dc.words, "\x00")
		if seen[key] || len(dc.words) == 0 {
			continue
		}
		seen[key] = true
		c, words, err := resolve(dc.words, dc.inline)
		if err != nil {
			t.Errorf("%s: wattsched %s: %v", dc.where, strings.Join(dc.words, " "), err)
			continue
		}
		if c.Parent() == nil && !slices.Contains([]string{"--version", "-v", "--help", "-h"}, dc.words[0]) {
			t.Errorf("%s: wattsched %s names no command", dc.where, strings.Join(dc.words, " "))
			continue
		}
		if code, _, errs := run(t, append(slices.Clone(words), "--help")...); code != 0 {
			t.Errorf("%s: wattsched %s --help: exit %d: %s", dc.where, strings.Join(dc.words, " "), code, errs)
		}
		switch strings.Fields(c.CommandPath())[len(strings.Fields(c.CommandPath()))-1] {
		case "traces", "version", "completion", "help", "wattsched":
			if slices.Contains(dc.words, "--help") || slices.Contains(dc.words, "-h") {
				continue
			}
			if code, out, errs := run(t, dc.words...); code != 0 || out == "" {
				t.Errorf("%s: wattsched %s: exit %d, %q: %s", dc.where, strings.Join(dc.words, " "), code, out, errs)
			}
			ran++
		}
	}
	if ran < 3 {
		t.Errorf("ran only %d cheap documented commands", ran)
	}
	t.Logf("%d distinct command lines parsed, %d cheap ones run", len(seen), ran)
}

// The extraction itself: synopsis notation, quoting and shell operators.
func TestCommandWords(t *testing.T) {
	for _, c := range []struct {
		in    string
		shell bool
		want  string
	}{
		{`run [-c scenario.yaml] -o DIR [--seeds N]`, false, "run -c scenario.yaml -o DIR --seeds N"},
		{`calibrate (--prometheus URL --range START,END[,STEP] [--save query.json] | --from query.json) [--pods pods.json] -o catalog.yaml`, false,
			"calibrate --prometheus URL --range START,END[,STEP] --save query.json --pods pods.json -o catalog.yaml"},
		{`reproduce powerflow -o DIR [--pai-jobs F --pai-tasks F | --philly F [--start T]] [--hours H]`, false, "reproduce powerflow -o DIR --pai-jobs F --pai-tasks F --hours H"},
		{`merge -o DIR SHARD_DIR...`, false, "merge -o DIR SHARD_DIR"},
		{`version | --version`, false, "version"},
		{`reproduce powerflow -o out/pf --philly x.csv.gz --start "2017-10-20 00:00:00" --hours 24`, true, "reproduce powerflow -o out/pf --philly x.csv.gz --start 2017-10-20 00:00:00 --hours 24"},
		{`reproduce vahrm -o out/vahrm   # everything below; ~95 s`, true, "reproduce vahrm -o out/vahrm"},
		{`reproduce vahrm --shard $i/4 -o out/shard-$i; done`, true, "reproduce vahrm --shard $i/4 -o out/shard-$i"},
		{`import k8s -f - -o DIR | head`, true, "import k8s -f - -o DIR"},
		{`completion bash)`, true, "completion bash"},
		{`import k8s (-f cluster.json | --kubeconfig FILE) -o DIR`, true, "import k8s -f cluster.json -o DIR"},
	} {
		got := strings.Join(commandWords(c.in, c.shell), " ")
		if got != c.want {
			t.Errorf("commandWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
