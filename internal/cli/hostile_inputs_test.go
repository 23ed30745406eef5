package cli

// hostileInputs: inputs that are no regular file (issue 40, item 5): a
// named pipe without a writer blocked every reader forever, also under
// --shard (whose hash opened it before checking); a device or a directory
// is refused at once too. See hostile_test.go; the opening itself is
// userfile.TestOpen.
var hostileInputs = []hostileCase{
	{name: "scenario is a FIFO", fifos: []string{"s.yaml"}, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"},
		code: 1, errLine: "{D}/s.yaml is a named pipe (FIFO), want a regular file"},
	{name: "pod list is a FIFO", files: map[string]string{"nodes.csv": tinyRun["nodes.csv"], "s.yaml": tinyRun["s.yaml"]}, fifos: []string{"pods.csv"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "pods.csv is a named pipe (FIFO)"},
	{name: "pod list is a FIFO under --shard", files: map[string]string{"nodes.csv": tinyRun["nodes.csv"], "s.yaml": tinyRun["s.yaml"]}, fifos: []string{"pods.csv"},
		args: []string{"run", "-c", "{D}/s.yaml", "--shard", "0/2", "-o", "{D}/out"}, code: 1, errLine: "pods.csv is a named pipe (FIFO)"},
	{name: "SWF log is a FIFO under --shard", fifos: []string{"log.swf"},
		args: []string{"reproduce", "vahrm", "--swf", "{D}/log.swf", "--shard", "0/2", "-o", "{D}/out"}, code: 1, errLine: "log.swf is a named pipe (FIFO)"},
	{name: "catalog is a FIFO", files: tinyRun, fifos: []string{"cat.yaml"},
		args: []string{"run", "-c", "{D}/s.yaml", "--catalog", "{D}/cat.yaml", "-o", "{D}/out"}, code: 1, errLine: "cat.yaml is a named pipe (FIFO)"},
	{name: "k8s dump is a FIFO", fifos: []string{"c.json"},
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out"}, code: 1, errLine: "c.json is a named pipe (FIFO)"},
	{name: "calibrate --from is a FIFO", fifos: []string{"q.json"},
		args: []string{"calibrate", "--from", "{D}/q.json", "-o", "{D}/cat.yaml"}, code: 1, errLine: "q.json is a named pipe (FIFO)"},
	{name: "Philly table is a FIFO", fifos: []string{"jobs.csv"},
		args: []string{"reproduce", "powerflow", "--philly", "{D}/jobs.csv", "-o", "{D}/out"}, code: 1, errLine: "jobs.csv is a named pipe (FIFO)"},
	{name: "scenario is a device", args: []string{"run", "-c", "/dev/null", "-o", "{D}/out"},
		code: 1, errLine: "/dev/null is a character device, want a regular file"},
	{name: "scenario is a directory", files: map[string]string{"dir/x": ""}, args: []string{"run", "-c", "{D}/dir", "-o", "{D}/out"},
		code: 1, errLine: "{D}/dir is a directory, want a regular file"},
}
