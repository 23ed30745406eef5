package cli

import "fmt"

// hostileShards: hostile inputs of this kind (issue 28); see hostile_test.go.
// Shard manifests written by hand stand for shards whose inputs differed
// (the runs behind them are never read: the inputs are checked first);
// TestMergeRefusesShardsOfChangedReferencedFiles runs the real sequence
// of shard, edit, shard, merge.
var hostileShards = []hostileCase{
	{name: "a scenario input differs between two shards", files: map[string]string{
		"s0/shard.json": shardJSON(0, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}, {"field": "trace.pods", "file": "p.csv", "sha256": "1111"}`),
		"s1/shard.json": shardJSON(1, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}, {"field": "trace.pods", "file": "p.csv", "sha256": "2222"}`),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0", "{D}/s1"}, code: 1, errLine: "merge: trace.pods file p.csv differs between shard 0 ("},
	{name: "a study's file flag differs between two shards", files: map[string]string{
		"s0/shard.json": shardJSON(0, `["reproduce", "vahrm", "--swf", "x.swf"]`, `{"field": "--swf", "file": "x.swf", "sha256": "1111"}`),
		"s1/shard.json": shardJSON(1, `["reproduce", "vahrm", "--swf", "x.swf"]`, `{"field": "--swf", "file": "x.swf", "sha256": "2222"}`),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s1", "{D}/s0"}, code: 1, errLine: "merge: --swf file x.swf differs between shard 1 ("},
	{name: "one shard read an input the other did not", files: map[string]string{
		"s0/shard.json": shardJSON(0, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}, {"field": "grid.price", "file": "price.csv", "sha256": "11"}`),
		"s1/shard.json": shardJSON(1, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}`),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0", "{D}/s1"}, code: 1, errLine: "read grid.price file price.csv where shard 1"},
	{name: "an embedded trace in one shard, a file in the other", files: map[string]string{
		"s0/shard.json": shardJSON(0, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}, {"field": "trace.pods", "embedded": "default"}`),
		"s1/shard.json": shardJSON(1, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}, {"field": "trace.pods", "file": "default.csv", "sha256": "11"}`),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0", "{D}/s1"}, code: 1, errLine: "read trace.pods (embedded default) where shard 1"},
	{name: "the scenario changed since the shards ran", files: map[string]string{
		"s0/shard.json": shardJSON(0, `["run", "-c", "../../examples/replay-openb.yaml"]`, `{"field": "-c", "file": "../../examples/replay-openb.yaml", "sha256": "00"}`),
		"s1/shard.json": shardJSON(1, `["run", "-c", "../../examples/replay-openb.yaml"]`, `{"field": "-c", "file": "../../examples/replay-openb.yaml", "sha256": "00"}`),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0", "{D}/s1"}, code: 1, errLine: "merge: -c file ../../examples/replay-openb.yaml changed since the shards ran"},
	{name: "a study's input file gone since the shards ran", files: map[string]string{
		"s0/shard.json": shardJSON(0, `["reproduce", "vahrm", "--swf", "gone.swf"]`, `{"field": "--swf", "file": "gone.swf", "sha256": "11"}`),
		"s1/shard.json": shardJSON(1, `["reproduce", "vahrm", "--swf", "gone.swf"]`, `{"field": "--swf", "file": "gone.swf", "sha256": "11"}`),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0", "{D}/s1"}, code: 1, errLine: "--swf: open gone.swf: no such file"},
	{name: "shards that recorded no inputs of a command that has some", files: map[string]string{
		"s0/shard.json": shardJSON(0, `["run"]`, ``),
		"s1/shard.json": shardJSON(1, `["run"]`, ``),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0", "{D}/s1"}, code: 1, errLine: "they read nothing, the command now reads -c (embedded pwr-default)"},
	{name: "a manifest without a command", files: map[string]string{
		"s0/shard.json": shardJSON(0, `[]`, ``),
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0"}, code: 1, errLine: "shard.json: no command"},
	{name: "a manifest of the first format (inputs named on the command line only)", files: map[string]string{
		"s0/shard.json": `{"format": "wattsched-shard-1", "version": "` + Version + `", "command": ["run"], "index": 0, "count": 1}`,
	}, args: []string{"merge", "-o", "{D}/out", "{D}/s0"}, code: 1, errLine: `not a wattsched shard manifest of this version (format "wattsched-shard-1", want "wattsched-shard-2")`},
	{name: "a shard whose pod list is a directory", files: map[string]string{
		"s.yaml":    "name: x\nmode: inflation\ntrace: {pods: ./sub}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1}]}\n",
		"sub/p.csv": "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n",
	}, args: []string{"run", "-c", "{D}/s.yaml", "--shard", "0/2", "-o", "{D}/out"}, code: 1, errLine: "is a directory, want a regular file (a shard records"},
	{name: "a shard whose node list is /dev/zero", files: map[string]string{
		"s.yaml": "name: x\nmode: inflation\ntrace: {pods: default, nodes: /dev/zero}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1}]}\n",
	}, args: []string{"run", "-c", "{D}/s.yaml", "--shard", "1/2", "-o", "{D}/out"}, code: 1, errLine: "shard: trace.nodes: /dev/zero is a character device, want a regular file"},
	{name: "a shard whose SWF log is /dev/zero", args: []string{"reproduce", "vahrm", "--swf", "/dev/zero", "--shard", "0/2", "-o", "{D}/out"},
		code: 1, errLine: "shard: --swf: /dev/zero is a character device, want a regular file"},
}

// shardJSON is the manifest of shard i of 2 of this wattsched, of the
// command cmd (a JSON array), recording inputs (JSON objects).
func shardJSON(i int, cmd, inputs string) string {
	return fmt.Sprintf(`{"format": %q, "version": %q, "command": %s, "index": %d, "count": 2, "runs": 1, "calls": 1, "total_runs": 2, "build": %q, "inputs": [%s]}`,
		shardFormat, Version, cmd, i, buildID(), inputs)
}
