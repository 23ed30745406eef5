package cli

// hostileGavelio: hostile inputs of this kind (issue 26); see
// hostile_test.go. Gavel traces (either layout) and Gavel throughput files
// named by a coloc scenario: a wrong field, an unknown job type or scale, a
// negative or non-finite number is one error naming the file, its line
// (or JSON path) and the field, exit 1, nothing written.
var hostileGavelio = []hostileCase{
	// Gavel inputs are bounded like every user file (issue 28).
	{name: "coloc.jobs /dev/zero", files: map[string]string{"s.yaml": "name: t\ncoloc:\n  jobs: /dev/zero\n  nodes: 1\n  systems: [FIFO]\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "/dev/zero is a character device, want a regular file"},
	{name: "coloc.throughputs /dev/zero", files: map[string]string{"s.yaml": "name: t\ncoloc:\n  jobs: gavel-msr\n  throughputs: /dev/zero\n  nodes: 1\n  systems: [FIFO]\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "/dev/zero is a character device, want a regular file"},
	gavelCase("trace priority_weight negative", gavelLine10(7, "-1"), "", "",
		"j.trace:1: column priority_weight: \"-1\" is not a number in (0, 1e+06]"),
	gavelCase("trace SLO non-finite", gavelLine10(8, "nan"), "", "", "j.trace:1: column SLO"),
	gavelCase("trace total_steps not an integer", gavelLine10(5, "12.5"), "", "", "j.trace:1: column total_steps: \"12.5\" is not an integer"),
	gavelCase("trace arrival_time infinite", gavelLine10(9, "inf"), "", "", "j.trace:1: column arrival_time"),
	gavelCase("trace needs_data_dir", gavelLine10(4, "yes"), "", "", "j.trace:1: column needs_data_dir"),
	gavelCase("trace 9 fields", "A3C\tc\tdir\t-n\t1\t100\t1\t1\t-1\n", "", "", "j.trace:1: 9 tab-separated fields, want 7 (msr layout) or 10"),
	gavelCase("trace layouts mixed", gavelLine10(0, "A3C")+"A3C\tc\t-n\t1\t100\t0\t1\n", "", "", "j.trace:2: 7 tab-separated fields, want 10 as on line 1"),
	gavelCase("trace unknown job type", gavelLine10(0, "ResNet-18"), "gavel-simulation", "", "j.trace:1: column job_type: unknown job type \"ResNet-18\""),
	gavelCase("trace scale the default table lacks", gavelLine10(6, "4"), "", "", "j.trace:1: column scale_factor: \"A3C\" has no v100 throughput on 4 GPU(s) in gavel:v100_scale1.json (scale factors there: 1)"),
	gavelCase("trace scale 16", gavelLine10(6, "16"), "gavel-simulation", "", "j.trace:1: column scale_factor: \"A3C\" has no v100 throughput on 16 GPU(s)"),
	gavelCase("job that does not run on K80", "ResNet-50 (batch size 128)\tc\tdir\t-n\t1\t100\t2\t1\t-1\t0\n", "gavel-simulation", "k80",
		"j.trace:1: column scale_factor: \"ResNet-50 (batch size 128)\" on 2 GPU(s) has throughput 0 on k80"),
	gavelCase("throughputs negative", gavelLine10(0, "A3C"), `{"v100": {"('A3C', 1)": {"null": -2}}}`, "", `t.json: $.v100["('A3C', 1)"].null: isolated throughput is not a number of steps/s >= 0`),
	gavelCase("throughputs non-finite", gavelLine10(0, "A3C"), `{"v100": {"('A3C', 1)": {"null": 2, "('A3C', 1)": [1e999, 1]}}}`, "", `t.json: $.v100["('A3C', 1)"]["('A3C', 1)"]: want [this job's steps/s, other job's steps/s]`),
	gavelCase("throughputs pair rate negative", gavelLine10(0, "A3C"), `{"v100": {"('A3C', 1)": {"null": 2, "('A3C', 1)": [1, -1]}}}`, "", `t.json: $.v100["('A3C', 1)"]["('A3C', 1)"][1]: throughput is not a number of steps/s >= 0`),
	gavelCase("throughputs bad key", gavelLine10(0, "A3C"), `{"v100": {"A3C": {"null": 2}}}`, "", `t.json: $.v100["A3C"]: key "A3C" is not ('job type', scale)`),
	gavelCase("throughputs scales paired", gavelLine10(0, "A3C"), `{"v100": {"('A3C', 1)": {"null": 2, "('A3C', 2)": [1, 1]}, "('A3C', 2)": {"null": 3}}}`, "", `t.json: $.v100["('A3C', 1)"]["('A3C', 2)"]: co-tenants on 1 and 2 GPUs`),
	gavelCase("throughputs worker type missing", gavelLine10(0, "A3C"), `{"v100": {"('A3C', 1)": {"null": 2}}}`, "p100", `t.json: $.p100: worker type missing (the file has v100)`),
	gavelCase("throughputs not JSON", gavelLine10(0, "A3C"), `{"v100": `, "", `t.json: line 1, column 9: unexpected end of JSON input`),
	gavelCase("throughputs NaN", gavelLine10(0, "A3C"), "{\"v100\": {\"('A3C', 1)\": {\n  \"null\": NaN}}}", "", `t.json: line 2, column 11: invalid character 'N' looking for beginning of value (NaN and Infinity are not JSON numbers`),
	gavelCase("throughputs empty", gavelLine10(0, "A3C"), "\n", "", `t.json: $: empty file`),
	gavelCase("throughputs missing", gavelLine10(0, "A3C"), "-", "", `coloc.throughputs: open`),
	// The field is on the next line of the message (scenario.TestColocGavelKeys).
	gavelCase("unknown worker", gavelLine10(0, "A3C"), "gavel-simulation", "a100", "s.yaml: invalid scenario"),
	gavelCase("p100 on the default table", gavelLine10(0, "A3C"), "", "p100", "s.yaml: invalid scenario"),
}

// gavelLine10 is a one-job trace in Gavel's 10-field layout (A3C on one
// GPU, 100 steps, arriving at 0) with field i replaced by v.
func gavelLine10(i int, v string) string {
	f := []string{"A3C", "python3 main.py", "rl", "--max-steps", "1", "100", "1", "1", "-1.000000", "0"}
	f[i] = v
	line := f[0]
	for _, x := range f[1:] {
		line += "\t" + x
	}
	return line + "\n"
}

// gavelCase runs a coloc scenario over trace j.trace with throughputs
// table ("" the default, "gavel-simulation", "-" a file that is not there,
// else the content of t.json) and worker type worker.
func gavelCase(name, trace, table, worker, errLine string) hostileCase {
	files := map[string]string{"j.trace": trace}
	y := "name: t\ncoloc:\n  jobs: j.trace\n  nodes: 1\n  systems: [FIFO]\n"
	switch table {
	case "":
	case "gavel-simulation":
		y += "  throughputs: gavel-simulation\n"
	case "-":
		y += "  throughputs: t.json\n"
	default:
		y += "  throughputs: t.json\n"
		files["t.json"] = table
	}
	if worker != "" {
		y += "  worker: " + worker + "\n"
	}
	files["s.yaml"] = y
	return hostileCase{name: name, files: files, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: errLine}
}
