package experiment

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/scenario"
)

// Memory figures per unit of work, measured on the runs named beside each
// (peak resident set of the wattsched binary, /usr/bin/time -v, Go's
// default GOGC=100, so they include the garbage collector's headroom);
// docs/performance.md gives the commands. The estimate is their sum, kept
// on the high side of what was measured.
const (
	// baseBytes is the process before any run: the binary, embedded
	// traces, catalogs and price series (39 MB at one inflation run of
	// 8,000 tasks).
	baseBytes = 64 << 20
	// runBaseBytes is one run's cluster, placer and score caches on the
	// 1213-node openb cluster, held while the run is going.
	runBaseBytes = 16 << 20
	// inflationTaskBytes is one inflation task held while its run goes on:
	// the drawn sequence, the engine's task record and the sample after its
	// arrival (one-pod lists on the 1213-node cluster at target 1.3:
	// gpu_milli 20, 404,000 tasks: 358 MB; gpu_milli 10, 808,000 tasks: 730
	// MB, about 900 bytes a task).
	inflationTaskBytes = 1024
	// inflationRunBytes is what a finished inflation run keeps until the
	// results are written: its curves at each percent of load, the FGD
	// simulator's allocation curve and its share of the result files
	// (reproduce pwr: 2 seeds, 18 runs: 90 MB; 40 seeds, 360 runs: 111 MB,
	// about 63 KB a run).
	inflationRunBytes = 96 << 10
	// podInputBytes is one pod of the pod list as read (its record and its
	// job.Task).
	podInputBytes = 1024
	// replayPodBytes is one pod of one replay run, from the start of the
	// run to the written results (its record, samples, jobs.csv and
	// timeline.csv rows, plot points): 100,000 pods, 1 policy: 345 MB; 3
	// policies: 829 MB, about 2,400 bytes a pod and policy.
	replayPodBytes = 2560
	// comparePodBytes is one pod of one compare run kept until every run
	// is done (the engine's result: task record and samples): the openb
	// Default trace (8,152 pods), 3 policies, 2 seeds: 96 MB; 8 seeds: 171
	// MB, about 4.1 MB a run, 500 bytes a pod.
	comparePodBytes = 640
	// jobBytes is one job of a run of a job engine (hpc, elastic,
	// coloc) while the run goes on (hpc-vahrm.yaml, 10,000 jobs, 2 runs
	// at once: 58 MB, 1.4 KB a job; coloc, FIFO on jobs drawn from
	// gavel-msr: 3,000 jobs 40 MB, 30,000 jobs 71 MB, 1.2 KB a job);
	// jobKeptBytes what a
	// finished run keeps of each job (hpc-vahrm.yaml, seeds 1 and 4, 15
	// and 60 runs: 58 and 64 MB, 13 bytes a job).
	jobBytes     = 4096
	jobKeptBytes = 512
	// hourBytes is one hour of simulated time in one run (the energy
	// ledger's hourly sum and its priced copy, 8 bytes each).
	hourBytes = 16
)

// Estimate is what a run is expected to hold in memory, decided from its
// inputs before any work, and what drives it.
type Estimate struct {
	// Bytes is the estimated peak memory of the whole process.
	Bytes int64
	// What says what the run would hold ("inflation would hold about
	// 8,080,000 tasks"), Cause the input that drives it ("because pod p0
	// asks for gpu_milli 1") and Remedy what to change besides the limit.
	What, Cause, Remedy string
}

// Check returns nil when the estimate is within maxBytes (or maxBytes is
// 0: no limit), else an error naming what drives the estimate.
func (e Estimate) Check(maxBytes int64) error {
	if maxBytes <= 0 || e.Bytes <= maxBytes {
		return nil
	}
	msg := fmt.Sprintf("%s (~%s)", e.What, FormatBytes(e.Bytes))
	if e.Cause != "" {
		msg += " " + e.Cause
	}
	msg += fmt.Sprintf(": above --max-memory %s; raise --max-memory", FormatBytes(maxBytes))
	if e.Remedy != "" {
		msg += " or " + e.Remedy
	}
	return errors.New(msg)
}

// concurrent is the number of runs of n that go on at once with the
// given workers (GOMAXPROCS when <= 0), as Parallel runs them.
func concurrent(n, workers int) int64 {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return int64(max(1, min(n, workers)))
}

