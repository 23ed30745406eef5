package tasks

import (
	"fmt"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/scenario"
)

// Memory figures per unit of work of the task modes, measured as the
// kit's (experiment/budget.go) on the runs named beside each;
// docs/performance.md gives the commands.
const (
	// inflationTaskBytes is one inflation task held while its run goes on:
	// the drawn sequence, the engine's task record and the sample after its
	// arrival (one-pod lists on the 1213-node cluster at target 1.3:
	// gpu_milli 20, 404,000 tasks: 358 MB; gpu_milli 10, 808,000 tasks: 730
	// MB, about 900 bytes a task).
	inflationTaskBytes = 1024
	// classNodeBytes is one task class (a distinct demand: CPU, memory,
	// GPUs, GPU milli, GPU spec) on one node in an inflation run: the
	// placer's cached scores and its index group (policy.Placer: a row
	// of cacheEntry per class and node). The openb Default trace has 151
	// classes; its pwr-default runs (2 going on 1,213 nodes) peak at
	// 113.7 MiB, one-pod lists (one class) at 93.5 MiB for 80,800 tasks.
	classNodeBytes = 100
	// inflationRunBytes is what a finished inflation run keeps until the
	// results are written: its curves at each percent of load, the FGD
	// simulator's allocation curve and its share of the result files
	// (reproduce pwr: 2 seeds, 18 runs: 90 MB; 40 seeds, 360 runs: 111 MB,
	// about 63 KB a run).
	inflationRunBytes = 96 << 10
	// podInputBytes is one pod of the pod list as read (its record and its
	// job.Task); a replay holds more of each pod beside its runs
	// (replayInputBytes: the checks before the runs, the jobs' records and
	// speeds; the openb Default trace, 8,152 pods, replayed by 2 and 3
	// policies: 96-106 and 109-124 MiB, a fixed part of about 66 MiB where
	// the process alone is 40), and an inflation run only samples the list
	// (inflationInputBytes: examples/byo-hardware.yaml, the same 8,152
	// pods on 200 nodes: 41.4 MiB).
	podInputBytes       = 1024
	replayInputBytes    = 2560
	inflationInputBytes = 512
	// replayPodBytes is one pod of one replay run, from the start of the
	// run to the written results (its record, samples, jobs.csv and
	// timeline.csv rows, plot points): 100,000 pods, 1 policy: 345 MB; 3
	// policies: 829 MB, about 2,400 bytes a pod and policy; the openb
	// Default trace (8,152 pods on 1,213 nodes), 2 and 3 policies: 96-106
	// and 109-124 MiB, about 17 MiB a run; 100,000 pods cycled from it
	// over the same 3,586 hours, 1 policy: 412.8 MiB; replay-powerdown.yaml
	// (3 policies) once peaked at 134.7 MiB (113.5-118.2 in two more runs).
	replayPodBytes = 2688
	// compareWorkBytes and compareWorkPodBytes are a compare run's fixed
	// part and each pod while it goes on (the engine's records; what it
	// keeps is compareRunBytes and comparePodBytes), beside runBytes:
	// compare of examples/byo-replay.yaml (5 systems, 1,359 pods) and
	// mixed-h100-a100-l40s.yaml (6 systems) peak at 57-80 and 58-62
	// MiB, replay-openb.yaml's (4 systems, 8,152 pods) at 69-78 MiB (two
	// runs go at once; which overlap, and when the collector runs,
	// moves the peak).
	compareWorkBytes    = 6 << 20
	compareWorkPodBytes = 256
	// comparePowerDownBytes is what a compare run going under the
	// scenario's power_down holds beside: byo-replay.yaml's compare (every
	// system powers idle nodes down) peaked at 57-83 MiB against 58-75 for
	// mixed-h100-a100-l40s.yaml's, which has more systems and no
	// power_down.
	comparePowerDownBytes = 4 << 20
	// comparePodBytes and compareRunBytes are one pod and the rest of one
	// compare run kept until every run is done (the engine's result and
	// samples; its hourly energy at experiment.HourBytes an hour), and
	// compareHourBytes one hour of the trace's span for each system (a
	// policy under a setting: its hourly series over the seeds, its line
	// of the power plot). Measured as peak RSS over PUE variants of one
	// policy and one seed (a system and a run each; issue 40, where 200
	// variants were estimated at 237 MiB and peaked at 1.99 GB): 60 pods
	// over 9 hours, 1 and 200 variants: 27.7 and 88.7 MB, 0.31 MB a
	// system; the same pods over 3,543 hours, 1 and 50 variants: 37.7 and
	// 142.1 MB, 2.13 MB a system, about 515 bytes an hour; the openb
	// Default trace (8,152 pods, 3,586 hours), 10 and 30 variants: 117.9
	// and 275.7 MB, 7.9 MB a system, so about 700 bytes a pod; seeds, not
	// systems (examples/byo-replay.yaml, 1,359 pods over 3,586 hours, 4
	// policies, 1 and 20 seeds: 49.8 and 145.0 MB), 1.25 MB a run.
	comparePodBytes  = 736
	compareHourBytes = 640
	compareRunBytes  = 256 << 10
)

