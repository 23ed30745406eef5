package cli

import "strings"

// Times the readers refuse (issue 40): every trace reader, dated or in
// seconds from the trace's start, refuses a time outside its documented
// window (docs/reliability.md, "Times in every reader") naming the file,
// line and column, before any run and with nothing written. Kubernetes
// dumps and Prometheus answers have their rows in the import and odd
// suites (their out-of-window times are counted warnings, errors under
// --strict). See hostile_test.go.
var hostileTimes = []hostileCase{
	// openb pod lists: seconds from the trace's start, 0..2^40.
	{name: "openb creation_time past 2^40 s", files: withFiles(decodeScenario(decodeTrace), "pods.csv", timedPods("1099511627777", "1099511627800")),
		args: decodeRun, code: 1, errLine: "pods.csv:3: column creation_time: 1099511627777 out of range 0..1099511627776"},
	{name: "openb deletion_time past 2^40 s", files: withFiles(decodeScenario(decodeTrace), "pods.csv", timedPods("10", "1099511627777")),
		args: decodeRun, code: 1, errLine: "pods.csv:3: column deletion_time: 1099511627777 out of range 0..1099511627776"},
	{name: "openb negative creation_time", files: withFiles(decodeScenario(decodeTrace), "pods.csv", timedPods("-1", "10")),
		args: decodeRun, code: 1, errLine: "pods.csv:3: column creation_time: -1 out of range 0..1099511627776"},
	// SWF logs: seconds from the log's start, at most 1e9 (31 years).
	{name: "SWF submit_time past 1e9 s", files: map[string]string{"s.yaml": "name: h\nmode: hpc\nhpc: {swf: j.swf}\n",
		"j.swf": "; Version: 2.2\n1 0 0 100 4 -1 -1 4 100 -1 1 1 1 1 1 -1 -1 -1\n2 1000000001 0 100 4 -1 -1 4 100 -1 1 1 1 1 1 -1 -1 -1\n"},
		args: decodeRun, code: 1, errLine: "j.swf:3: column submit_time: 1000000001 is above 1000000000"},
	// Gavel traces: seconds from the trace's start, below 1e10.
	{name: "Gavel arrival_time past 1e10 s", files: map[string]string{
		"j.trace": gavelLine10(9, "0") + gavelLine10(9, "10000000001"),
		"s.yaml":  "name: t\ncoloc:\n  jobs: j.trace\n  nodes: 1\n  systems: [FIFO]\n"},
		args: decodeRun, code: 1, errLine: `j.trace:2: column arrival_time: "10000000001" is not seconds >= 0 (below 1e+10)`},
	// Alibaba PAI 2020 tables: seconds since the trace's epoch, at most 1e10.
	{name: "PAI start_time past 1e10 s", files: map[string]string{
		"jobs.csv":  "j1,i1,u1,Terminated,5000,8600\nj2,i2,u1,Terminated,10000000001,10000000600\n",
		"tasks.csv": "j1,worker,1,Terminated,5000,8600,600,29.3,100,V100\n"},
		args: []string{"reproduce", "powerflow", "--pai-jobs", "{D}/jobs.csv", "--pai-tasks", "{D}/tasks.csv", "-o", "{D}/out"}, code: 1,
		errLine: `jobs.csv:2: column start_time: "10000000001" is not a number in [0, 1e+10]`},
	// Philly tables: dated, the years 1970..2100.
	{name: "Philly timestamp in 2101", files: map[string]string{"philly.csv": "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,66.0,c\n2101-01-01 00:00:00,60.0,1,60.0,c\n"},
		args: []string{"reproduce", "powerflow", "--philly", "{D}/philly.csv", "-o", "{D}/out"}, code: 1,
		errLine: `philly.csv:3: column timestamp: "2101-01-01 00:00:00" is outside the years 1970..2100`},
	{name: "Philly timestamp in 1969 (elastic.jobs)", files: map[string]string{"s.yaml": elasticYAML("", "[{name: G, policy: gandiva}]"),
		"j.csv": strings.Replace(phillyCSV(1), "2017-10-13 00:10:06", "1969-12-31 23:59:59", 1)},
		args: decodeRun, code: 1, errLine: `j.csv:3: column timestamp: "1969-12-31 23:59:59" is outside the years 1970..2100`},
	// Price and carbon series: dated, 1970-01-01..2100-01-01 (exclusive).
	{name: "price series in 9999", files: withFiles(decodeScenario("grid: {price: price.csv}"), "price.csv", "Datetime (UTC),Price (USD/MWh)\n9999-01-01 00:00:00,40\n"),
		args: decodeRun, code: 1, errLine: `price.csv:2: column Datetime (UTC): "9999-01-01 00:00:00" is outside 1970-01-01 00:00:00..2100-01-01 00:00:00`},
	{name: "carbon series in year 1", files: withFiles(decodeScenario("grid: {carbon: carbon.csv}"), "carbon.csv", "Datetime (UTC),Carbon Intensity gCO₂eq/kWh (LCA)\n0001-01-01 00:00:00,300\n"),
		args: decodeRun, code: 1, errLine: `carbon.csv:2: column Datetime (UTC): "0001-01-01 00:00:00" is outside`},
	// Scenario start times.
	{name: "grid.start in 1900", files: decodeScenario(`grid: {start: "1900-01-01 00:00:00"}`),
		args: decodeRun, code: 1, errLine: "invalid scenario", errAlso: `grid.start: "1900-01-01 00:00:00" is outside 1970-01-01 00:00:00..2100-01-01 00:00:00`},
	{name: "elastic.start in 9999", files: map[string]string{"s.yaml": elasticYAML("", "[{name: G, policy: gandiva}]") + "  start: \"9999-01-01 00:00:00\"\n", "j.csv": phillyCSV(1)},
		args: decodeRun, code: 1, errLine: "invalid scenario", errAlso: `elastic.start: "9999-01-01 00:00:00" is outside`},
	// Slotted job lists: slots of the scenario's horizon.
	{name: "slotted arrival_slot past the horizon", files: map[string]string{
		"s.yaml":   slottedDoc("{GTX1060-3GB: 2, RTX2060: 2}", "[FIFO]"),
		"jobs.csv": strings.Replace(slottedJobs, "VGG19,3,11", "VGG19,12,11", 1), "load.csv": slottedLoad},
		args: decodeRun, code: 1, errLine: `jobs.csv:3: column arrival_slot: "12", want an integer 0..11`},
}

// timedPods is an openb pod list of two pods with times, the second
// created and deleted at the given seconds.
func timedPods(created, deleted string) string {
	return "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p1,4000,16384,1,1000,,LS,Running,0,100,\n" +
		"p2,4000,16384,1,1000,,LS,Running," + created + "," + deleted + ",\n"
}