// satMul and satAdd are products and sums that stop at MaxInt64 instead of
// wrapping, so an absurd input gives a huge estimate, never a small one.
func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func satAdd(xs ...int64) int64 {
	var s int64
	for _, x := range xs {
		if x > math.MaxInt64-s {
			return math.MaxInt64
		}
		s += x
	}
	return s
}

// clampFloat converts a non-negative float count to int64, saturating.
func clampFloat(x float64) int64 {
	if !(x < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(math.Ceil(x))
}

// EstimateInflation estimates an inflation scenario: each run draws tasks
// until the requested GPU milli reaches target times the cluster's, so it
// holds about target * capacity / (mean GPU milli of a drawn pod) tasks;
// min(workers, runs) runs go on at once, and a finished run keeps only its
// curves.
func EstimateInflation(s *scenario.Scenario, in *Inputs, workers int) Estimate {
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
		return Estimate{Bytes: baseBytes} // SampleSequence refuses it
	}
	mean := sum / float64(len(in.Pods))
	tasks := clampFloat(s.Target * float64(capMilli) / mean)
	at := concurrent(runs, workers)
	going := satMul(at, satAdd(runBaseBytes, satMul(tasks, inflationTaskBytes)))
	kept := satMul(int64(runs), inflationRunBytes)
	e := Estimate{Bytes: satAdd(baseBytes, satMul(int64(len(in.Pods)), podInputBytes), going, kept)}
	if kept > going {
		e.What = fmt.Sprintf("inflation would keep the curves of %s runs", commas(int64(runs)))
		e.Cause = fmt.Sprintf("because of %d policies x %d seeds", len(s.Policies), s.Seeds)
		e.Remedy = "use fewer seeds or policies"
		return e
	}
	e.What = fmt.Sprintf("inflation would hold about %s tasks in each of %d runs going at once", commas(tasks), at)
	if at == 1 {
		e.What = fmt.Sprintf("inflation would hold about %s tasks", commas(tasks))
	}
	e.Remedy = "use a coarser pod list or a lower target"
	p := &in.Pods[small]
	share := fmt.Sprintf("gpu_milli %d", p.GPUMilli)
	if p.GPUCount > 1 {
		share = fmt.Sprintf("num_gpu %d", p.GPUCount)
	}
	if len(in.Pods) == 1 {
		e.Cause = fmt.Sprintf("because pod %s asks for %s (target %g of %s GPU milli)", p.Name, share, s.Target, commas(capMilli))
	} else {
		e.Cause = fmt.Sprintf("because the pods ask for %.4g GPU milli on average (smallest: pod %s, %s; target %g of %s GPU milli)",
			mean, p.Name, share, s.Target, commas(capMilli))
	}
	return e
}

// spanHours is the hours of simulated time a replay of pods covers (the
// latest end), the length of each run's hourly energy.
func spanHours(pods []job.Task) int64 {
	var end float64
	for i := range pods {
		end = max(end, float64(pods[i].Submit)/1000+pods[i].Work)
	}
	return clampFloat(end/3600) + 1
}

// EstimateReplay estimates a replay scenario: one run per policy, each
// holding every pod's record and results until they are written, and an
// hourly energy series over the trace's span.
func EstimateReplay(s *scenario.Scenario, in *Inputs) Estimate {
	pods, hours, runs := int64(len(in.Pods)), spanHours(in.Pods), int64(len(s.Policies))
	perRun := satAdd(runBaseBytes, satMul(pods, replayPodBytes), satMul(hours, hourBytes))
	return Estimate{
		Bytes:  satAdd(baseBytes, satMul(pods, podInputBytes), satMul(runs, perRun)),
		What:   fmt.Sprintf("replay would hold %d runs (policies) of %s pods over %s hours each", runs, commas(pods), commas(hours)),
		Cause:  "because of the pod list's size and span",
		Remedy: "replay fewer pods or a shorter span",
	}
}

