package cli

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// reproBudget is the quiet two-core wall time each full reproduction must
// stay under (issue 39 item 5), in seconds.
const reproBudget = 300.0

// pwrPaperTraces are the 13 openb pod lists of the PWR paper's figures, as
// docs/reproduce-pwr.md runs them.
const pwrPaperTraces = "default,gpushare40,gpushare60,gpushare80,gpushare100,multigpu20,multigpu30,multigpu40,multigpu50,gpuspec10,gpuspec20,gpuspec25,gpuspec33"

// reproCase is one reproduction bench --reproductions can run: its name and
// the arguments of `wattsched reproduce` before "-o DIR". The full ones are
// the documented full runs (issue 39 item 5); "all" runs those.
type reproCase struct {
	name string
	args []string
	full bool
}

// reproCases are the reproductions bench --reproductions knows, the full
// runs first.
func reproCases() []reproCase {
	return []reproCase{
		{"pwr", []string{"pwr", "--seeds", "10", "--trace", pwrPaperTraces}, true},
		{"vahrm", []string{"vahrm"}, true},
		{"powerflow", []string{"powerflow"}, true},
		{"eaco", []string{"eaco"}, true},
		{"cedla", []string{"cedla"}, true},
		{"powerflow-grid", []string{"powerflow", "--grid"}, false},
		{"pwr-quick", []string{"pwr", "--seeds", "1"}, false},
		{"vahrm-quick", []string{"vahrm", "--quick"}, false},
		{"powerflow-quick", []string{"powerflow", "--quick"}, false},
		{"eaco-quick", []string{"eaco", "--quick"}, false},
		{"cedla-quick", []string{"cedla", "--quick"}, false},
	}
}

// selectRepros resolves --reproductions: "all" (the full runs) or a
// comma-separated list of names, in the order given.
func selectRepros(which string) ([]reproCase, error) {
	cases := reproCases()
	if which == "all" {
		return slices.DeleteFunc(cases, func(c reproCase) bool { return !c.full }), nil
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	var out []reproCase
	for _, w := range strings.Split(which, ",") {
		w = strings.TrimSpace(w)
		i := slices.Index(names, w)
		if i < 0 {
			return nil, fmt.Errorf("--reproductions %q: unknown reproduction %q, want all or some of %s", which, w, strings.Join(names, ", "))
		}
		out = append(out, cases[i])
	}
	return out, nil
}

// ReproTiming is what one reproduction cost, measured from outside: the
// reproduction runs as a child process (this binary, `reproduce ...`), so
// its CPU and peak memory are its own.
type ReproTiming struct {
	Name string
	// Command is the command line, as a user types it (-o DIR last).
	Command string
	// CPU is the child's user plus system CPU seconds, its own children
	// included (wait4's rusage).
	CPU float64
	// Wall is the child's wall-clock seconds.
	Wall float64
	// PeakRSSMB is the child's peak resident set (MB, 10^6 bytes).
	PeakRSSMB float64
	// Procs is the GOMAXPROCS the child ran with: the cores it may use.
	Procs int
	// Load are the 1-minute load averages when it started and ended.
	Load [2]float64
	// Digest is the SHA-256 of the result directory (every file's path
	// and bytes, in path order), so that two builds' results compare.
	Digest string
	// Headline is the first line of the reproduction's stdout ("N of M
	// claims hold ...").
	Headline string
}

// reproRunner starts a reproduction: `wattsched args...` as a command whose
// output the caller sets. The command line uses the running binary; the
// test swaps in its own process.
type reproRunner func(args []string) (*exec.Cmd, error)

// selfRunner runs this very binary.
func selfRunner(args []string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench --reproductions: find this binary: %w", err)
	}
	return exec.Command(exe, args...), nil
}

