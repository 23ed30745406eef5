package cli

import "strconv"

// hostileChecks: hostile inputs of this kind (issue 28); see hostile_test.go.
// Every check that can be made before a run of the hpc, elastic and coloc
// engines and their reproductions: overflowing products and ratios, jobs
// larger than the cluster, power limits below idle, unsupported
// frequencies; a reproduction skips what cannot run, saying why.
var hostileChecks = []hostileCase{
	{name: "hpc sr tiny", files: map[string]string{"s.yaml": hpcYAML("  sr: 1e-300\n")},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "s.yaml: invalid scenario"},
	// 0.001 passes validation, but stretches the whole NASA log's span
	// (about 3 months) to about 250 years, past the SWF reader's 1e9 s.
	{name: "hpc sr stretches span", files: map[string]string{"s.yaml": "name: t\nhpc: {swf: nasa-ipsc, sr: 0.001, workloads: [0], systems: [VU-FCFS]}\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "hpc.sr: shrink ratio 0.001 stretches the submit time of the log's last job"},
	// The first 20 NASA jobs at sr 0.001 are within the SWF bound but
	// arrive past the embedded price series' year: refused before the run
	// (it used to fail after 13 s on "hour 8760 ... is outside").
	{name: "hpc run outlasts price series", files: map[string]string{"s.yaml": hpcYAML("  sr: 0.001\n")},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "the job at hpc.swf nasa-ipsc line 52 (at sr 0.001) cannot end before hour 8794 of the run"},
	{name: "hpc procs_per_node huge", files: map[string]string{"s.yaml": hpcYAML("  procs_per_node: 9223372036854775807\n")},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "s.yaml: invalid scenario"},
	{name: "reproduce vahrm procs-per-node huge", files: map[string]string{"l.swf": "1 0 0 10 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n"},
		args: []string{"reproduce", "vahrm", "--swf", "{D}/l.swf", "--procs-per-node", "9223372036854775807", "-o", "{D}/out"}, code: 2, errLine: "--procs-per-node 9223372036854775807, want 1..10000000"},
	{name: "elastic job larger than cluster", files: map[string]string{"s.yaml": elasticYAML("", "[Gandiva]"), "j.csv": phillyCSV(33)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "elastic.jobs j.csv line 2: job 1 asks for 33 GPUs"},
	{name: "elastic power limit 1 W", files: map[string]string{"s.yaml": elasticYAML("power_limit: {watts: 1}\n", "[PowerFlow]"), "j.csv": phillyCSV(2)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "power limit 1 W is below the least power any job draws, 500.5 W"},
	{name: "elastic system limit below idle", files: map[string]string{"s.yaml": elasticYAML("", "[{name: P, policy: powerflow, predictions: fitted, power_limit: {tdp_fraction: 0.001}}]"), "j.csv": phillyCSV(2)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "elastic.systems[0] (P): power limit 12.8 W is below"},
	{name: "elastic frequency unsupported", files: map[string]string{"s.yaml": elasticYAML("", "[{name: G, policy: gandiva, args: {freq_mhz: 99999}}]"), "j.csv": phillyCSV(2)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "99999 MHz is not a supported frequency (855-1410 MHz)"},
	{name: "elastic zeus base frequency", files: map[string]string{"s.yaml": elasticYAML("", "[{name: Z, policy: zeus, args: {base: {policy: tiresias, args: {freq_mhz: 100}}}}]"), "j.csv": phillyCSV(2)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "(855-1410 MHz)"},
	{name: "elastic powerflow without predictions", files: map[string]string{"s.yaml": elasticYAML("", "[{name: P, policy: powerflow}]"), "j.csv": phillyCSV(2)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "elastic.systems[0] (P): powerflow args: powerflow: no predictor"},
	{name: "coloc per_hour tiny", files: map[string]string{"s.yaml": "name: t\ncoloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 1e-300, count: 3, systems: [FIFO]}\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "s.yaml: invalid scenario"},
	{name: "coloc arrival span", files: map[string]string{"s.yaml": "name: t\ncoloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 0.01, count: 1000000, systems: [FIFO]}\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "s.yaml: invalid scenario"},
	// 800 jobs at 0.01 per hour arrive over about 80,000 h: within the
	// span bound, past the price series' 8,760 h.
	{name: "coloc run outlasts price series", files: map[string]string{"s.yaml": "name: t\ncoloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 0.01, count: 800, systems: [FIFO]}\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "job 799 of seed 42 (arriving at 76989 h) cannot end before hour 76990"},
	{name: "elastic run outlasts price series", files: map[string]string{"s.yaml": elasticYAML("", "[Gandiva]\n  hours: 8784"), "j.csv": "timestamp,duration,num_gpus,gpu_time,cluster\n2017-01-01 00:00:00,60,1,60,x\n2018-01-01 10:00:00,60,1,60,x\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "the job at elastic.jobs j.csv line 3 cannot end before hour 8770"},
	{name: "coloc zero nodes", files: map[string]string{"s.yaml": "name: t\ncoloc: {jobs: gavel-msr, count: 3, nodes: 0, systems: [FIFO]}\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "line 2: coloc.nodes: 0; leave it out for the default"},
	{name: "reproduce eaco per-hour tiny", args: []string{"reproduce", "eaco", "--per-hour", "1e-300", "-o", "{D}/out"}, code: 2, errLine: "--per-hour 1e-300, want 0.01..10000"},
	{name: "reproduce eaco arrival span", args: []string{"reproduce", "eaco", "--per-hour", "0.01", "--jobs", "100000", "-o", "{D}/out"}, code: 2, errLine: "arrive over about 10000000 h"},
	// Worked on 2026-11-22, then failed with "event posted at
	// -9223372036854775808 ms": the one-job arrival streams are skipped.
	{name: "reproduce vahrm one job", args: []string{"reproduce", "vahrm", "--jobs", "1", "--quick", "-o", "{D}/out"}, code: 0,
		errLine: "Genuine arrivals: skipped seed 1: its 1 job(s) all arrive at one instant"},
	// One 64-GPU row: the sensitivity study's 4-node (32-GPU) cluster
	// used to fail the whole reproduction with "never finished".
	{name: "reproduce powerflow 64-GPU job", files: map[string]string{"j.csv": phillyCSV(64)},
		args: []string{"reproduce", "powerflow", "--quick", "--philly", "{D}/j.csv", "-o", "{D}/out"}, code: 0,
		errLine: "Sensitivity (Fig. 10) cluster_nodes=4: skipped"},
	// A PAI job planning 128 GPUs (plan_gpu 12800) runs on 64 (its DNN's
	// largest count): it fits the main 24-node cluster, not the
	// sensitivity study's 4 nodes.
	{name: "reproduce powerflow PAI 128-GPU job", files: map[string]string{
		"jobs.csv":  "j1,i1,u,Terminated,1000,4600\nj2,i2,u,Terminated,1100,2000\n",
		"tasks.csv": "j1,t1,1,Terminated,1000,4600,100,10,12800,V100\nj2,t1,1,Terminated,1100,2000,100,10,100,V100\n"},
		args: []string{"reproduce", "powerflow", "--quick", "--pai-jobs", "{D}/jobs.csv", "--pai-tasks", "{D}/tasks.csv", "-o", "{D}/out"}, code: 0,
		errLine: "cluster_nodes=4: skipped 41 of 100 jobs larger than the 4-node cluster (32 GPUs): job j1 (line 1) asks for 128 GPUs, runs on 64"},
}

// hpcYAML is an hpc scenario on 20 NASA jobs with extra hpc fields.
func hpcYAML(extra string) string {
	return "name: t\nhpc:\n  swf: nasa-ipsc\n  jobs: 20\n  workloads: [0]\n  systems: [VU-FCFS]\n" + extra
}

// elasticYAML is an elastic scenario over j.csv on 4 nodes (32 GPUs).
func elasticYAML(top, systems string) string {
	return "name: t\n" + top + "elastic:\n  jobs: j.csv\n  nodes: 4\n  systems: " + systems + "\n"
}

// phillyCSV is a Philly table of one job on gpus GPUs and one on 1.
func phillyCSV(gpus int) string {
	return "timestamp,duration,num_gpus,gpu_time,cluster\n" +
		"2017-10-13 00:00:06,3526.0," + strconv.Itoa(gpus) + ",3526.0,x\n" +
		"2017-10-13 00:10:06,1800.0,1,1800.0,x\n"
}