// EstimateCompare estimates a compare run: systems x seeds runs (the
// systems are the policies crossed with the settings, CompareSystems),
// each kept (task records, samples, hourly energy) until every run is
// done, and min(workers, runs) of them going on at once.
func EstimateCompare(s *scenario.Scenario, in *Inputs, workers int) Estimate {
	pods, hours := int64(len(in.Pods)), spanHours(in.Pods)
	systems := len(CompareSystems(s))
	runs := systems * s.Seeds
	at := concurrent(runs, workers)
	kept := satAdd(satMul(pods, comparePodBytes), satMul(hours, hourBytes))
	working := satAdd(runBaseBytes, satMul(pods, replayPodBytes))
	what := fmt.Sprintf("compare would keep %s runs (%d policies x %d seeds) of %s pods over %s hours each",
		commas(int64(runs)), len(s.Policies), s.Seeds, commas(pods), commas(hours))
	remedy := "use fewer seeds or policies"
	if vs := s.CompareVariants(); len(vs) > 1 {
		what = fmt.Sprintf("compare would keep %s runs (%d systems: %d policies under %d settings, the automatic power-down with the first policy only; x %d seeds) of %s pods over %s hours each",
			commas(int64(runs)), systems, len(s.Policies), len(vs), s.Seeds, commas(pods), commas(hours))
		remedy = "use fewer seeds, policies or variants"
	}
	return Estimate{
		Bytes:  satAdd(baseBytes, satMul(pods, podInputBytes), satMul(int64(runs), kept), satMul(at, working)),
		What:   what,
		Cause:  fmt.Sprintf("because of --seeds %d", s.Seeds),
		Remedy: remedy,
	}
}

// EstimateJobs estimates a scenario of a job engine (modes hpc, elastic,
// coloc): runs runs of jobs jobs each, min(workers, runs) going at once,
// every finished run kept until the results are written. what names the
// jobs' source for the message ("hpc.jobs: 10,000 jobs of nasa-ipsc").
func EstimateJobs(s *scenario.Scenario, what string, jobs, runs, workers int) Estimate {
	at := concurrent(runs, workers)
	return Estimate{
		Bytes: satAdd(baseBytes, satMul(at, satAdd(runBaseBytes, satMul(int64(jobs), jobBytes))),
			satMul(int64(runs), satMul(int64(jobs), jobKeptBytes))),
		What:   fmt.Sprintf("mode %s would run %s jobs in each of %s runs", s.Mode, commas(int64(jobs)), commas(int64(runs))),
		Cause:  fmt.Sprintf("because of %s and %d seeds", what, s.Seeds),
		Remedy: "use fewer jobs, seeds or systems",
	}
}

// EstimateStudy estimates a paper study's runs of a job engine (reproduce
// eaco, vahrm, powerflow): jobs jobs in each run, min(workers, runs) runs
// going at once. A finished run keeps a summary, which the job engines'
// kept figure covers (jobKeptBytes a job); the elastic engine has no figure
// of its own, so the job engines' (measured on hpc and coloc) stands in for
// it. study names the command ("reproduce vahrm"), what the flag or file
// that gives the jobs.
func EstimateStudy(study, what string, jobs, runs, workers int) Estimate {
	at := concurrent(runs, workers)
	return Estimate{
		Bytes: satAdd(baseBytes, satMul(at, satAdd(runBaseBytes, satMul(int64(jobs), jobBytes))),
			satMul(int64(runs), satMul(int64(jobs), jobKeptBytes))),
		What:   fmt.Sprintf("%s would run %s jobs in each of %s runs", study, commas(int64(jobs)), commas(int64(runs))),
		Cause:  "because of " + what,
		Remedy: "use fewer jobs or seeds",
	}
}

// commas writes n with thousands separators (62,000,000).
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// byteUnits are the suffixes ParseBytes accepts, with their multipliers.
var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseBytes reads a memory size: a positive number with an optional unit,
// binary (KiB, MiB, GiB, TiB; K, M, G, T as Go's GOMEMLIMIT and
// Kubernetes quantities mean them) or decimal (KB, MB, GB, TB), case
// insensitive; a bare number is bytes. "4GiB", "500MB", "1.5G".
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || strings.ContainsAny(t, "xpn_") { // no hex, NaN, Inf, digit separators
		return 0, fmt.Errorf("memory size %q: want a number with an optional unit, such as 4GiB or 500MB", s)
	}
	b := x * mult
	if !(b >= 1) {
		return 0, fmt.Errorf("memory size %q: want at least 1 byte", s)
	}
	if b >= math.MaxInt64 {
		return 0, fmt.Errorf("memory size %q: too large", s)
	}
	return int64(b), nil
}

// FormatBytes writes a size in the largest binary unit that keeps it at
// least 1, with one decimal ("9.3 GiB", "512.0 MiB", "100 B").
func FormatBytes(b int64) string {
	const units = "KMGTPE"
	if b < 1024 {
		return fmt.Sprintf("%d B", b)
	}
	x, i := float64(b)/1024, 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", x, units[i])
}
