package cli

// --explain where placements are not a Placer's weighted node scores
// (issue 27, item 5): a usage error before any run, nothing written.
var hostileExplain = []hostileCase{
	{name: "hpc", args: []string{"run", "-c", "../../examples/hpc-vahrm.yaml", "-o", "{D}/out", "--explain"}, code: 2,
		errLine: "run: --explain applies to mode [inflation replay] (placements by weighted node scores), not hpc: scenario"},
	{name: "elastic", args: []string{"run", "-c", "../../examples/elastic-powerflow.yaml", "-o", "{D}/out", "--explain"}, code: 2,
		errLine: "--explain applies to mode [inflation replay] (placements by weighted node scores), not elastic"},
	{name: "coloc", args: []string{"run", "-c", "../../examples/coloc-eaco.yaml", "-o", "{D}/out", "--explain"}, code: 2,
		errLine: "--explain applies to mode [inflation replay] (placements by weighted node scores), not coloc"},
	{name: "slotted", args: []string{"run", "-c", "../../examples/slotted-cedla.yaml", "-o", "{D}/out", "--explain"}, code: 2,
		errLine: "--explain applies to mode [inflation replay] (placements by weighted node scores), not slotted"},
	{name: "with --shard", args: []string{"compare", "-c", "../../examples/replay-openb.yaml", "-o", "{D}/out", "--explain", "--shard", "0/2"}, code: 2,
		errLine: "compare: --explain with --shard or merge: not supported; explain an unsharded run"},
	{name: "with a value", args: []string{"run", "-c", "../../examples/replay-openb.yaml", "-o", "{D}/out", "--explain=maybe"}, code: 2,
		errLine: "invalid boolean value \"maybe\" for --explain"},
}
