package cli

// tinyRun is a scenario that runs in milliseconds, for the cases below.
var tinyRun = map[string]string{
	"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,2,T4\n",
	"pods.csv":  "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n",
	"s.yaml":    "name: s\nmode: inflation\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n",
}

// with is files plus more.
func with(files map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// hostileOutdir: hostile output paths (issue 28, item 1 and item 4's
// writability); see hostile_test.go. Each fails before any work. The
// spellings that must work (DIR/, DIR/., a/../DIR, a linked parent),
// concurrency and killed runs are TestOutputPathSpellings,
// TestConcurrentRunsOneWins and the experiment package's outdir tests.
var hostileOutdir = append(hostileOutfile, []hostileCase{
	{name: "parent is a file", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/s.yaml/out"},
		code: 1, errLine: "/s.yaml/out: cannot create its parent: mkdir "},
	{name: "parent is a file, trailing slash", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/s.yaml/out/"},
		code: 1, errLine: "cannot create its parent"},
	{name: "parent unwritable (/proc)", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "/proc/wattsched-out"},
		code: 1, errLine: "output directory /proc/wattsched-out: cannot write beside it"},
	{name: "reproduce into an unwritable parent fails before the run", args: []string{"reproduce", "vahrm", "--quick", "-o", "/proc/wattsched-out/"},
		code: 1, errLine: "cannot write beside it"},
	{name: "reproduce cedla into an unwritable parent", args: []string{"reproduce", "cedla", "--quick", "-o", "/proc/self/out"},
		code: 1, errLine: "cannot write beside it"},
	{name: "import into an unwritable parent before fetching", files: map[string]string{"f": "x"}, args: []string{"import", "k8s", "--kubeconfig", "{D}/no-such-kubeconfig", "-o", "{D}/f/out"},
		code: 1, errLine: "cannot create its parent"},
	{name: "compare into a parent that is a file", files: tinyRun, args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/pods.csv/x/"},
		code: 1, errLine: "cannot create its parent"},
	{name: "shard into a parent that is a file", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "--shard", "0/2", "-o", "{D}/nodes.csv/sh"},
		code: 1, errLine: "cannot create its parent"},
	{name: "the working directory", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "."},
		code: 1, errLine: "is the working directory, one of its parents or the filesystem root"},
	{name: "the working directory, slash", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "./", "--force"},
		code: 1, errLine: "is the working directory"},
	{name: "the filesystem root", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "/", "--force"},
		code: 1, errLine: "is the working directory, one of its parents or the filesystem root"},
	{name: "ends in ..", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out/.."},
		code: 1, errLine: "ends in '..'"},
	{name: "the scratch directory as DIR/.", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/."},
		code: 1, errLine: "is not empty (use --force"},
	{name: "the scratch directory as DIR/. with --force", files: tinyRun, args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/.", "--force"},
		code: 1, errLine: "is not a wattsched result"},
	{name: "trailing slash on a foreign directory with --force", files: with(tinyRun, map[string]string{"out/keep.txt": "mine"}),
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out/", "--force"}, code: 1, errLine: "/out is not a wattsched result"},
	{name: "trailing dot on a foreign directory", files: with(tinyRun, map[string]string{"out/keep.txt": "mine"}),
		args: []string{"import", "k8s", "-f", "{D}/c.json", "-o", "{D}/out/."}, code: 1, errLine: "/out is not empty"},
	{name: "trailing slash on a file", files: with(tinyRun, map[string]string{"out": "a file"}),
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out/", "--force"}, code: 1, errLine: "/out exists and is not a directory"},
}...)

// hostileOutfile: calibrate's -o and --save are files, checked before the
// query.
var hostileOutfile = []hostileCase{
	{name: "calibrate -o ending in a slash", args: []string{"calibrate", "--from", "{D}/q.json", "-o", "{D}/cat/"},
		code: 1, errLine: "names a directory (it ends in a slash)"},
	{name: "calibrate -o in a missing directory", args: []string{"calibrate", "--from", "{D}/q.json", "-o", "{D}/nodir/cat.yaml"},
		code: 1, errLine: "/nodir/cat.yaml: cannot write in"},
	{name: "calibrate -o under /proc", args: []string{"calibrate", "--from", "{D}/q.json", "-o", "/proc/cat.yaml"},
		code: 1, errLine: "output /proc/cat.yaml: cannot write in /proc"},
	{name: "calibrate -o .", args: []string{"calibrate", "--from", "{D}/q.json", "-o", "."},
		code: 1, errLine: "output . names a directory"},
	{name: "calibrate --save under a file", files: map[string]string{"f": "x"}, args: []string{"calibrate", "--prometheus", "http://127.0.0.1:1", "--range", "0,60", "--save", "{D}/f/a.json", "-o", "{D}/cat.yaml"},
		code: 1, errLine: "/f/a.json: cannot write in"},
}
