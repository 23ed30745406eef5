package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wattsched/wattsched/experiment"
)

// shardable are the studies whose runs ShardedRun records.
var shardable = []string{"pwr", "vahrm", "powerflow"}

// shardManifest describes one shard's output directory.
type shardManifest struct {
	Format  string   `json:"format"`
	Version string   `json:"version"`
	Command []string `json:"command"`
	Index   int      `json:"index"`
	Count   int      `json:"count"`
	Runs    int      `json:"runs"`
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
func emitShard(stdout io.Writer, dir string, force bool, sh *experiment.Shards, args []string, runErr error) error {
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
	m := shardManifest{Format: shardFormat, Version: Version, Command: commandArgs(args), Index: sh.Index, Count: sh.Count, Runs: sh.Recorded()}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	res := &experiment.Results{Title: "wattsched shard", Files: map[string][]byte{"shard.json": append(js, '\n'), "runs.gob": data},
		Listing: "shard.json, runs.gob",
		Head:    []string{fmt.Sprintf("shard %d/%d of '%s': %d runs recorded", sh.Index, sh.Count, strings.Join(m.Command, " "), m.Runs)}}
	return emit(stdout, dir, force, []*experiment.Results{res})
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
	return dispatch(ctx, cmd, stdout, stderr, experiment.NewMerge(records))
}