// loadAverage is the 1-minute load average (/proc/loadavg), -1 where it
// cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// machineLine says what the timings ran on: cores, CPU model and memory
// (from /proc where it exists).
func machineLine() string {
	model := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					mem = fmt.Sprintf(", %.1f GiB memory", kb/(1<<20))
				}
			}
		}
	}
	if model == "" {
		model = runtime.GOARCH
	}
	return fmt.Sprintf("%d cores (%s)%s, %s/%s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}

// dirDigest is the SHA-256 over every regular file under dir: its path
// relative to dir, a NUL, its length and bytes, in path order.
func dirDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// timeRepro runs one reproduction into dir/NAME (its results) with its
// stdout in dir/NAME.stdout and stderr in dir/NAME.stderr, and measures it.
// procs > 0 sets the child's GOMAXPROCS.
func timeRepro(run reproRunner, c reproCase, dir string, procs int) (ReproTiming, error) {
	out := filepath.Join(dir, c.name)
	args := append(append([]string{"reproduce"}, c.args...), "-o", out)
	cmd, err := run(args)
	if err != nil {
		return ReproTiming{}, err
	}
	stdout, err := os.Create(out + ".stdout")
	if err != nil {
		return ReproTiming{}, err
	}
	defer stdout.Close()
	stderr, err := os.Create(out + ".stderr")
	if err != nil {
		return ReproTiming{}, err
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	t := ReproTiming{Name: c.name, Command: "wattsched " + strings.Join(quoteArgs(append(append([]string{"reproduce"}, c.args...), "-o", "DIR")), " "), Procs: runtime.NumCPU()}
	if procs > 0 {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(procs))
		t.Procs = procs
	}
	t.Load[0] = loadAverage()
	start := time.Now()
	runErr := cmd.Run()
	t.Wall = time.Since(start).Seconds()
	t.Load[1] = loadAverage()
	if runErr != nil {
		tail, _ := os.ReadFile(out + ".stderr")
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return t, fmt.Errorf("bench --reproductions: %s: %w\n%s", c.name, runErr, tail)
	}
	ps := cmd.ProcessState
	t.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		t.PeakRSSMB = float64(ru.Maxrss) * 1024 / 1e6 // Linux: KiB
	}
	if t.Digest, err = dirDigest(out); err != nil {
		return t, fmt.Errorf("bench --reproductions: %s: digest its results: %w", c.name, err)
	}
	if b, err := os.ReadFile(out + ".stdout"); err == nil {
		t.Headline, _, _ = strings.Cut(string(b), "\n")
	}
	return t, nil
}

// quoteArgs quotes the words a shell would split.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t\"'$") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return out
}

// writeReproTable prints each reproduction's figures: CPU, wall, the mean
// cores busy (CPU / wall), the cores it may use, peak RSS, the load, a
// verdict against the budget read as CPU over the cores it may use (its
// wall time on a quiet machine when it keeps them busy), the results'
// digest and the command.
func writeReproTable(w io.Writer, machine string, ts []ReproTiming) error {
	fmt.Fprintf(w, "each reproduction as a child process of this binary, results in a temporary directory; machine: %s\n", machine)
	fmt.Fprintf(w, "budget (issue 39): under %.0f s on this machine when quiet; \"quiet s\" is CPU s over the cores it may use, its wall time when nothing else runs and it keeps them busy\n", reproBudget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "reproduction\tCPU s\twall s\tCPU/wall\tcores\tquiet s\twithin budget\tpeak RSS MB\tload start-end\tresults sha256\tcommand")
	for _, t := range ts {
		quiet := t.CPU / float64(max(t.Procs, 1))
		ok := "yes"
		if quiet >= reproBudget {
			ok = "no"
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.2f\t%d\t%.1f\t%s\t%.0f\t%.1f-%.1f\t%s\t%s\n", t.Name, t.CPU, t.Wall, t.CPU/max(t.Wall, 1e-9), t.Procs, quiet, ok,
			t.PeakRSSMB, t.Load[0], t.Load[1], t.Digest[:min(12, len(t.Digest))], t.Command)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range ts {
		if t.Headline != "" {
			fmt.Fprintf(w, "%s: %s\n", t.Name, t.Headline)
		}
	}
	return nil
}

// cmdBenchRepros is bench --reproductions: runs each chosen reproduction in
// turn as a child process, into keep (kept) or a temporary directory
// (removed), says on stderr when each ends, and prints the table.
func cmdBenchRepros(stdout, stderr io.Writer, run reproRunner, which, keep string, procs int) error {
	cases, err := selectRepros(which)
	if err != nil {
		return usageError{err}
	}
	if procs < 0 {
		return usageError{fmt.Errorf("--procs %d, want 0 (all cores) or more", procs)}
	}
	dir := keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "wattsched-bench-repro-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else {
		// The kept results go to new directories only: never over a
		// previous run's.
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("bench --keep: %w", err)
		}
	}
	var ts []ReproTiming
	for _, c := range cases {
		t, err := timeRepro(run, c, dir, procs)
		if err != nil {
			return err
		}
		ts = append(ts, t)
		fmt.Fprintf(stderr, "bench: %s: %.1f CPU s, %.1f s wall\n", c.name, t.CPU, t.Wall)
	}
	var buf bytes.Buffer
	if err := writeReproTable(&buf, machineLine(), ts); err != nil {
		return err
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}
