package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/outdir"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/userfile"
)

// shardable are the studies, and shardableModes the scenario modes, whose
// runs ShardedRun records.
var (
	shardable      = []string{"pwr", "vahrm", "powerflow"}
	shardableModes = []scenario.Mode{scenario.Inflation, scenario.Replay, scenario.HPC, scenario.Elastic}
)

// shardManifest describes one shard's output directory.
type shardManifest struct {
	Format  string   `json:"format"`
	Version string   `json:"version"`
	Command []string `json:"command"`
	Index   int      `json:"index"`
	Count   int      `json:"count"`
	Runs    int      `json:"runs"`
	// Calls and Total are the batches of runs and the runs the command
	// asked for (every shard's alike when none stopped early).
	Calls int `json:"calls"`
	Total int `json:"total_runs"`
	// Build is the binary's VCS revision (from its build information).
	Build string `json:"build,omitempty"`
	// Inputs is everything the command read (commandInputs), hashed
	// before the shard's runs.
	Inputs []shardInput `json:"inputs"`
}

// shardInput is one input of a sharded command as its manifest records
// it: the scenario field or flag that names it, and the file with the
// SHA-256 of its bytes or the embedded data set's name.
type shardInput struct {
	Field    string `json:"field"`
	File     string `json:"file,omitempty"`
	Embedded string `json:"embedded,omitempty"`
	SHA256   string `json:"sha256,omitempty"`
}

// String names the input: its field or flag, and its file or embedded name.
func (in shardInput) String() string {
	if in.File == "" {
		return fmt.Sprintf("%s (embedded %s)", in.Field, in.Embedded)
	}
	return fmt.Sprintf("%s file %s", in.Field, in.File)
}

// commandInputs lists and hashes everything a shardable command line (as
// commandArgs leaves it) reads: the scenario file (or the embedded
// scenario's name), every file and embedded data set the scenario names
// (Scenario.Inputs), the --catalog file, and the files a study's flags
// name (Study.Inputs).
func commandInputs(cmd []string) ([]shardInput, error) {
	if len(cmd) == 0 {
		return nil, errors.New("an empty command")
	}
	var ins []scenario.Input
	switch cmd[0] {
	case "run", "compare", "reproduce":
	default:
		return nil, fmt.Errorf("%q has no shards", cmd[0])
	}
	// The command line parsed as the command tree parses it, nothing run.
	a := newApp(context.Background(), io.Discard, io.Discard, nil)
	c, rest, err := a.root().Find(cmd)
	if err != nil {
		return nil, err
	}
	if err := c.ParseFlags(rest); err != nil {
		return nil, err
	}
	switch cmd[0] {
	case "run", "compare":
		cfg, catalog := c.Flags().Lookup("c").Value.String(), c.Flags().Lookup("catalog").Value.String()
		s, err := loadScenario(cmd[0], cfg)
		if err != nil {
			return nil, err
		}
		if cfg == "" {
			ins = append(ins, scenario.Input{Field: "-c", Name: defaultScenario(cmd[0])})
		} else {
			ins = append(ins, scenario.Input{Field: "-c", Name: cfg, Path: cfg})
		}
		ins = append(ins, s.Inputs()...)
		if catalog != "" {
			ins = append(ins, scenario.Input{Field: "--catalog", Name: catalog, Path: catalog})
		}
	case "reproduce":
		st := a.studies[c.Name()]
		if st == nil || c.Parent().Name() != "reproduce" {
			return nil, fmt.Errorf("'%s' names no study", strings.Join(cmd, " "))
		}
		ins = st.Inputs()
	}
	out := make([]shardInput, len(ins))
	for i, in := range ins {
		out[i] = shardInput{Field: in.Field, File: in.Path}
		if in.Embedded() {
			out[i].Embedded = in.Name
			continue
		}
		sum, err := hashFile(in.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Field, err)
		}
		out[i].SHA256 = sum
	}
	return out, nil
}

// inputAt says whether out names the input directory in, a directory
// inside it, or one holding it: by cleaned absolute path and, where both
// exist, by identity (another spelling, a link).
func inputAt(out, in string) bool {
	o, errO := filepath.Abs(filepath.Clean(out))
	i, errI := filepath.Abs(filepath.Clean(in))
	if errO == nil && errI == nil {
		sep := string(filepath.Separator)
		if o == i || strings.HasPrefix(o, i+sep) || strings.HasPrefix(i, o+sep) {
			return true
		}
	}
	a, errA := os.Stat(out)
	b, errB := os.Stat(in)
	return errA == nil && errB == nil && os.SameFile(a, b)
}

