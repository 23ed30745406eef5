package cli

import "fmt"

// Scenario files of the bounds cases: an inflation of one pod on the
// openb cluster (6,212 GPUs), and a replay of the embedded openb Default
// trace under three policies.
const (
	boundsInflation = "name: tiny\nmode: inflation\ntrace: {pods: ./pods.csv, nodes: openb-gpu}\nseeds: 1\ntarget: %s\n" +
		"policies:\n  - name: BestFit\n    scorers: [{policy: bestfit, weight: 1000}]\n"
	boundsReplay = "name: rep\nmode: replay\ntrace: {pods: default}\npolicies:\n" +
		"  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}\n" +
		"  - {name: BestFit, scorers: [{policy: bestfit, weight: 1000}]}\n" +
		"  - {name: DotProd, scorers: [{policy: dotprod, weight: 1000}]}\n"
	onePodMilli = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,0,0,1,%d\n"
	// farPod is one replay pod created at the documented maximum time,
	// 2^40 s: 305 million hours of hourly energy a run.
	farPod = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p0,1000,1024,1,500,,LS,Running,1099511627000,1099511627776,\n"
)

// hostileBounds: runs refused before any work because their estimated
// memory or their counts are out of bounds (issue 28, item 2).
var hostileBounds = []hostileCase{
	{name: "inflation of gpu_milli 1 at target 10", files: map[string]string{"s.yaml": fmt.Sprintf(boundsInflation, "10"), "pods.csv": fmt.Sprintf(onePodMilli, 1)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--max-memory", "12GiB"}, code: 1,
		errLine: "inflation would hold about 62,120,000 tasks (~59.3 GiB) because pod p0 asks for gpu_milli 1 (target 10 of 6,212,000 GPU milli): above --max-memory 12.0 GiB"},
	{name: "inflation of gpu_milli 1 at the default target", files: map[string]string{"s.yaml": fmt.Sprintf(boundsInflation, "1.3"), "pods.csv": fmt.Sprintf(onePodMilli, 1)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--max-memory", "4GiB"}, code: 1,
		errLine: "8,075,600 tasks (~7.7 GiB) because pod p0 asks for gpu_milli 1"},
	{name: "inflation of whole GPUs fits", files: map[string]string{"s.yaml": fmt.Sprintf(boundsInflation, "1.3"), "pods.csv": fmt.Sprintf(onePodMilli, 1000)},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--max-memory", "1GiB"}, code: 0, stdout: "results in"},
	{name: "compare --seeds 1000 over the limit", files: map[string]string{"s.yaml": boundsReplay},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--seeds", "1000", "--max-memory", "8GiB"}, code: 1,
		// ~23.6 GiB with 2 runs going at once; the runs going depend on the
		// CPUs. 3 policies and the automatic power-down variant with FGD.
		errLine: "compare would keep 4,000 runs (4 systems: 3 policies under 2 settings, the automatic power-down with the first policy only; x 1000 seeds) of 8,152 pods over 3,586 hours each"},
	{name: "compare --seeds 1001", files: map[string]string{"s.yaml": boundsReplay},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--seeds", "1001"}, code: 2, errLine: "compare: --seeds 1001, want 1..1000"},
	{name: "compare --seeds 2^31-1", files: map[string]string{"s.yaml": boundsReplay},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--seeds", "2147483647"}, code: 2, errLine: "--seeds 2147483647"},
	{name: "compare --seeds 2^64", files: map[string]string{"s.yaml": boundsReplay},
		args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--seeds", "18446744073709551616"}, code: 2, errLine: "value out of range"},
	{name: "run --seeds 0", args: []string{"run", "-o", "{D}/out", "--seeds", "0"}, code: 2, errLine: "run: --seeds 0, want 1..1000"},
	{name: "run --seeds -1", args: []string{"run", "-o", "{D}/out", "--seeds", "-1"}, code: 2, errLine: "run: --seeds -1, want 1..1000"},
	{name: "scenario seeds 1001", files: map[string]string{"s.yaml": boundsReplay + "seeds: 1001\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: "invalid scenario"},
	{name: "replay of a pod at 2^40 s", files: map[string]string{"s.yaml": "name: far\nmode: replay\ntrace: {pods: ./pods.csv}\npolicies:\n  - {name: BestFit, scorers: [{policy: bestfit, weight: 1000}]}\n", "pods.csv": farPod},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--max-memory", "2GiB"}, code: 1,
		// The series' coverage is checked before the memory estimate (which
		// would be 1 run x 305,419,898 hours, ~4.6 GiB).
		errLine: "grid: pod p0 takes the run to at least 305419896.6 h"},
	{name: "--max-memory garbage", args: []string{"run", "-o", "{D}/out", "--max-memory", "lots"}, code: 2, errLine: `--max-memory: memory size "lots": want a number`},
	{name: "--max-memory 0", args: []string{"run", "-o", "{D}/out", "--max-memory", "0"}, code: 2, errLine: "want at least 1 byte"},
	{name: "--max-memory negative", args: []string{"compare", "-c", "{D}/s.yaml", "-o", "{D}/out", "--max-memory", "-4GiB"}, code: 2, errLine: "want at least 1 byte"},
	{name: "--max-memory NaN", args: []string{"reproduce", "pwr", "-o", "{D}/out", "--max-memory", "NaN"}, code: 2, errLine: "want a number"},
	{name: "--max-memory past int64", args: []string{"run", "-o", "{D}/out", "--max-memory", "1e30GiB"}, code: 2, errLine: "too large"},
	{name: "--max-memory too small for the demo", args: []string{"run", "-o", "{D}/out", "--max-memory", "64MiB"}, code: 1,
		errLine: "scenario pwr-default: inflation would hold about 10,816 tasks"},
	{name: "reproduce pwr --max-memory too small", args: []string{"reproduce", "pwr", "-o", "{D}/out", "--seeds", "1000", "--max-memory", "100MB"}, code: 1,
		errLine: "scenario pwr-default: inflation would"}, // keep 9,000 runs' curves, or on many CPUs hold many runs' tasks
	{name: "coloc of a million jobs x 1000 seeds", files: map[string]string{"s.yaml": "name: big\nseeds: 1000\ncoloc: {jobs: gavel-msr, arrivals: poisson, per_hour: 100, count: 1000000}\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--max-memory", "64GiB"}, code: 1,
		errLine: "mode coloc would run 1,000,000 jobs in each of 4,000 runs"},
	// Slotted runs are estimated (issue 40): CE-DLA's program over every
	// job and the lookahead drives it, refused before any workload is drawn:
	// 4 types x 384 periods x (2 x 100,000 + 3 x 3 models + 1) + 100,000
	// rejection columns = 307,315,360 columns.
	{name: "slotted of 100,000 jobs under 16GiB", files: map[string]string{"s.yaml": "name: big\nslotted:\n  jobs: {count: 100000}\n  lookahead: 384\n  replan_every: 4\n  systems: [{name: CE-DLA soft, policy: cedla, args: {mode: soft}}]\n"},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out", "--max-memory", "16GiB"}, code: 1,
		errLine: "CE-DLA would plan up to 100,000 jobs over 384 periods in each of 1 runs going at once (up to 307,315,360 columns a program)", errAlso: "because of slotted.jobs.count 100000, slotted.lookahead 384"},
	{name: "slotted example under --max-memory 100MiB", args: []string{"run", "-c", "../../examples/slotted-cedla.yaml", "-o", "{D}/out", "--max-memory", "100MiB"}, code: 1,
		errLine: "because of slotted.jobs.count 20, slotted.lookahead 24 (every job counted as waiting at once): above --max-memory 100.0 MiB"},
	// reproduce powerflow on its embedded Philly day was not estimated
	// (issue 40): --max-memory 1B ran the whole reproduction.
	// --quick counts its own 35 sweep runs (not the full sweep's 78).
	{name: "reproduce powerflow under --max-memory 50MiB", args: []string{"reproduce", "powerflow", "--quick", "-o", "{D}/out", "--max-memory", "50MiB"}, code: 1,
		errLine: "reproduce powerflow would run 1,896 jobs in each of 35 runs (~76.7 MiB) because of the embedded Philly day (1896 jobs)"},
	{name: "reproduce cedla under --max-memory 1GiB", args: []string{"reproduce", "cedla", "-o", "{D}/out", "--max-memory", "1GiB"}, code: 1,
		errLine: "because of reproduce cedla --seeds 3 (up to 400 jobs a run)"},
	{name: "reproduce cedla --seeds 2^31-1", args: []string{"reproduce", "cedla", "-o", "{D}/out", "--seeds", "2147483647"}, code: 2,
		errLine: "reproduce cedla: --seeds 2147483647, want 1..100"},
	{name: "reproduce cedla --seeds 0", args: []string{"reproduce", "cedla", "-o", "{D}/out", "--seeds", "0"}, code: 2, errLine: "want 1..100"},
	{name: "reproduce pwr --seeds 2^31-1", args: []string{"reproduce", "pwr", "-o", "{D}/out", "--seeds", "2147483647"}, code: 2,
		errLine: "reproduce pwr: --seeds 2147483647, want 1..1000"},
	{name: "reproduce eaco --seeds 101", args: []string{"reproduce", "eaco", "-o", "{D}/out", "--seeds", "101"}, code: 2, errLine: "want 1..100"},
	{name: "reproduce eaco --jobs 2^31-1", args: []string{"reproduce", "eaco", "-o", "{D}/out", "--jobs", "2147483647"}, code: 2, errLine: "want 1..100000"},
	{name: "reproduce vahrm --jobs 2^31-1", args: []string{"reproduce", "vahrm", "-o", "{D}/out", "--jobs", "2147483647"}, code: 2,
		errLine: "reproduce vahrm: --jobs 2147483647, want 1..1000000"},
	{name: "reproduce powerflow --hours 1e9", args: []string{"reproduce", "powerflow", "-o", "{D}/out", "--hours", "1e9"}, code: 2,
		errLine: "--hours 1e+09, want (0, 8784]"},
	{name: "reproduce powerflow --nodes 2^31-1", args: []string{"reproduce", "powerflow", "-o", "{D}/out", "--nodes", "2147483647"}, code: 2,
		errLine: "want 1..4096"},
	// The studies of job engines are estimated too, before any run.
	{name: "reproduce vahrm --jobs 1000000 under 1GiB", args: []string{"reproduce", "vahrm", "-o", "{D}/out", "--jobs", "1000000", "--max-memory", "1GiB"}, code: 1,
		errLine: "reproduce vahrm would run 1,000,000 jobs in each of 72 runs"},
	{name: "reproduce eaco --jobs 100000 under 256MiB", args: []string{"reproduce", "eaco", "-o", "{D}/out", "--jobs", "100000", "--max-memory", "256MiB"}, code: 1,
		errLine: "reproduce eaco would run 100,000 jobs in each of"},
}
