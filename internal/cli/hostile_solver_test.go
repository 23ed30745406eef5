package cli

import (
	"strings"

	"github.com/wattsched/wattsched/solver"
)

// hostileSolver: hostile inputs of this kind (issue 28); see hostile_test.go.
// The MILP solver and CE-DLA's plans: thread counts beyond the machine,
// inference loads at the documented maximum (1e8 requests/min) on small
// clusters, clusters with fewer nodes than models with load.
var hostileSolver = hostileSolverCases()

// extremeLoad is slottedLoad (12 slots) at the documented maximum, 1e8
// requests/min per model.
var extremeLoad = strings.NewReplacer("100,200,50", "1e8,1e8,1e8").Replace(slottedLoad)

// slottedDoc is a slotted scenario of nodes and systems over the job list
// and load file beside it.
func slottedDoc(nodes, systems string) string {
	return "name: hostile\nslotted:\n  nodes: " + nodes + "\n  slots: 12\n  lookahead: 8\n" +
		"  jobs: {file: jobs.csv}\n  inference: {file: load.csv}\n  systems: " + systems + "\n"
}

func hostileSolverCases() []hostileCase {
	files := func(nodes, systems, load string) map[string]string {
		return map[string]string{"s.yaml": slottedDoc(nodes, systems), "jobs.csv": slottedJobs, "load.csv": load}
	}
	run := []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}
	small := "{GTX1060-3GB: 1, RTX2060: 2}"
	cases := []hostileCase{
		// The baselines at the documented maximum load on 3 nodes: every
		// request violates the bound, the run completes.
		{name: "baselines at 1e8 req/min on 3 nodes", files: files(small, "[FIFO, EPRONS, PA-MBT]", extremeLoad), args: run, code: 0, stdout: "100.0%"},
		{name: "baselines at 1e8 req/min on 8 nodes", files: files("{GTX1060-3GB: 2, GTX1060-6GB: 2, RTX2060: 2, GTX1080: 2}", "[FIFO, EPRONS, PA-MBT]", extremeLoad), args: run, code: 0, stdout: "100.0%"},
		// A node serves one model: fewer nodes than models with load is
		// refused before any run.
		{name: "fewer nodes than loaded models", files: files("{RTX2060: 2}", "[FIFO]", slottedLoad), args: run, code: 1,
			errLine: "slotted.nodes: 2 nodes in all, fewer than the models with inference load in one slot (load.csv has load for 3 models in slot 0)"},
		{name: "fewer nodes than req_per_min's models", files: map[string]string{"s.yaml": "name: h\nslotted: {nodes: {GTX1080: 1}, jobs: {count: 3}, inference: {req_per_min: 10}, systems: [FIFO]}\n"},
			args: run, code: 1, errLine: "slotted.nodes: 1 nodes in all, fewer than the models with inference load in one slot (req_per_min 10 spreads load over all 3 models)"},
	}
	if !solver.Available() {
		return cases
	}
	return append(cases,
		// HiGHS started threads-1 workers per OS thread that ran a solve
		// (5,749 threads after 30 s); now clamped to the CPUs, with a note.
		hostileCase{name: "threads 100000", files: files(small, "[{name: c, policy: cedla, args: {threads: 100000}}]", slottedLoad), args: run, code: 0,
			errLine: "c: threads 100000 clamped to"},
		// CE-DLA's plans at the documented maximum load: valid (the engine
		// accepts them), every request violates the bound.
		hostileCase{name: "CE-DLA soft at 1e8 req/min on 3 nodes", files: files(small, "[CE-DLA soft]", extremeLoad), args: run, code: 0, stdout: "100.0%"},
		hostileCase{name: "CE-DLA hard at 1e8 req/min on 3 nodes", files: files(small, "[CE-DLA hard]", extremeLoad), args: run, code: 0, stdout: "100.0%"},
		hostileCase{name: "CE-DLA at 1e8 req/min on 8 nodes", files: files("{GTX1060-3GB: 2, GTX1060-6GB: 2, RTX2060: 2, GTX1080: 2}", "[CE-DLA soft, CE-DLA hard]", extremeLoad), args: run, code: 0, stdout: "100.0%"},
		hostileCase{name: "CE-DLA at 1e8 req/min on one type", files: files("{GTX1080: 3}", "[CE-DLA soft, CE-DLA hard]", extremeLoad), args: run, code: 0, stdout: "100.0%"},
	)
}