// EstimateInflation estimates an inflation scenario: each run draws tasks
// until the requested GPU milli reaches target times the cluster's, so it
// holds about target * capacity / (mean GPU milli of a drawn pod) tasks;
// min(workers, runs) runs go on at once, and a finished run keeps only its
// curves.
func EstimateInflation(s *scenario.Scenario, in *Inputs, workers int) experiment.Estimate {
	var capMilli int64
	for _, n := range in.Nodes {
		capMilli += int64(n.GPUs) * job.MilliPerGPU
	}
	var sum float64
	small := -1
	for i := range in.Pods {
		g := in.Pods[i].TotalGPUMilli()
		sum += float64(g)
		if g > 0 && (small < 0 || g < in.Pods[small].TotalGPUMilli()) {
			small = i
		}
	}
	runs := len(s.Policies) * s.Seeds
	if sum == 0 || len(in.Pods) == 0 {
		return experiment.Estimate{Bytes: experiment.BaseBytes} // SampleSequence refuses it
	}
	mean := sum / float64(len(in.Pods))
	tasks := experiment.ClampFloat(s.Target * float64(capMilli) / mean)
	at := experiment.Concurrent(runs, workers)
	perNode := experiment.SatAdd(experiment.NodeBytes, experiment.SatMul(classes(in.Pods), classNodeBytes))
	run := experiment.SatAdd(experiment.RunBaseBytes, experiment.SatMul(int64(len(in.Nodes)), perNode))
	going := experiment.SatMul(at, experiment.SatAdd(run, experiment.SatMul(tasks, inflationTaskBytes)))
	kept := experiment.SatMul(int64(runs), inflationRunBytes)
	e := experiment.Estimate{Bytes: experiment.SatAdd(experiment.BaseBytes, experiment.SatMul(int64(len(in.Pods)), inflationInputBytes), going, kept)}
	if kept > going {
		e.What = fmt.Sprintf("inflation would keep the curves of %s runs", experiment.Commas(int64(runs)))
		e.Cause = fmt.Sprintf("because of %d policies x %d seeds", len(s.Policies), s.Seeds)
		e.Remedy = "use fewer seeds or policies"
		return e
	}
	e.What = fmt.Sprintf("inflation would hold about %s tasks in each of %d runs going at once", experiment.Commas(tasks), at)
	if at == 1 {
		e.What = fmt.Sprintf("inflation would hold about %s tasks", experiment.Commas(tasks))
	}
	e.Remedy = "use a coarser pod list or a lower target"
	p := &in.Pods[small]
	share := fmt.Sprintf("gpu_milli %d", p.GPUMilli)
	if p.GPUCount > 1 {
		share = fmt.Sprintf("num_gpu %d", p.GPUCount)
	}
	if len(in.Pods) == 1 {
		e.Cause = fmt.Sprintf("because pod %s asks for %s (target %g of %s GPU milli)", p.Name, share, s.Target, experiment.Commas(capMilli))
	} else {
		e.Cause = fmt.Sprintf("because the pods ask for %.4g GPU milli on average (smallest: pod %s, %s; target %g of %s GPU milli)",
			mean, p.Name, share, s.Target, experiment.Commas(capMilli))
	}
	return e
}

// maxClasses is policy.Placer's bound on the task classes it caches.
const maxClasses = 4096

