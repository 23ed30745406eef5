package cli

// hostileOdd: input that was silently ignored, taken at its last value or
// accepted although absurd (issue 40, items 4 and 8); each is now an error
// before any run naming what is wrong. See hostile_test.go.
var hostileOdd = []hostileCase{
	{name: "-c given twice", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-c", "{D}/other.yaml", "-o", "{D}/out"},
		code: 2, errLine: `for "-c, --c" flag: given twice ("{D}/s.yaml", then "{D}/other.yaml"): give it once`},
	{name: "-o given twice", files: tinyRun, args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "-o", "{D}/out2"},
		code: 2, errLine: `given twice ("{D}/out", then "{D}/out2")`},
	{name: "-o given twice to reproduce", args: []string{"reproduce", "vahrm", "--quick", "-o", "{D}/out", "-o", "{D}/out2"},
		code: 2, errLine: `given twice`},
	{name: "-c empty runs no built-in scenario", args: []string{"run", "-c", "", "-o", "{D}/out"},
		code: 2, errLine: "run: -c is empty: give a scenario file (or leave -c out for the embedded pwr-default)"},
	{name: "-c empty in compare", args: []string{"compare", "-c", "", "-o", "{D}/out"},
		code: 2, errLine: "compare: -c is empty: give a scenario file"},
	{name: "merge --force into one of its own shards", files: twoShards,
		args: []string{"merge", "--force", "-o", "{D}/s0", "{D}/s0", "{D}/s1"}, code: 2, errLine: "merge: -o {D}/s0 is the shard {D}/s0, one of the merge's inputs"},
	{name: "merge into a shard spelt otherwise", files: twoShards,
		args: []string{"merge", "--force", "-o", "{D}/s0/../s1/.", "{D}/s0", "{D}/s1"}, code: 2, errLine: "is the shard {D}/s1"},
	{name: "merge into a directory inside a shard", files: twoShards,
		args: []string{"merge", "-o", "{D}/s1/merged", "{D}/s0", "{D}/s1"}, code: 2, errLine: "or lies inside it"},
	{name: "price of 1e308", files: withFiles(decodeScenario("grid: {price: price.csv}"), "price.csv", "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00,40\n2023-01-01 01:00:00,1e308\n"),
		args: decodeRun, code: 1, errLine: "price.csv:3: column Price (USD/MWh): 1e308 USD/MWh is beyond the physical range (at most 100000 USD/MWh either way)"},
	{name: "carbon intensity of 1e6", files: withFiles(decodeScenario("grid: {carbon: carbon.csv}"), "carbon.csv", "Datetime (UTC),Carbon Intensity gCO₂eq/kWh (LCA)\n2023-01-01 00:00:00,1e6\n"),
		args: decodeRun, code: 1, errLine: "carbon.csv:2: column Carbon Intensity gCO₂eq/kWh (LCA): 1e6 gCO2eq/kWh is beyond the physical range (at most 5000"},
	// late_penalty_usd: 1e308 failed at slot 10 after 6.5 s.
	{name: "CE-DLA late_penalty_usd 1e308", files: map[string]string{
		"s.yaml":   slottedDoc("{GTX1060-3GB: 2, GTX1060-6GB: 2, RTX2060: 2, GTX1080: 2}", "[{name: soft, policy: cedla, args: {mode: soft, late_penalty_usd: 1e308}}]"),
		"jobs.csv": slottedJobs, "load.csv": slottedLoad},
		args: decodeRun, code: 1, errLine: "scenario hostile: invalid scenario:", errAlso: "slotted.systems[0] (soft): cedla args: cedla.late_penalty_usd: 1e+308, want (0, 1e+06] USD"},
	// calibrate --from accepted repeated timestamps (documented as an error).
	{name: "calibrate --from with a repeated timestamp", files: map[string]string{"q.json": `{"status": "success", "data": {"resultType": "matrix", "result": [` +
		`{"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "gpu": "0", "Hostname": "n0", "modelName": "NVIDIA A100-SXM4-80GB"}, "values": [[1700000000, "60"], [1700000000, "61"]]}]}}`},
		args: []string{"calibrate", "--from", "{D}/q.json", "-o", "{D}/cat.yaml"}, code: 1,
		errLine: "{D}/q.json: data.result[0].values[1][0]: time 2023-11-14T22:13:20Z is not after the previous point's 2023-11-14T22:13:20Z"},
	// openb columns read but not used were accepted whatever they held.
	{name: "openb qos unknown", files: withFiles(decodeScenario("trace: {pods: p11.csv, nodes: nodes.csv}"), "p11.csv", pods11("Gold,Running,0,60,0")),
		args: decodeRun, code: 1, errLine: `p11.csv:2: column qos: "Gold", want one of LS, BE, Burstable, Guaranteed, BestEffort or empty`},
	{name: "openb pod_phase unknown", files: withFiles(decodeScenario("trace: {pods: p11.csv, nodes: nodes.csv}"), "p11.csv", pods11("LS,Done,0,60,0")),
		args: decodeRun, code: 1, errLine: `p11.csv:2: column pod_phase: "Done"`},
	{name: "openb scheduled_time before creation", files: withFiles(decodeScenario("trace: {pods: p11.csv, nodes: nodes.csv}"), "p11.csv", pods11("LS,Running,30,60,29")),
		args: decodeRun, code: 1, errLine: "p11.csv:2: column scheduled_time: 29 before creation_time 30"},
	// elastic.hours was ignored with philly-day (1e-300 ran all 1,896 jobs).
	{name: "elastic.hours with philly-day", files: map[string]string{"s.yaml": "name: x\nelastic: {jobs: philly-day, hours: 1e-300, systems: [Gandiva]}\n"},
		args: decodeRun, code: 1, errLine: "invalid scenario", errAlso: "elastic.hours: 1e-300: only for a Philly job table file"},
	// A Gavel arrival of 9.9e9 s failed after the run when pricing it: the
	// check's hours wrapped in a time.Duration.
	{name: "Gavel arrival past the price series", files: map[string]string{
		"j.trace": gavelLine10(9, "0") + gavelLine10(9, "9.9e9"),
		"s.yaml":  "name: t\ncoloc:\n  jobs: j.trace\n  nodes: 1\n  systems: [FIFO]\n"},
		args: decodeRun, code: 1, errLine: "the job at coloc.jobs {D}/j.trace line 2, column arrival_time (9.9e+09 s) cannot end before hour 2750000 of the run, past the end of the price or carbon series"},
}

// twoShards are the manifests of two agreeing shards (the runs behind
// them are never read: the output is checked first).
var twoShards = map[string]string{
	"s0/shard.json": shardJSON(0, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}`),
	"s1/shard.json": shardJSON(1, `["run", "-c", "s.yaml"]`, `{"field": "-c", "file": "s.yaml", "sha256": "aa"}`),
}

// pods11 is an 11-column openb pod list of one pod whose last five
// columns (qos, pod_phase, creation, deletion, scheduled) are tail.
func pods11(tail string) string {
	return "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,1000,1024,1,500,," + tail + "\n"
}
