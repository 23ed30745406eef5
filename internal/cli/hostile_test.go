package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// hostileCase is one hostile input (issue 28): files written into a
// scratch directory D, a command line run there, the exit code and a piece
// of the error's first line wanted, and nothing left in or beside D/out
// when the run fails.
type hostileCase struct {
	name  string
	files map[string]string // path relative to D -> content
	fifos []string          // named pipes (no writer) made in D
	args  []string          // "{D}" in an argument is replaced by D
	code  int
	// errLine must occur in the first line of standard error that starts
	// with "wattsched:" (or, for a warning with exit 0, in standard error);
	// "{D}" in it is replaced by D.
	errLine string
	// errAlso, when set, must occur somewhere in standard error (the
	// lines after an error's first).
	errAlso string
	// stdout, when set, must occur in standard output.
	stdout string
}

// hostileSuites lists the case tables, one per kind of hostile input; each
// lives in its own hostile_*_test.go file.
func hostileSuites() map[string][]hostileCase {
	return map[string][]hostileCase{
		"outdir":   hostileOutdir,
		"bounds":   hostileBounds,
		"checks":   hostileChecks,
		"solver":   hostileSolver,
		"shards":   hostileShards,
		"decode":   hostileDecode,
		"gavelio":  hostileGavelio,
		"replay":   hostileReplay,
		"speed":    hostileSpeed,
		"import":   hostileImport,
		"gavelsim": hostileGavelsim,
		"variants": hostileVariants,
		"explain":  hostileExplain,
		"cedla":    hostileCedla,
		"writers":  hostileWriters,
		"inputs":   hostileInputs,
		"odd":      hostileOdd,
		"times":    hostileTimes,
	}
}

// TestHostileInputs runs every hostile case: the exit code, the error's
// first line, and, when the run fails, no output directory and nothing
// beside it (D holds exactly the files the case wrote).
func TestHostileInputs(t *testing.T) {
	suites := hostileSuites()
	names := make([]string, 0, len(suites))
	for n := range suites {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, suite := range names {
		for _, c := range suites[suite] {
			t.Run(suite+"/"+c.name, func(t *testing.T) {
				runHostile(t, c)
			})
		}
	}
}

func runHostile(t *testing.T, c hostileCase) {
	t.Helper()
	d := t.TempDir()
	var wrote []string
	for p, body := range c.files {
		full := filepath.Join(d, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		wrote = append(wrote, strings.Split(filepath.ToSlash(p), "/")[0])
	}
	for _, p := range c.fifos {
		if err := syscall.Mkfifo(filepath.Join(d, p), 0o644); err != nil {
			t.Skip("no named pipes here:", err)
		}
		wrote = append(wrote, p)
	}
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = strings.ReplaceAll(a, "{D}", d)
	}
	c.errLine = strings.ReplaceAll(c.errLine, "{D}", d)
	code, stdout, stderr := run(t, args...)
	if code != c.code {
		t.Fatalf("%v: exit %d, want %d\nstderr: %s", c.args, code, c.code, stderr)
	}
	if c.errAlso != "" && !strings.Contains(stderr, c.errAlso) {
		t.Errorf("%v: stderr lacks %q:\n%s", c.args, c.errAlso, stderr)
	}
	if c.stdout != "" && !strings.Contains(stdout, c.stdout) {
		t.Errorf("%v: stdout lacks %q:\n%s", c.args, c.stdout, stdout)
	}
	if c.code == 0 {
		if c.errLine != "" && !strings.Contains(stderr, c.errLine) {
			t.Errorf("%v: stderr lacks %q:\n%s", c.args, c.errLine, stderr)
		}
		return
	}
	first := ""
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "wattsched:") {
			first = l
			break
		}
	}
	if !strings.Contains(first, c.errLine) {
		t.Errorf("%v: error's first line %q, want it to contain %q\nstderr: %s", c.args, first, c.errLine, stderr)
	}
	ents, err := os.ReadDir(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !slices.Contains(wrote, e.Name()) {
			t.Errorf("%v: failed run left %s in the scratch directory", c.args, e.Name())
		}
	}
}
