package cli

import (
	"bytes"
	"compress/gzip"
	"strings"
)

// hostileDecode: hostile inputs of this kind (issue 28); see hostile_test.go.
// Inputs that are not what they claim (/dev/zero, binary, gzip bombs, files
// past their size bounds), YAML numbers that cannot be represented, zeros
// in any spelling, extra documents, control characters in names,
// duplicates, and rows that used to drop jobs silently.
var hostileDecode = []hostileCase{
	// Files past their bounds or not text: an error in milliseconds, with
	// the file and line.
	{name: "dev-zero-scenario", args: []string{"run", "-c", "/dev/zero", "-o", "{D}/out"}, code: 1,
		errLine: "/dev/zero is a character device, want a regular file"},
	{name: "dev-zero-pods", files: decodeScenario("trace: {pods: /dev/zero, nodes: nodes.csv}"),
		args: decodeRun, code: 1, errLine: "trace.pods: /dev/zero is a character device, want a regular file"},
	{name: "dev-zero-nodes", files: decodeScenario("trace: {pods: pods.csv, nodes: /dev/zero}"),
		args: decodeRun, code: 1, errLine: "trace.nodes: /dev/zero is a character device, want a regular file"},
	{name: "dev-zero-catalog", files: decodeScenario("trace: {pods: pods.csv, nodes: nodes.csv}\ncatalog: /dev/zero"),
		args: decodeRun, code: 1, errLine: "/dev/zero is a character device, want a regular file"},
	{name: "dev-zero-grid-price", files: decodeScenario("trace: {pods: pods.csv, nodes: nodes.csv}\ngrid: {price: /dev/zero}"),
		args: decodeRun, code: 1, errLine: "/dev/zero is a character device, want a regular file"},
	{name: "dev-zero-swf", files: map[string]string{"s.yaml": "name: h\nmode: hpc\nhpc: {swf: /dev/zero}\n"},
		args: decodeRun, code: 1, errLine: "/dev/zero is a character device, want a regular file"},
	{name: "dev-zero-philly", args: []string{"reproduce", "powerflow", "--philly", "/dev/zero", "-o", "{D}/out"}, code: 1,
		errLine: "/dev/zero is a character device, want a regular file"},
	{name: "dev-zero-k8s-dump", args: []string{"import", "k8s", "-f", "/dev/zero", "-o", "{D}/out"}, code: 1,
		errLine: "/dev/zero is a character device, want a regular file"},
	{name: "pods-line-too-long", files: withFiles(decodeScenario("trace: {pods: pods.csv, nodes: nodes.csv}"),
		"pods.csv", decodePodsHeader+strings.Repeat("a", 1<<20+1)+"\n"),
		args: decodeRun, code: 1, errLine: "pods.csv:2: line longer than 1 MiB (the limit of one line of a trace or table file)"},
	{name: "gzip-bomb-pods", files: withFiles(decodeScenario("trace: {pods: pods.csv.gz, nodes: nodes.csv}"),
		"pods.csv.gz", gzipString(decodePodsHeader+strings.Repeat("a", 4<<20))),
		args: decodeRun, code: 1, errLine: "pods.csv.gz:2: line longer than 1 MiB"},
	{name: "scenario-too-large", files: map[string]string{"s.yaml": "name: t\n" + strings.Repeat("# padding\n", 500<<10)},
		args: decodeRun, code: 1, errLine: "larger than 4 MiB (the limit of a scenario file"},
	{name: "description-too-long", files: decodeScenario("trace: {pods: pods.csv, nodes: nodes.csv}\ndescription: " + strings.Repeat("x", 5000)),
		args: decodeRun, code: 1, errLine: "description: 5000 bytes, more than 4 KiB"},

	// gzip is recognised by its magic bytes for user CSVs as for the
	// embedded traces.
	{name: "gzip-pods-and-nodes-accepted", files: map[string]string{
		"s.yaml":      "name: t\ntrace: {pods: pods.csv.gz, nodes: nodes.gz}\npolicies:\n- name: FGD\n  scorers: [{policy: fgd, weight: 1}]\n",
		"pods.csv.gz": gzipString(decodePods), "nodes.gz": gzipString(decodeNodes)},
		args: decodeRun, code: 0, stdout: "results in"},
	{name: "gzip-pods-named-csv-accepted", files: map[string]string{
		"s.yaml":   "name: t\ntrace: {pods: pods.csv, nodes: nodes.csv}\npolicies:\n- name: FGD\n  scorers: [{policy: fgd, weight: 1}]\n",
		"pods.csv": gzipString(decodePods), "nodes.csv": decodeNodes},
		args: decodeRun, code: 0, stdout: "results in"},

	// YAML numbers: nothing truncated, nothing wrapped, zero in any spelling.
	{name: "seeds-2.5", files: decodeScenario(decodeTrace + "seeds: 2.5"), args: decodeRun, code: 1, errLine: "line 6: seeds: 2.5 is not an integer"},
	{name: "weight-1.9", files: decodeScenarioWeight("1.9"), args: decodeRun, code: 1, errLine: "policies[0].scorers[0].weight: 1.9 is not an integer"},
	{name: "weight-2^63-float", files: decodeScenarioWeight("9.223372036854775808e18"), args: decodeRun, code: 1, errLine: "weight: 9.223372036854775808e18 is out of range"},
	{name: "first-seed-2^64", files: decodeScenario(decodeTrace + "first_seed: 18446744073709551616"), args: decodeRun, code: 1,
		errLine: "first_seed: 18446744073709551616 is out of range 0..18446744073709551615"},
	// The next line of these says "first_seed: 18446744073709551615: the
	// last of 2 seeds would pass 2^64-1 and wrap".
	{name: "first-seed-wraps", files: decodeScenario(decodeTrace + "first_seed: 18446744073709551615\nseeds: 2"), args: decodeRun, code: 1,
		errLine: "s.yaml: invalid scenario:"},
	{name: "first-seed-wraps-compare-seeds", files: decodeScenario(decodeTrace + "first_seed: 18446744073709551615"),
		args: []string{"compare", "-c", "{D}/s.yaml", "--seeds", "2", "-o", "{D}/out"}, code: 1, errLine: "invalid scenario:"},
	{name: "first-seed-0", files: decodeScenario(decodeTrace + "first_seed: 0"), args: decodeRun, code: 1, errLine: "first_seed: 0; leave it out for the default"},
	{name: "seeds-0x0", files: decodeScenario(decodeTrace + "seeds: 0x0"), args: decodeRun, code: 1, errLine: "line 6: seeds: 0x0 (zero); leave it out"},
	{name: "seeds-plus-0", files: decodeScenario(decodeTrace + "seeds: +0"), args: decodeRun, code: 1, errLine: "seeds: +0 (zero)"},
	{name: "target-0o0", files: decodeScenario(decodeTrace + "target: 0o0"), args: decodeRun, code: 1, errLine: "target: 0o0 (zero)"},
	{name: "target-minus-0", files: decodeScenario(decodeTrace + "target: -0.0"), args: decodeRun, code: 1, errLine: "target: -0.0 (zero)"},
	{name: "sr-alias-to-0", files: map[string]string{"s.yaml": "name: h\nmode: hpc\nhpc:\n  swf: nasa-ipsc\n  jobs: &none 0\n  sr: *none\n"},
		args: decodeRun, code: 1, errLine: "line 6: hpc.sr: 0; leave it out"},
	{name: "procs-per-node-0x0", files: map[string]string{"s.yaml": "name: h\nmode: hpc\nhpc: {swf: nasa-ipsc, procs_per_node: 0x0}\n"},
		args: decodeRun, code: 1, errLine: "hpc.procs_per_node: 0x0 (zero)"},
	{name: "hours-0o0", files: map[string]string{"s.yaml": "name: e\nmode: elastic\nelastic: {jobs: philly-day, hours: 0o0}\n"},
		args: decodeRun, code: 1, errLine: "elastic.hours: 0o0 (zero)"},
	{name: "nodes-merge-key-0", files: map[string]string{"s.yaml": "name: e\nmode: elastic\nelastic:\n  <<: {nodes: 0}\n  jobs: philly-day\n"},
		args: decodeRun, code: 1, errLine: "elastic.nodes: 0; leave it out"},
	{name: "coloc-nodes-0", files: map[string]string{"s.yaml": "name: c\nmode: coloc\ncoloc: {jobs: gavel-msr, nodes: 0}\n"},
		args: decodeRun, code: 1, errLine: "coloc.nodes: 0; leave it out"},
	{name: "policy-arg-threads-2.5", files: map[string]string{"s.yaml": "name: s\nmode: slotted\nslotted:\n  jobs: {count: 2}\n  inference: {req_per_min: 100}\n  systems:\n  - {name: x, policy: cedla, args: {threads: 2.5}}\n"},
		// The first line says the scenario is invalid; the next one
		// "slotted.systems[0] (x): cedla args: threads: 2.5 is not an integer".
		args: decodeRun, code: 1, errLine: "scenario s: invalid scenario:"},

	// Documents.
	{name: "second-document", files: decodeScenario(decodeTrace + "---\nname: other"), args: decodeRun, code: 1,
		errLine: "line 7: a second YAML document (after ---): a file holds one"},
	{name: "empty-scenario", files: map[string]string{"s.yaml": ""}, args: decodeRun, code: 1, errLine: "s.yaml is empty"},
	{name: "comments-only-scenario", files: map[string]string{"s.yaml": "# nothing\n\n  # here\n"}, args: decodeRun, code: 1, errLine: "s.yaml is empty"},
	{name: "empty-catalog", files: withFiles(decodeScenario(decodeTrace+"catalog: cat.yaml"), "cat.yaml", "# none\n"), args: decodeRun, code: 1,
		errLine: "cat.yaml: empty: no YAML document"},

	// Names: no control characters; duplicates are errors.
	{name: "nul-in-scenario-name", files: decodeScenarioNamed(`"a\0b"`), args: decodeRun, code: 1,
		errLine: "line 1: name: \"a\\x00b\" holds a control character"},
	{name: "escape-in-policy-name", files: map[string]string{"s.yaml": "name: t\n" + decodeTrace + "policies:\n- name: \"\\e[31mred\"\n  scorers: [{policy: fgd, weight: 1}]\n"},
		args: decodeRun, code: 1, errLine: "policies[0].name: \"\\x1b[31mred\" holds a control character"},
	{name: "newline-in-system-name", files: map[string]string{"s.yaml": "name: h\nmode: hpc\nhpc:\n  swf: nasa-ipsc\n  systems: [\"VU-FCFS\\n\"]\n"},
		args: decodeRun, code: 1, errLine: "hpc.systems[0].name: \"VU-FCFS\\n\" holds a control character"},
	{name: "nul-in-pod-name", files: withFiles(decodeScenario(decodeTrace), "pods.csv", decodePodsHeader+"p\x001,4000,16384,1,1000\n"),
		args: decodeRun, code: 1, errLine: "pods.csv:2: NUL byte at offset"},
	{name: "control-char-in-pod-name", files: withFiles(decodeScenario(decodeTrace), "pods.csv", decodePodsHeader+"p\x01,4000,16384,1,1000\n"),
		args: decodeRun, code: 1, errLine: "pods.csv:2: column name: name \"p\\x01\" holds the control character U+0001"},
	{name: "control-char-in-node-name", files: withFiles(decodeScenario(decodeTrace), "nodes.csv", decodeNodesHeader+"n\x1b,96000,786432,8,V100M16\n"),
		args: decodeRun, code: 1, errLine: "nodes.csv:2: column sn: name \"n\\x1b\" holds the control character U+001B"},
	{name: "duplicate-pod-names", files: withFiles(decodeScenario(decodeTrace), "pods.csv", decodePodsHeader+"p1,4000,16384,1,1000\np1,4000,16384,1,500\n"),
		args: decodeRun, code: 1, errLine: "pods.csv:3: column name: pod \"p1\" already on line 2"},
	{name: "duplicate-node-names", files: withFiles(decodeScenario(decodeTrace), "nodes.csv", decodeNodesHeader+"n1,96000,786432,8,V100M16\nn1,96000,786432,8,V100M16\n"),
		args: decodeRun, code: 1, errLine: "nodes.csv:3: column sn: node \"n1\" already on line 2"},
	{name: "duplicate-swf-job-numbers", files: map[string]string{"s.yaml": "name: h\nmode: hpc\nhpc: {swf: jobs.swf}\n",
		"jobs.swf": "1 0 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n1 5 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"},
		args: decodeRun, code: 1, errLine: "jobs.swf:2: column job_number: job 1 already on line 1"},
	{name: "duplicate-k8s-nodes", files: map[string]string{"dump.json": `{"kind":"List","items":[` + decodeK8sNode + "," + decodeK8sNode + `]}`},
		args: []string{"import", "k8s", "-f", "{D}/dump.json", "-o", "{D}/out"}, code: 1, errLine: "items[1].metadata.name: node \"n1\" is also items[0]"},

	// Rows that used to drop jobs silently.
	{name: "pai-end-before-start", files: map[string]string{
		"jobs.csv":  "j1,i1,u1,Terminated,5000,8600\nj2,i2,u1,Terminated,6000,5000\n",
		"tasks.csv": "j1,worker,1,Terminated,5000,8600,600,29.3,100,V100\nj2,worker,1,Terminated,6000,5000,600,29.3,100,V100\n"},
		args: []string{"reproduce", "powerflow", "--pai-jobs", "{D}/jobs.csv", "--pai-tasks", "{D}/tasks.csv", "-o", "{D}/out"}, code: 1,
		errLine: "jobs.csv:2: column end_time: 5000 is before start_time 6000"},
	{name: "pai-duplicate-job", files: map[string]string{
		"jobs.csv":  "j1,i1,u1,Terminated,5000,8600\nj1,i2,u1,Terminated,6000,8000\n",
		"tasks.csv": "j1,worker,1,Terminated,5000,8600,600,29.3,100,V100\n"},
		args: []string{"reproduce", "powerflow", "--pai-jobs", "{D}/jobs.csv", "--pai-tasks", "{D}/tasks.csv", "-o", "{D}/out"}, code: 1,
		errLine: "jobs.csv:2: column job_name: job \"j1\" already on line 1"},
	{name: "philly-year-1", files: map[string]string{"philly.csv": "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,c\n0001-01-01 00:00:00,60.0,1,60.0,c\n"},
		args: []string{"reproduce", "powerflow", "--philly", "{D}/philly.csv", "-o", "{D}/out"}, code: 1,
		errLine: "philly.csv:3: column timestamp: \"0001-01-01 00:00:00\" is outside the years 1970..2100"},
}

