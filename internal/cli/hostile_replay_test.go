package cli

// Inputs of the replay, compare and inflation modes (issue 28, item 3):
// checks that can be made before a run are made before it.
const (
	replayNodes = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,4,V100M32\n"
	noGPUNodes  = "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,0,\n"
	podsHead    = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	onePod      = podsHead + "p1,1000,1024,1,1000,,LS,Running,0,3600,0\n"
	// p2 asks for a T4 (the cluster has V100s), p3 for 4 whole GPUs of
	// more CPU than any node has.
	unfitPods = podsHead + "p1,1000,1024,1,1000,,LS,Running,0,3600,0\np2,1000,1024,1,1000,T4,LS,Running,0,3600,0\np3,128000,1024,4,1000,,LS,Running,0,3600,0\n"
	// 2^40 s, the documented bound of creation_time.
	latePod = podsHead + "p1,1000,1024,1,1000,,LS,Running,1099511627776,1099511627776,1099511627776\n"
	longPod = podsHead + "p1,1000,1024,1,1000,,LS,Running,0,1099511627776,0\n"
	// Two pods of all four GPUs for 5,556 h each: the second waits for the
	// first and ends at 11,111 h, past the one-year series.
	waitingPods = podsHead + "a,1000,1024,4,1000,,LS,Running,0,20000000,0\nb,1000,1024,4,1000,,LS,Running,0,20000000,0\n"
	// A price series of two hours.
	shortPrice     = "Datetime (UTC),Price (USD/MWh)\n2023-01-01 00:00:00+00:00,30\n2023-01-01 01:00:00+00:00,31\n"
	replayPolicies = "policies:\n  - name: FGD\n    scorers: [{policy: fgd, weight: 1000}]\n"
)

// replayScenario is a replay of pods.csv on nodes.csv with extra YAML.
func replayScenario(extra string) string {
	return "name: t\nmode: replay\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\n" + replayPolicies + extra
}