// hashFile is the SHA-256 of a regular file's bytes, in hex.
func hashFile(path string) (string, error) {
	f, err := userfile.OpenRegular(path) // a FIFO is refused, not waited on
	if err != nil {
		return "", fmt.Errorf("%w (a shard records the SHA-256 of every input file)", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// inputChange is the first input where two lists of inputs differ: then
// and now are nil where one list lacks it; sameFile when both name the
// same file (or embedded data) and only its SHA-256 differs.
type inputChange struct {
	then, now *shardInput
	sameFile  bool
}

// diffInputs is the first difference between a and b (nil when none).
func diffInputs(a, b []shardInput) *inputChange {
	for i := 0; i < max(len(a), len(b)); i++ {
		c := &inputChange{}
		if i < len(a) {
			c.then = &a[i]
		}
		if i < len(b) {
			c.now = &b[i]
		}
		switch {
		case c.then == nil || c.now == nil:
			return c
		case c.then.Field != c.now.Field || c.then.File != c.now.File || c.then.Embedded != c.now.Embedded:
			return c
		case c.then.SHA256 != c.now.SHA256:
			c.sameFile = true
			return c
		}
	}
	return nil
}

// what names an input of a change, "nothing" for none.
func (c *inputChange) what(in *shardInput) string {
	if in == nil {
		return "nothing"
	}
	return in.String()
}

// buildID is the binary's VCS revision, "+modified" when the tree was.
func buildID() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, mod string
	for _, st := range bi.Settings {
		switch st.Key {
		case "vcs.revision":
			rev = st.Value
		case "vcs.modified":
			if st.Value == "true" {
				mod = "+modified"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + mod
}

const shardFormat = "wattsched-shard-2"

// dispatch runs a multi-run command line, with a merge's records when
// merge is set.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer, merge *experiment.Shards) error {
	switch args[0] {
	case "run", "compare", "reproduce":
		return newApp(ctx, stdout, stderr, merge).execute(args)
	}
	return fmt.Errorf("merge: the shards ran %q, which has no shards", args[0])
}

// sharded calls f; in a shard it first hashes the inputs of the command
// line args (commandInputs) for emitShard to record, and whatever f does
// after the shard's last run works on other shards' missing results, so
// its error or panic is not the shard's (emitShard reports the shard's
// own failures).
func sharded(sh *experiment.Shards, args []string, f func() ([]*experiment.Results, error)) (res []*experiment.Results, inputs []shardInput, err error) {
	if !sh.Sharding() {
		res, err = f()
		return res, nil, err
	}
	if inputs, err = commandInputs(commandArgs(args)); err != nil {
		return nil, nil, fmt.Errorf("shard: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("after the runs: %v", p)
		}
	}()
	res, err = f()
	return res, inputs, err
}

// commandArgs is a command line without its output, --force and --shard
// flags: what a merge runs again.
func commandArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			out = append(out, args[i])
			continue
		}
		switch name {
		case "o", "shard":
			if !hasValue {
				i++
			}
			continue
		case "force":
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// emitShard writes a shard's recorded runs and manifest.
// inputs are what the command read, hashed before the runs: a file that
// changed since is an error, as its runs may have read either version.
func emitShard(stdout io.Writer, claim *outdir.DirClaim, sh *experiment.Shards, args []string, inputs []shardInput, runErr error) error {
	if err := sh.Err(); err != nil {
		return err
	}
	if runErr != nil && sh.Recorded() == 0 {
		return runErr
	}
	after, err := commandInputs(commandArgs(args))
	if err != nil {
		return fmt.Errorf("shard: after the runs: %w", err)
	}
	if c := diffInputs(inputs, after); c != nil {
		if c.sameFile {
			return fmt.Errorf("shard: %s changed while the shard ran (sha256 %.12s before its runs, %.12s after): run the shard again", c.then, c.then.SHA256, c.now.SHA256)
		}
		return fmt.Errorf("shard: the inputs changed while the shard ran: %s before its runs, %s after: run the shard again", c.what(c.then), c.what(c.now))
	}
	data, err := experiment.EncodeRecords(sh.Records())
	if err != nil {
		return err
	}
	cmd := commandArgs(args)
	m := shardManifest{Format: shardFormat, Version: Version, Command: cmd, Index: sh.Index, Count: sh.Count, Runs: sh.Recorded(),
		Calls: sh.Calls(), Total: sh.Seen(), Build: buildID(), Inputs: inputs}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	res := &experiment.Results{Title: "wattsched shard", Files: map[string][]byte{"shard.json": append(js, '\n'), "runs.gob": data},
		Listing: "shard.json, runs.gob",
		Head:    []string{fmt.Sprintf("shard %d/%d of '%s': %d runs recorded", sh.Index, sh.Count, strings.Join(m.Command, " "), m.Runs)}}
	return emit(stdout, claim, []*experiment.Results{res})
}

// cmdMerge combines shard directories into the results one run gives:
// out is -o, force --force.
func cmdMerge(ctx context.Context, outDir string, forceFlag bool, dirs []string, stdout, stderr io.Writer) error {
	out, force := &outDir, &forceFlag
	// Every manifest first, checked against the first one; the records
	// after, once the shards are known to agree.
	var first *shardManifest
	var firstName string
	seen := map[int]string{}
	for _, d := range dirs {
		file := filepath.Join(d, "shard.json")
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("merge: %w (not a shard directory?)", err)
		}
		var m shardManifest
		if err := json.Unmarshal(b, &m); err != nil || m.Format != shardFormat {
			return fmt.Errorf("merge: %s: not a wattsched shard manifest of this version (format %q, want %q)", file, m.Format, shardFormat)
		}
		name := fmt.Sprintf("shard %d (%s)", m.Index, d)
		switch {
		case m.Version != Version:
			return fmt.Errorf("merge: %s: written by wattsched %s, this is %s: run every shard and the merge with one version", file, m.Version, Version)
		case len(m.Command) == 0:
			return fmt.Errorf("merge: %s: no command", file)
		case first != nil && !slices.Equal(m.Command, first.Command):
			return fmt.Errorf("merge: %s ran '%s', %s ran '%s'", file, strings.Join(m.Command, " "), seen[first.Index], strings.Join(first.Command, " "))
		case first != nil && m.Count != first.Count:
			return fmt.Errorf("merge: %s is shard %d/%d, another is of %d", file, m.Index, m.Count, first.Count)
		case first != nil && (m.Calls != first.Calls || m.Total != first.Total):
			return fmt.Errorf("merge: %s saw %d runs in %d batches, %s saw %d in %d: one of them stopped early", file, m.Total, m.Calls, seen[first.Index], first.Total, first.Calls)
		case first != nil && m.Build != first.Build:
			return fmt.Errorf("merge: %s was built from %q, %s from %q: run every shard with one binary", file, m.Build, seen[first.Index], first.Build)
		case m.Build != buildID():
			return fmt.Errorf("merge: %s was built from %q, this wattsched from %q: merge with the shards' binary", file, m.Build, buildID())
		case m.Index < 0 || m.Index >= m.Count:
			return fmt.Errorf("merge: %s: index %d of %d", file, m.Index, m.Count)
		}
		if prev, dup := seen[m.Index]; dup {
			return fmt.Errorf("merge: %s and %s are both shard %d", prev, d, m.Index)
		}
		seen[m.Index] = d
		if first == nil {
			first, firstName = &m, name
			continue
		}
		// Same command, but the files it names may have changed between
		// the shards' runs.
		if c := diffInputs(first.Inputs, m.Inputs); c != nil {
			if c.sameFile {
				return fmt.Errorf("merge: %s differs between shard %d (%s, sha256 %.12s) and shard %d (%s, sha256 %.12s): run every shard on the same input files",
					c.then, first.Index, seen[first.Index], c.then.SHA256, m.Index, d, c.now.SHA256)
			}
			return fmt.Errorf("merge: %s read %s where %s read %s: run every shard on the same input files", firstName, c.what(c.then), name, c.what(c.now))
		}
	}
	for _, d := range dirs {
		if inputAt(*out, d) {
			return usageError{fmt.Errorf("merge: -o %s is the shard %s, one of the merge's inputs, or lies inside it (with --force the merge would replace what it reads): merge into another directory", *out, d)}
		}
	}
	var missing []string
	for i := 0; i < first.Count; i++ {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("merge: shards %s of %d are missing", strings.Join(missing, ", "), first.Count)
	}
	// The merge runs the command again (reading its inputs, taking the
	// runs' results from the records): its inputs must be the shards'.
	now, err := commandInputs(first.Command)
	if err != nil {
		return fmt.Errorf("merge: the inputs of '%s': %w", strings.Join(first.Command, " "), err)
	}
	if c := diffInputs(first.Inputs, now); c != nil {
		if c.sameFile {
			return fmt.Errorf("merge: %s changed since the shards ran (sha256 %.12s then, %.12s now): merge with the files the shards read, or run the shards again", c.then, c.then.SHA256, c.now.SHA256)
		}
		return fmt.Errorf("merge: the inputs changed since the shards ran: they read %s, the command now reads %s", c.what(c.then), c.what(c.now))
	}
	records := map[string][]byte{}
	for _, d := range dirs {
		runs := filepath.Join(d, "runs.gob")
		data, err := os.ReadFile(runs)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := experiment.DecodeRecords(data, runs, records); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	cmd := append(slices.Clone(first.Command), "-o", *out)
	if *force {
		cmd = append(cmd, "--force")
	}
	fmt.Fprintf(stderr, "merging %d shards of '%s' (%d runs)\n", first.Count, strings.Join(first.Command, " "), len(records))
	return dispatch(ctx, cmd, stdout, stderr, experiment.NewMerge(records, first.Calls, first.Total))
}