// A tiny inflation scenario: two 8-GPU nodes, two pods (about 20 tasks
// at the default target), with each test's lines added.
const (
	decodeNodesHeader = "sn,cpu_milli,memory_mib,gpu,model\n"
	decodeNodes       = decodeNodesHeader + "n1,96000,786432,8,V100M16\nn2,96000,786432,8,V100M16\n"
	decodePodsHeader  = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
	decodePods        = decodePodsHeader + "p1,4000,16384,1,1000\np2,4000,16384,1,500\n"
	decodeTrace       = "trace: {pods: pods.csv, nodes: nodes.csv}\n"
	decodeK8sNode     = `{"kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"8","memory":"32Gi"}}}`
)

var decodeRun = []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}

// decodeScenario is the tiny scenario with more lines (a trace line among
// them when the case names its own trace), and its node and pod lists.
func decodeScenario(more string) map[string]string {
	s := "name: t\npolicies:\n- name: FGD\n  scorers: [{policy: fgd, weight: 1}]\n"
	if !strings.Contains(more, "trace:") {
		s += decodeTrace
	}
	return map[string]string{"s.yaml": s + more + "\n", "nodes.csv": decodeNodes, "pods.csv": decodePods}
}

func decodeScenarioWeight(w string) map[string]string {
	return map[string]string{"s.yaml": "name: t\n" + decodeTrace + "policies:\n- name: FGD\n  scorers: [{policy: fgd, weight: " + w + "}]\n",
		"nodes.csv": decodeNodes, "pods.csv": decodePods}
}

func decodeScenarioNamed(name string) map[string]string {
	return map[string]string{"s.yaml": "name: " + name + "\n" + decodeTrace + "policies:\n- name: FGD\n  scorers: [{policy: fgd, weight: 1}]\n",
		"nodes.csv": decodeNodes, "pods.csv": decodePods}
}

// withFiles is files with one more (or replaced).
func withFiles(files map[string]string, name, body string) map[string]string {
	out := map[string]string{name: body}
	for k, v := range files {
		if k != name {
			out[k] = v
		}
	}
	return out
}

func gzipString(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}
