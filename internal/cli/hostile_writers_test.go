package cli

// earlierResult is a directory an earlier run published (its manifest and
// a file), for the cases that aim an output file into it.
var earlierResult = map[string]string{
	"old/.wattsched-results": "wattsched results\nversion 0.1.0\nsummary.json\n",
	"old/summary.json":       "{}\n",
}

// hostileWriters: every file wattsched writes outside a fresh -o result
// (issue 40, item 1) follows the rules of -o: an existing file only with
// --force, never a symbolic link, never a file inside another result (or
// the run's own results), written whole through a temporary file; each
// refused before any work. See hostile_test.go; the rules themselves are
// outdir.TestFileRules.
var hostileWriters = func() []hostileCase {
	slotted := map[string]string{"s.yaml": slottedDoc("{GTX1060-3GB: 2, GTX1060-6GB: 2, RTX2060: 2, GTX1080: 2}", "[FIFO]"),
		"jobs.csv": slottedJobs, "load.csv": slottedLoad}
	run := func(more ...string) []string {
		return append([]string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, more...)
	}
	return []hostileCase{
		{name: "--solver-log over an existing file", files: with(slotted, map[string]string{"highs.log": "keep"}),
			args: run("--solver-log", "{D}/highs.log"), code: 1, errLine: "--solver-log: output {D}/highs.log exists (use --force to replace it)"},
		{name: "--solver-log through a symbolic link", files: slotted,
			args: run("--solver-log", "/proc/self/cwd", "--force"), code: 1, errLine: "output /proc/self/cwd is a symbolic link"},
		{name: "--solver-log over an earlier result's file", files: with(slotted, earlierResult),
			args: run("--solver-log", "{D}/old/summary.json", "--force"), code: 1, errLine: "is inside the wattsched result {D}/old"},
		{name: "--solver-log as a new file in an earlier result", files: with(slotted, earlierResult),
			args: run("--solver-log", "{D}/old/highs.log"), code: 1, errLine: "is inside the wattsched result {D}/old"},
		{name: "--solver-log at the -o path", files: slotted,
			args: run("--solver-log", "{D}/out"), code: 2, errLine: "--solver-log {D}/out is the results directory -o {D}/out"},
		{name: "--solver-log inside the -o directory", files: slotted,
			args: run("--solver-log", "{D}/out/highs.log"), code: 2, errLine: "is the results directory -o {D}/out, inside it"},
		{name: "--solver-log as the -o claim's lock file", files: slotted,
			args: run("--solver-log", "{D}/.out.lock"), code: 2, errLine: "beside it as its temporary"},
		{name: "calibrate -o over an existing file", files: map[string]string{"cat.yaml": "keep"},
			args: []string{"calibrate", "--from", "{D}/q.json", "-o", "{D}/cat.yaml"}, code: 1, errLine: "output {D}/cat.yaml exists (use --force"},
		{name: "calibrate -o into an earlier result", files: earlierResult,
			args: []string{"calibrate", "--from", "{D}/q.json", "-o", "{D}/old/cat.yaml"}, code: 1, errLine: "inside the wattsched result"},
		{name: "calibrate -o through a symbolic link", args: []string{"calibrate", "--from", "{D}/q.json", "-o", "/proc/self/cwd", "--force"},
			code: 1, errLine: "is a symbolic link"},
		{name: "bench --plot over an existing file", files: map[string]string{"p.svg": "keep"},
			args: []string{"bench", "--scale", "1", "--plot", "{D}/p.svg"}, code: 1, errLine: "bench --plot: output {D}/p.svg exists (use --force"},
		{name: "bench --plot into an earlier result", files: earlierResult,
			args: []string{"bench", "--scale", "1", "--plot", "{D}/old/p.svg", "--force"}, code: 1, errLine: "inside the wattsched result"},
		{name: "bench --plot without --scale", args: []string{"bench", "--plot", "{D}/p.svg"}, code: 2, errLine: "--plot needs --scale"},
		{name: "traces scale -o over an existing file", files: map[string]string{"n.csv": "keep"},
			args: []string{"traces", "scale", "--factor", "2", "--nodes", "openb-gpu", "-o", "{D}/n.csv"}, code: 1, errLine: "output {D}/n.csv exists (use --force"},
		{name: "traces scale -o into an earlier result", files: earlierResult,
			args: []string{"traces", "scale", "--factor", "2", "--nodes", "openb-gpu", "-o", "{D}/old/n.csv", "--force"}, code: 1, errLine: "inside the wattsched result"},
		{name: "traces scale -o through a symbolic link", args: []string{"traces", "scale", "--factor", "2", "--nodes", "openb-gpu", "-o", "/proc/self/cwd", "--force"},
			code: 1, errLine: "is a symbolic link"},
	}
}()
