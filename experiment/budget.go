package experiment

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/scenario"
)

// Memory figures per unit of work, measured on the runs named beside each
// (peak resident set of the wattsched binary, /usr/bin/time -f %M, Go's
// default GOGC=100, so they include the garbage collector's headroom);
// docs/performance.md gives the commands and the table of every command's
// estimate against its measured peak. The estimate is their sum, kept
// above what was measured: each figure is the unit's cost where that unit
// dominates the peak, rounded up, so that every command's estimate is 1 to
// 1.5 times its peak.
const (
	// BaseBytes is the process before any run: the binary's touched
	// pages, the runtime, the catalogs (`wattsched --help`: 32.2 MiB; the
	// smallest runs peak at 40-43 MiB: coloc-eaco.yaml 40.4, a 1,000-pod
	// replay 42.9).
	BaseBytes = 40 << 20
	// RunBaseBytes is one run's fixed part (engine, placer, result
	// tables) while it goes on; NodeBytes each node of its cluster (node
	// state, power and score arrays; fitted with the replays of
	// examples/byo-replay.yaml on 200 nodes and mixed-h100-a100-l40s.yaml
	// on 140: 62.3 and 61.1 MiB, about 4 KB a node).
	RunBaseBytes = 2 << 20
	NodeBytes    = 2 << 10
)

// JobFigures are a job engine's memory figures: Run and Job while a run
// goes on (its fixed part and each job), JobKept and RunKept what a
// finished run keeps until the results are written.
type JobFigures struct {
	Run, Job, JobKept, RunKept int64
}

// The job engines' figures.
var (
	// HPCFigures: run -c examples/hpc-vahrm.yaml (10,000 jobs, 15 runs, 2
	// at once): 63-73 MiB, about 1.3 KB a job going; seeds 1 and 4 (15 and
	// 60 runs) differ by 6 MB, 13 bytes a job kept; reproduce vahrm --quick
	// (72 runs of 10,000 jobs): 67-87 MiB. Gavel's round-based co-location
	// timing uses them too (coloc-gavel-rounds.yaml: 41.3 MiB).
	HPCFigures = JobFigures{Run: 1 << 20, Job: 1536, JobKept: 32, RunKept: 64 << 10}
	// ColocFigures: the event-driven co-location engine (issue 39: 300,000
	// gavel-msr jobs, Poisson 800/h, 4,096 nodes, one seed: FIFO 351-366
	// MiB, EaCO 385 MiB, about 1.15 KB a job beyond the process; 30,000
	// jobs on 28 nodes 67.7 MiB); reproduce eaco --quick (48 runs of 250
	// jobs): 47.4 MiB.
	ColocFigures = JobFigures{Run: 1 << 20, Job: 1229, JobKept: 32, RunKept: 128 << 10}
	// ElasticFigures: the elastic engine holds its fitted throughput and
	// power models and per-round series for each run (run -c
	// examples/elastic-powerflow.yaml, 1,896 jobs, 12 runs: 63.3 MiB;
	// reproduce powerflow --quick, 35 sweep runs: 77.6 MiB, about 0.3 MiB
	// kept a run).
	ElasticFigures = JobFigures{Run: 8 << 20, Job: 1536, JobKept: 32, RunKept: 384 << 10}
)

// FiguresFor are the job figures of a scenario's mode (elastic, coloc;
// hpc and coloc's round-based timing otherwise).
func FiguresFor(s *scenario.Scenario) JobFigures {
	switch {
	case s.Mode == scenario.Elastic:
		return ElasticFigures
	case s.Mode == scenario.Coloc && (s.Coloc == nil || !s.Coloc.GavelRounds()):
		return ColocFigures
	}
	return HPCFigures
}

const (
	// HourBytes is one hour of simulated time in one run (the energy
	// ledger's hourly sum and its priced copy, 8 bytes each).
	HourBytes = 16
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

// Concurrent is the number of runs of n that go on at once with the
// given workers (GOMAXPROCS when <= 0), as Parallel runs them.
func Concurrent(n, workers int) int64 {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return int64(max(1, min(n, workers)))
}

// SatMul and SatAdd are products and sums that stop at MaxInt64 instead of
// wrapping, so an absurd input gives a huge estimate, never a small one.
func SatMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func SatAdd(xs ...int64) int64 {
	var s int64
	for _, x := range xs {
		if x > math.MaxInt64-s {
			return math.MaxInt64
		}
		s += x
	}
	return s
}

// ClampFloat converts a non-negative float count to int64, saturating.
func ClampFloat(x float64) int64 {
	if !(x < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(math.Ceil(x))
}

// EstimateJobs estimates a scenario of a job engine (modes hpc, elastic,
// coloc) with its mode's figures (FiguresFor): runs runs of jobs jobs
// each, min(workers, runs) going at once, every finished run kept until
// the results are written. what names the jobs' source for the message
// ("hpc.jobs: 10,000 jobs of nasa-ipsc").
func EstimateJobs(s *scenario.Scenario, what string, jobs, runs, workers int) Estimate {
	return Estimate{
		Bytes:  jobsBytes(FiguresFor(s), jobs, runs, workers),
		What:   fmt.Sprintf("mode %s would run %s jobs in each of %s runs", s.Mode, Commas(int64(jobs)), Commas(int64(runs))),
		Cause:  fmt.Sprintf("because of %s and %d seeds", what, s.Seeds),
		Remedy: "use fewer jobs, seeds or systems",
	}
}

// jobsBytes is the process, min(workers, runs) runs going and runs kept.
func jobsBytes(f JobFigures, jobs, runs, workers int) int64 {
	at := Concurrent(runs, workers)
	return SatAdd(BaseBytes, SatMul(at, SatAdd(f.Run, SatMul(int64(jobs), f.Job))),
		SatMul(int64(runs), SatAdd(f.RunKept, SatMul(int64(jobs), f.JobKept))))
}

// EstimateStudy estimates a paper study's runs of a job engine (reproduce
// eaco, vahrm, powerflow) with that engine's figures f: jobs jobs in each
// run, min(workers, runs) runs going at once, each finished run kept.
// study names the command ("reproduce vahrm"), what the flag or file that
// gives the jobs.
func EstimateStudy(study, what string, f JobFigures, jobs, runs, workers int) Estimate {
	return Estimate{
		Bytes:  jobsBytes(f, jobs, runs, workers),
		What:   fmt.Sprintf("%s would run %s jobs in each of %s runs", study, Commas(int64(jobs)), Commas(int64(runs))),
		Cause:  "because of " + what,
		Remedy: "use fewer jobs or seeds",
	}
}

// Commas writes n with thousands separators (62,000,000).
func Commas(n int64) string {
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
