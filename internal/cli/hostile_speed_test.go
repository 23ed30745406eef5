package cli

import "strings"

// Job speed per GPU model (issue 27, item 1): speed figures in a catalog
// file or a scenario's hardware section, a trace's reference GPU and the
// pod list's reference_gpu and workload columns. Every bad figure or name
// is refused before any run, naming the file and the field.
const (
	h100Nodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,8,H100\n"
	l40sNodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,4,L40S\n"
	t4Nodes   = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,4,L40S\nn2,64000,262144,4,T4\n"
	// One whole-GPU pod of an hour with the two optional columns.
	refPodsHead = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload\n"
)

// speedGPU is a catalog file or hardware list holding one GPU model with
// the given speed lines.
func speedGPU(speed string) string {
	return "gpus:\n  - name: X1\n    idle_w: 30\n    tdp_w: 300\n    memory_gib: 16\n    source: test\n    speed:\n" + speed
}

// indent shifts YAML lines two spaces right (a list under hardware:).
func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

// referenced is a replay scenario whose trace names reference gpu.
func referenced(gpu, extra string) string {
	return "name: t\nmode: replay\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\n  reference_gpu: " + gpu + "\n" + replayPolicies + extra
}

var hostileSpeed = []hostileCase{
	{name: "catalog figure without its value", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": h100Nodes, "pods.csv": onePod,
		"cat.yaml": speedGPU("      training: {source: my bench}\n")},
		args: []string{"run", "-c", "{D}/s.yaml", "--catalog", "{D}/cat.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "cat.yaml: gpus[0] (X1).speed.training.relative: missing"},
	{name: "catalog figure zero", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": h100Nodes, "pods.csv": onePod,
		"cat.yaml": speedGPU("      inference: {relative: 0, source: my bench}\n")},
		args: []string{"compare", "-c", "{D}/s.yaml", "--catalog", "{D}/cat.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "cat.yaml: gpus[0] (X1).speed.inference.relative: 0, want a finite number in [0.001, 1000]"},
	{name: "hardware figure negative", files: map[string]string{"s.yaml": replayScenario("hardware:\n" + indent(speedGPU("      training: {relative: -0.5, source: my bench}\n"))), "nodes.csv": h100Nodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "s.yaml: scenario t: hardware: gpus[0] (X1).speed.training.relative: -0.5, want a finite number in [0.001, 1000]"},
	{name: "hardware figure NaN", files: map[string]string{"s.yaml": replayScenario("hardware:\n" + indent(speedGPU("      training: {relative: .nan, source: my bench}\n"))), "nodes.csv": h100Nodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "hardware: gpus[0] (X1).speed.training.relative: NaN, want a finite number"},
	{name: "hardware figure infinite", files: map[string]string{"s.yaml": replayScenario("hardware:\n" + indent(speedGPU("      inference: {relative: .inf, source: my bench}\n"))), "nodes.csv": h100Nodes, "pods.csv": onePod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "hardware: gpus[0] (X1).speed.inference.relative: +Inf, want a finite number"},
	{name: "figure without a source", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": h100Nodes, "pods.csv": onePod,
		"cat.yaml": speedGPU("      training: {relative: 0.8}\n")},
		args: []string{"run", "-c", "{D}/s.yaml", "--catalog", "{D}/cat.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "cat.yaml: gpus[0] (X1).speed.training.source: empty"},
	{name: "figure of an unknown class", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": h100Nodes, "pods.csv": onePod,
		"cat.yaml": speedGPU("      serving: {relative: 0.8, source: my bench}\n")},
		args: []string{"run", "-c", "{D}/s.yaml", "--catalog", "{D}/cat.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "cat.yaml: yaml: unmarshal errors"}, // line 8: field serving not found in type hw.Speed
	{name: "reference model not in the catalog", files: map[string]string{"s.yaml": referenced("H900", ""), "nodes.csv": h100Nodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "trace.reference_gpu: unknown GPU model \"H900\""},
	{name: "reference model not in the catalog (compare)", files: map[string]string{"s.yaml": referenced("H900", ""), "nodes.csv": h100Nodes, "pods.csv": onePod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--seeds", "2"}, code: 1,
		errLine: "trace.reference_gpu: unknown GPU model \"H900\""},
	{name: "pod's reference model not in the catalog", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": h100Nodes,
		"pods.csv": refPodsHead + "p1,1000,1024,1,1000,,LS,Running,0,3600,0,H100,\np2,1000,1024,1,1000,,LS,Running,0,3600,0,A200,inference\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "trace.pods pods.csv: pod p2: reference_gpu: unknown GPU model \"A200\""},
	{name: "reference model without a figure", files: map[string]string{"s.yaml": referenced("T4", ""), "nodes.csv": l40sNodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "GPU model T4 has no training speed in the catalog"},
	{name: "cluster model without a figure", files: map[string]string{"s.yaml": referenced("H100", ""), "nodes.csv": t4Nodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "job speed of training pods measured on H100 (trace.reference_gpu; pod p1 the first): GPU model T4 has no training speed"},
	{name: "reference in mode inflation", files: map[string]string{"s.yaml": "name: t\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\n  reference_gpu: H100\n" + replayPolicies, "nodes.csv": h100Nodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "s.yaml: invalid scenario"},
	{name: "workload column unknown", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": h100Nodes,
		"pods.csv": refPodsHead + "p1,1000,1024,1,1000,,LS,Running,0,3600,0,H100,serving\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "pods.csv:2: column workload: \"serving\", want training, inference or empty"},
	// What a valid run says about job speed, on stdout (the same line is
	// in summary.json and report.html: TestJobSpeedOutputs).
	{name: "reference H100 on L40S says its factor", files: map[string]string{"s.yaml": referenced("H100", ""), "nodes.csv": l40sNodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 0,
		stdout: "training pods measured on H100 run x2.38 on L40S"},
	{name: "no reference says durations stay as traced", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": l40sNodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 0,
		stdout: "Job speed: not modelled, the reference GPU is unknown"},
	// A long pod measured on a GPU a thousand times faster than the one
	// it may land on would end past the pod list's 2^40 s.
	{name: "scaled duration past 2^40 s", files: map[string]string{"s.yaml": referenced("Fast", "hardware:\n"+indent(
		"gpus:\n  - {name: Fast, idle_w: 30, tdp_w: 300, memory_gib: 16, source: t, speed: {training: {relative: 1000, source: t}}}\n  - {name: Slow, idle_w: 30, tdp_w: 300, memory_gib: 16, source: t, speed: {training: {relative: 0.001, source: t}}}\n")),
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,4,Slow\n", "pods.csv": podsHead + "p1,1000,1024,1,1000,,LS,Running,0,100000000,0\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "trace.pods pods.csv: pod p1: its 100000000 s measured on Fast would run 1e+14 s on Slow (x1e+06), past the 1099511627776 s (2^40)"},
	// Whether a pod outlasts a two-hour price series depends on where it
	// lands: one hour on the H100, 2.38 h on the L40S. Said before the run;
	// FGD scores the two empty nodes equally and the tie goes, with
	// first_seed 42's order of the nodes by name (cluster.TieRank), to the
	// H100 node x1 (to the L40S l1 were the H100 named h1): the run succeeds.
	{name: "pod that outlasts the series on its slowest GPU", files: map[string]string{"s.yaml": referenced("H100", "grid:\n  price: price.csv\n"),
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nx1,64000,262144,8,H100\nl1,64000,262144,4,L40S\n", "pods.csv": onePod, "price.csv": shortPrice},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 0,
		errLine: "warning: pod p1 would end at 2.4 h if it ran on its slowest GPU (job speed), past the end of "},
}