var hostileReplay = []hostileCase{
	{name: "creation at 2^40 s past the price series", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": replayNodes, "pods.csv": latePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "grid: pod p1 takes the run to at least 305419896.6 h after simulated time 0 (36865-02-19 00:36:16 UTC), past the end of price_US-NY-NYIS_2023.csv at 8760 h"},
	{name: "duration of 2^40 s past the price series (compare)", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": replayNodes, "pods.csv": longPod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--seeds", "3"}, code: 1,
		errLine: "grid: pod p1 takes the run to at least 305419896.6 h"},
	{name: "pod longer than a user price file", files: map[string]string{"s.yaml": replayScenario("grid:\n  price: price.csv\n"), "nodes.csv": replayNodes, "pods.csv": podsHead + "p1,1000,1024,1,1000,,LS,Running,0,10800,0\n", "price.csv": shortPrice},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "price.csv at 2 h (2023-01-01 02:00:00 UTC): the run could not be priced"},
	{name: "pods that wait past the price series", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": replayNodes, "pods.csv": waitingPods},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "task 1 (b) ends at 11111.1 h, past the end of price_US-NY-NYIS_2023.csv at 8760.0 h after time 0"},
	{name: "grid start late in the series", files: map[string]string{"s.yaml": replayScenario("grid:\n  start: \"2023-12-31 23:00:00\"\n"), "nodes.csv": replayNodes, "pods.csv": onePod + "p2,1000,1024,1,1000,,LS,Running,0,7200,0\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "grid: pod p2 takes the run to at least 2.0 h after simulated time 0 (2024-01-01 01:00:00 UTC), past the end of price_US-NY-NYIS_2023.csv at 1 h"},
	{name: "0-GPU cluster warns", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": noGPUNodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 0,
		errLine: "warning: 1 of 1 pods can never start (1 fit no node even on the empty cluster, 0 exceed the power limit even on the idle cluster): p1 (p1: fits no node: no GPUs on 1 of 1 nodes)",
		stdout:  "FGD     1      0        0.0         0.0                0.0       -            -"},
	{name: "0-GPU cluster with --strict", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": noGPUNodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "--strict: 1 of 1 pods can never start"},
	{name: "gpu_spec and size matching no node warn", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": replayNodes, "pods.csv": unfitPods},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 0,
		errLine: "warning: 2 of 3 pods can never start (2 fit no node even on the empty cluster, 0 exceed the power limit even on the idle cluster): p2, p3 (p2: fits no node: GPU model not accepted on 1 of 1 nodes)",
		stdout:  "they count in tasks, never in started"},
	{name: "why a pod fits no node, tallied over the nodes", files: map[string]string{"s.yaml": replayScenario(""),
		"nodes.csv": replayNodes + "n2,64000,262144,0,\nn3,64000,262144,0,\nn4,500,262144,4,T4\n", "pods.csv": unfitPods},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "p2: fits no node: no GPUs on 2, GPU model not accepted on 1, insufficient cpu on 1 of 4 nodes"},
	{name: "gpu_spec matching no node with compare --strict", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": replayNodes, "pods.csv": unfitPods},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--seeds", "2", "--strict"}, code: 1,
		errLine: "--strict: 2 of 3 pods can never start"},
	{name: "power limit below idle", files: map[string]string{"s.yaml": replayScenario("power_limit:\n  watts: 100\n"), "nodes.csv": replayNodes, "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "power_limit: 100 W is below the cluster's idle power, 150 W: no pod could ever start"},
	{name: "power limit below the nodes' off power", files: map[string]string{"s.yaml": replayScenario("power_limit:\n  watts: 5\npower_down:\n  idle_after_s: 60\n  wake_s: 60\n  off_w: 10\n"), "nodes.csv": replayNodes, "pods.csv": onePod},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "power_limit: 5 W is below the cluster's power with every node off (1 x power_down.off_w 10 W), 10 W"},
	{name: "pod over the power limit on the idle cluster (--strict)", files: map[string]string{"s.yaml": replayScenario("power_limit:\n  watts: 600\n"), "nodes.csv": replayNodes, "pods.csv": onePod + "big,1000,1024,4,1000,,LS,Running,0,3600,0\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "--strict: 1 of 2 pods can never start (0 fit no node even on the empty cluster, 1 exceed the power limit even on the idle cluster): big (big: power budget: even on an idle cluster (150 W) this pod would add at least"},
	{name: "inflation pod that fits no node warns", files: map[string]string{"s.yaml": "name: t\nmode: inflation\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\nseeds: 1\n" + replayPolicies, "nodes.csv": replayNodes, "pods.csv": unfitPods},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 0,
		errLine: "warning: 2 of 3 pods can never start", stdout: "every draw of such a pod fails"},
	{name: "inflation pod that fits no node with --strict", files: map[string]string{"s.yaml": "name: t\nmode: inflation\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\nseeds: 1\n" + replayPolicies, "nodes.csv": replayNodes, "pods.csv": unfitPods},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--strict"}, code: 1,
		errLine: "--strict: 2 of 3 pods can never start"},
	{name: "catalog GPU of 1e30 W in the hardware section", files: map[string]string{"s.yaml": replayScenario("hardware:\n  gpus:\n    - {name: HOT, idle_w: 1e30, tdp_w: 1e30, memory_gib: 80, source: s}\n"), "nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,4,HOT\n", "pods.csv": onePod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "hardware: gpus[0] (HOT).idle_w: 1e+30 W, over the 100000 W bound on one device"},
	{name: "catalog GPU of 1e15 W in a --catalog file", files: map[string]string{"s.yaml": replayScenario(""), "nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,4,HOT\n", "pods.csv": onePod,
		"cat.yaml": "gpus:\n  - {name: HOT, idle_w: 1, tdp_w: 1e15, memory_gib: 80, source: s}\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--catalog", "{D}/cat.yaml"}, code: 1,
		errLine: "gpus[0] (HOT).tdp_w: 1e+15 W, over the 100000 W bound on one device"},
	{name: "catalog CPU of 1e20 W in a scenario's catalog file", files: map[string]string{"s.yaml": "catalog: cat.yaml\n" + replayScenario(""), "nodes.csv": replayNodes, "pods.csv": onePod,
		"cat.yaml": "cpus:\n  - {name: HOTCPU, idle_w: 1e20, tdp_w: 1e20, cores: 8, threads_per_core: 2, source: s}\n"},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1,
		errLine: "catalog cat.yaml: cpus[0] (HOTCPU).idle_w: 1e+20 W, over the 100000 W bound"},
}
