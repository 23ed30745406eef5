package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/scenario"
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
	// Build is the binary's VCS revision (from its build information);
	// Inputs the SHA-256 of each file the command line names.
	Build  string            `json:"build,omitempty"`
	Inputs map[string]string `json:"inputs,omitempty"`
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

// inputHashes hashes every argument that names a regular file.
func inputHashes(args []string) map[string]string {
	out := map[string]string{}
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if st, err := os.Stat(a); err != nil || !st.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(a)
		if err != nil {
			continue
		}
		out[a] = fmt.Sprintf("%x", sha256.Sum256(b))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

const shardFormat = "wattsched-shard-1"

// dispatch runs a multi-run command, with a merge's records when merge is set.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer, merge *experiment.Shards) error {
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr, merge)
	case "compare":
		return cmdCompare(ctx, args[1:], stdout, stderr, merge)
	case "reproduce":
		return cmdReproduce(ctx, args[1:], stdout, stderr, merge)
	}
	return fmt.Errorf("merge: the shards ran %q, which has no shards", args[0])
}

// sharded calls f; in a shard, whatever f does after the shard's last run
// works on other shards' missing results, so its error or panic is not
// the shard's (emitShard reports the shard's own failures).
func sharded(sh *experiment.Shards, f func() ([]*experiment.Results, error)) (res []*experiment.Results, err error) {
	if !sh.Sharding() {
		return f()
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("after the runs: %v", p)
		}
	}()
	return f()
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
func emitShard(stdout io.Writer, claim *experiment.DirClaim, sh *experiment.Shards, args []string, runErr error) error {
	if err := sh.Err(); err != nil {
		return err
	}
	if runErr != nil && sh.Recorded() == 0 {
		return runErr
	}
	data, err := experiment.EncodeRecords(sh.Records())
	if err != nil {
		return err
	}
	cmd := commandArgs(args)
	m := shardManifest{Format: shardFormat, Version: Version, Command: cmd, Index: sh.Index, Count: sh.Count, Runs: sh.Recorded(),
		Calls: sh.Calls(), Total: sh.Seen(), Build: buildID(), Inputs: inputHashes(cmd)}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	res := &experiment.Results{Title: "wattsched shard", Files: map[string][]byte{"shard.json": append(js, '\n'), "runs.gob": data},
		Listing: "shard.json, runs.gob",
		Head:    []string{fmt.Sprintf("shard %d/%d of '%s': %d runs recorded", sh.Index, sh.Count, strings.Join(m.Command, " "), m.Runs)}}
	return emit(stdout, claim, []*experiment.Results{res})
}

// cmdMerge combines shard directories into the results one run gives.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("merge", stderr)
	out := fs.String("o", "", "results directory (required)")
	force := fs.Bool("force", false, "replace a non-empty results directory")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" || fs.NArg() == 0 {
		return usageError{errors.New("merge: want 'merge -o DIR SHARD_DIR...' (the directories that --shard i/n wrote)")}
	}
	var first *shardManifest
	seen := map[int]string{}
	records := map[string][]byte{}
	for _, d := range fs.Args() {
		file := filepath.Join(d, "shard.json")
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("merge: %w (not a shard directory?)", err)
		}
		var m shardManifest
		if err := json.Unmarshal(b, &m); err != nil || m.Format != shardFormat {
			return fmt.Errorf("merge: %s: not a wattsched shard manifest (format %q)", file, m.Format)
		}
		switch {
		case m.Version != Version:
			return fmt.Errorf("merge: %s: written by wattsched %s, this is %s: run every shard and the merge with one version", file, m.Version, Version)
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
			first = &m
		}
		runs := filepath.Join(d, "runs.gob")
		data, err := os.ReadFile(runs)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := experiment.DecodeRecords(data, runs, records); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	if now := inputHashes(first.Command); !maps.Equal(now, first.Inputs) {
		return fmt.Errorf("merge: the files the command names changed since the shards ran (or are not where they were): %v then, %v now", first.Inputs, now)
	}
	for i, d := range seen {
		var m shardManifest
		b, _ := os.ReadFile(filepath.Join(d, "shard.json"))
		if json.Unmarshal(b, &m) == nil && !maps.Equal(m.Inputs, first.Inputs) {
			return fmt.Errorf("merge: shard %d (%s) read other input files than shard %d", i, d, first.Index)
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
	cmd := append(slices.Clone(first.Command), "-o", *out)
	if *force {
		cmd = append(cmd, "--force")
	}
	fmt.Fprintf(stderr, "merging %d shards of '%s' (%d runs)\n", first.Count, strings.Join(first.Command, " "), len(records))
	return dispatch(ctx, cmd, stdout, stderr, experiment.NewMerge(records, first.Calls, first.Total))
}