// classes is the number of distinct demands among pods (at most
// maxClasses): the task classes a placer caches scores for.
func classes(pods []job.Task) int64 {
	type demand struct {
		cpu, mem, milli int64
		gpus            int
		spec            string
	}
	seen := map[demand]bool{}
	for i := range pods {
		p := &pods[i]
		seen[demand{p.CPUMilli, p.MemMiB, p.GPUMilli, p.GPUCount, p.SpecString()}] = true
		if len(seen) >= maxClasses {
			break
		}
	}
	return int64(len(seen))
}

// runBytes is one run's fixed part on a cluster of nodes nodes.
func runBytes(nodes int) int64 {
	return experiment.SatAdd(experiment.RunBaseBytes, experiment.SatMul(int64(nodes), experiment.NodeBytes))
}

// spanHours is the hours of simulated time a replay of pods covers (the
// latest end), the length of each run's hourly energy.
func spanHours(pods []job.Task) int64 {
	var end float64
	for i := range pods {
		end = max(end, float64(pods[i].Submit)/1000+pods[i].Work)
	}
	return experiment.ClampFloat(end/3600) + 1
}

// EstimateReplay estimates a replay scenario: one run per policy, each
// holding every pod's record and results until they are written, and an
// hourly energy series over the trace's span.
func EstimateReplay(s *scenario.Scenario, in *Inputs) experiment.Estimate {
	pods, hours, runs := int64(len(in.Pods)), spanHours(in.Pods), int64(len(s.Policies))
	perRun := experiment.SatAdd(runBytes(len(in.Nodes)), experiment.SatMul(pods, replayPodBytes), experiment.SatMul(hours, experiment.HourBytes))
	return experiment.Estimate{
		Bytes:  experiment.SatAdd(experiment.BaseBytes, experiment.SatMul(pods, replayInputBytes), experiment.SatMul(runs, perRun)),
		What:   fmt.Sprintf("replay would hold %d runs (policies) of %s pods over %s hours each", runs, experiment.Commas(pods), experiment.Commas(hours)),
		Cause:  "because of the pod list's size and span",
		Remedy: "replay fewer pods or a shorter span",
	}
}

// EstimateCompare estimates a compare run: systems x seeds runs (the
// systems are the policies crossed with the settings, CompareSystems),
// each kept (task records, samples, hourly energy) until every run is
// done, and min(workers, runs) of them going on at once.
func EstimateCompare(s *scenario.Scenario, in *Inputs, workers int) experiment.Estimate {
	pods, hours := int64(len(in.Pods)), spanHours(in.Pods)
	systems := len(CompareSystems(s))
	runs := systems * s.Seeds
	at := experiment.Concurrent(runs, workers)
	kept := experiment.SatAdd(compareRunBytes, experiment.SatMul(pods, comparePodBytes), experiment.SatMul(hours, experiment.HourBytes))
	series := experiment.SatMul(int64(systems), experiment.SatMul(hours, compareHourBytes))
	working := experiment.SatAdd(runBytes(len(in.Nodes)), compareWorkBytes, experiment.SatMul(pods, compareWorkPodBytes))
	if s.PowerDown != nil {
		working = experiment.SatAdd(working, comparePowerDownBytes)
	}
	what := fmt.Sprintf("compare would keep %s runs (%d policies x %d seeds) of %s pods over %s hours each",
		experiment.Commas(int64(runs)), len(s.Policies), s.Seeds, experiment.Commas(pods), experiment.Commas(hours))
	remedy := "use fewer seeds or policies"
	if vs := s.CompareVariants(); len(vs) > 1 {
		what = fmt.Sprintf("compare would keep %s runs (%d systems: %d policies under %d settings, the automatic power-down with the first policy only; x %d seeds) of %s pods over %s hours each",
			experiment.Commas(int64(runs)), systems, len(s.Policies), len(vs), s.Seeds, experiment.Commas(pods), experiment.Commas(hours))
		remedy = "use fewer seeds, policies or variants"
	}
	return experiment.Estimate{
		Bytes:  experiment.SatAdd(experiment.BaseBytes, experiment.SatMul(pods, podInputBytes), experiment.SatMul(int64(runs), kept), series, experiment.SatMul(at, working)),
		What:   what,
		Cause:  fmt.Sprintf("because of --seeds %d", s.Seeds),
		Remedy: remedy,
	}
}
