package sim_test

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fifo"
	"github.com/wattsched/wattsched/policy/fifopacked"
	"github.com/wattsched/wattsched/policy/gandivapack"
	"github.com/wattsched/wattsched/sim"
	"github.com/wattsched/wattsched/trace/gavel"
)

// gavelRef is one run of Gavel's simulator (the header of
// testdata/gavel/reference.tsv gives the command): average JCT and
// makespan in seconds.
type gavelRef struct {
	trace   string
	gpus    int
	policy  string
	seed    uint64
	jct, ms float64
}

// readTSV returns the rows of a tab-separated test file, without comment
// lines and the header.
func readTSV(t testing.TB, name string, fields int) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "gavel", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	head := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if head {
			head = false
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) != fields {
			t.Fatalf("%s: %q has %d fields, want %d", name, line, len(fs), fields)
		}
		out = append(out, fs)
	}
	return out
}

func num(t testing.TB, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func readGavelRefs(t testing.TB) []gavelRef {
	var out []gavelRef
	for _, fs := range readTSV(t, "reference.tsv", 6) {
		out = append(out, gavelRef{fs[0], int(num(t, fs[1])), fs[2], uint64(num(t, fs[3])), num(t, fs[4]), num(t, fs[5])})
	}
	return out
}

// gavelJobs is an embedded Gavel trace as co-location jobs.
func gavelJobs(t testing.TB, name string, tp *gavel.Throughputs) []policy.ColocJob {
	t.Helper()
	tr, err := gavel.ClusterTrace(name)
	if !slices.Contains(gavel.ClusterTraces, name) {
		var f *os.File
		if f, err = os.Open(filepath.Join("testdata", "gavel", name+".trace")); err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, err = gavel.ReadTrace(name+".trace", f)
	}
	if err != nil {
		t.Fatal(err)
	}
	var jobs []policy.ColocJob
	for i, j := range tr {
		iso, ok := tp.Rate(j.Key())
		if !ok {
			t.Fatalf("%s line %d: no throughput for %v", name, j.Line, j.Key())
		}
		jobs = append(jobs, policy.ColocJob{ID: i, Submit: job.Time(math.Round(j.ArrivalSec * 1000)), Key: j.Key(), Steps: j.Steps, EpochSteps: j.Steps,
			IsoRate: iso, Deadline: policy.NoDeadline})
	}
	return jobs
}

func gavelTP(t testing.TB) *gavel.Throughputs {
	t.Helper()
	tp, err := gavel.Simulation("v100")
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func runGavelRounds(t testing.TB, tp *gavel.Throughputs, jobs []policy.ColocJob, pol string, gpus int, seed uint64) *sim.ColocResult {
	return runGavelTiming(t, tp, jobs, pol, gpus, seed, sim.GavelRounds)
}

func runGavelTiming(t testing.TB, tp *gavel.Throughputs, jobs []policy.ColocJob, pol string, gpus int, seed uint64, r sim.RoundTiming) *sim.ColocResult {
	t.Helper()
	deps := policy.ColocDeps{History: func() *coloc.History { return coloc.NewHistory(coloc.MeasuredFactors(tp, tp.Pairs), nil) }, Seed: seed}
	var s policy.ColocScheduler
	var err error
	switch pol {
	case "fifo":
		s, err = fifo.New(fifo.Args{}.Default(), deps)
	case "fifo_packed":
		s, err = fifopacked.New(fifopacked.Args{}.Default(), deps)
	case "gandiva":
		s, err = gandivapack.New(gandivapack.Args{}.Default(), deps)
	default:
		err = fmt.Errorf("unknown policy %s", pol)
	}
	if err != nil {
		t.Fatal(err)
	}
	truth := coloc.MeasuredFactors(tp, tp.Pairs)
	res, err := sim.RunColoc(jobs, s, sim.ColocOptions{Nodes: gpus / 8, GPUsPerNode: 8, GPUMemGiB: 16, Truth: truth.Pair, MaxShare: 2,
		Rounds: &r, Rates: tp.Pair})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestGavelRounds runs every configuration of testdata/gavel/reference.tsv
// (Gavel's three physical_cluster traces x 8, 32 and 224 V100 x FIFO,
// FIFO_packed and Gandiva, seed 0, and Gandiva with seeds 1 and 2) under
// timing gavel-rounds and compares average JCT and makespan with Gavel's
// simulator. The engine keeps Gavel's float clock, so they agree to
// rounding (the tolerance, 0.01%, is far below the 1% median and
// 5% worst case; a rule changed anywhere moves some row by more).
func TestGavelRounds(t *testing.T) {
	tp := gavelTP(t)
	for _, ref := range readGavelRefs(t) {
		t.Run(fmt.Sprintf("%s/%d/%s/seed%d", ref.trace, ref.gpus, ref.policy, ref.seed), func(t *testing.T) {
			res := runGavelRounds(t, tp, gavelJobs(t, ref.trace, tp), ref.policy, ref.gpus, ref.seed)
			if d := res.AvgJTTSec/ref.jct - 1; math.Abs(d) > 1e-4 {
				t.Errorf("avg JCT %.3f s, Gavel %.3f s (%+.3f%%)", res.AvgJTTSec, ref.jct, 100*d)
			}
			if d := res.Makespan.Seconds()/ref.ms - 1; math.Abs(d) > 1e-4 {
				t.Errorf("makespan %.3f s, Gavel %.3f s (%+.3f%%)", res.Makespan.Seconds(), ref.ms, 100*d)
			}
			// Gavel's log of each run of the generated traces shows one
			// "[Job failed]" (testdata/gavel/README.md); its own traces none.
			want := 0
			if strings.HasPrefix(ref.trace, "generated_") {
				want = 1
			}
			if res.Dropped != want {
				t.Errorf("%d jobs dropped, Gavel %d", res.Dropped, want)
			}
		})
	}
}

// TestGavelRoundsUnseen compares with runs of Gavel's simulator measured
// after the engine was written (testdata/gavel/reference_extra.tsv): four
// more of its traces, and 120 s rounds.
func TestGavelRoundsUnseen(t *testing.T) {
	tp := gavelTP(t)
	for _, fs := range readTSV(t, "reference_extra.tsv", 6) {
		gpus, round, jct, ms := int(num(t, fs[1])), num(t, fs[3]), num(t, fs[4]), num(t, fs[5])
		t.Run(fmt.Sprintf("%s/%d/%s/round%.0f", fs[0], gpus, fs[2], round), func(t *testing.T) {
			r := sim.GavelRounds
			r.Round = job.Time(round * 1000)
			res := runGavelTiming(t, tp, gavelJobs(t, fs[0], tp), fs[2], gpus, 0, r)
			if d := res.AvgJTTSec/jct - 1; math.Abs(d) > 1e-4 {
				t.Errorf("avg JCT %.3f s, Gavel %.3f s (%+.3f%%)", res.AvgJTTSec, jct, 100*d)
			}
			if d := res.Makespan.Seconds()/ms - 1; math.Abs(d) > 1e-4 {
				t.Errorf("makespan %.3f s, Gavel %.3f s (%+.3f%%)", res.Makespan.Seconds(), ms, 100*d)
			}
		})
	}
}

// TestGavelRoundsPerJob compares every job's completion time on
// artifact_evaluation.trace and one 8-V100 server with Gavel's (the
// command is in testdata/gavel/jobs_artifact_evaluation_8.tsv), within a
// millisecond of rounding per round.
func TestGavelRoundsPerJob(t *testing.T) {
	tp := gavelTP(t)
	jobs := gavelJobs(t, "artifact_evaluation", tp)
	want := map[string][]float64{}
	for _, fs := range readTSV(t, "jobs_artifact_evaluation_8.tsv", 3) {
		if int(num(t, fs[1])) != len(want[fs[0]]) {
			t.Fatalf("jobs_artifact_evaluation_8.tsv: %s job %s out of order", fs[0], fs[1])
		}
		want[fs[0]] = append(want[fs[0]], num(t, fs[2]))
	}
	for _, pol := range []string{"fifo", "fifo_packed", "gandiva"} {
		t.Run(pol, func(t *testing.T) {
			res := runGavelRounds(t, tp, jobs, pol, 8, 0)
			if len(want[pol]) != len(res.Jobs) {
				t.Fatalf("%d jobs, Gavel %d", len(res.Jobs), len(want[pol]))
			}
			for i, w := range want[pol] {
				if got := (res.Jobs[i].End - res.Jobs[i].Submit).Seconds(); math.Abs(got-w) > 0.05 {
					t.Errorf("job %d: JCT %.3f s, Gavel %.3f s", i, got, w)
				}
			}
		})
	}
}

// noAlloc gives every combination no share: nothing ever runs.
type noAlloc struct{}

func (noAlloc) ScheduleColoc(*policy.ColocState) policy.ColocDecision { return policy.ColocDecision{} }
func (noAlloc) AllocateRound(*policy.RoundState) []policy.RoundShare  { return nil }
func (noAlloc) RoundRules() policy.RoundRules                         { return policy.RoundRules{AllocatedOnly: true} }

// eventsOnly is a co-location scheduler without a round-based allocation.
type eventsOnly struct{}

func (eventsOnly) ScheduleColoc(*policy.ColocState) policy.ColocDecision {
	return policy.ColocDecision{}
}

// TestGavelRoundsRefuses: what the round engine refuses instead of
// looping or running wrongly, each with its reason.
func TestGavelRoundsRefuses(t *testing.T) {
	tp := gavelTP(t)
	base := gavelJobs(t, "artifact_evaluation", tp)[:3]
	fifoPol := func() policy.ColocScheduler {
		p, err := fifo.New(fifo.Args{}.Default(), policy.ColocDeps{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	packedPol := func() policy.ColocScheduler {
		p, err := fifopacked.New(fifopacked.Args{}.Default(), policy.ColocDeps{History: func() *coloc.History { return coloc.NewHistory(nil, nil) }})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		s    policy.ColocScheduler
		edit func([]policy.ColocJob)
		want string
	}{
		{"nothing ever runs", noAlloc{}, nil, "jobs wait and the allocation runs none of them"},
		{"no round-based allocation", eventsOnly{}, nil, "does not run under Gavel's round-based timing"},
		{"out of arrival order", fifoPol(), func(j []policy.ColocJob) { j[0].Submit = 5000 }, "job 1 arrives before job 0"},
		{"no step in a round", fifoPol(), func(j []policy.ColocJob) { j[1].IsoRate = 1e-4 }, "does no step in a 360 s round"},
		{"larger than the cluster", fifoPol(), func(j []policy.ColocJob) { j[2].Key.Scale = 16 }, "needs steps, an isolated rate, 1..8 GPUs"},
		// Three jobs of one type on 1 GPU arriving at 0 under FIFO_packed:
		// 3 alone + 3 pairs = 6 tracked, above the bound of 4 set below.
		{"too many tracked pairs", packedPol(), func(j []policy.ColocJob) {
			for i := range j {
				j[i].Key, j[i].IsoRate, j[i].Submit = base[0].Key, base[0].IsoRate, 0
			}
		}, "6 jobs and pairs tracked, above 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := append([]policy.ColocJob(nil), base...)
			if tc.edit != nil {
				tc.edit(jobs)
			}
			r := sim.GavelRounds
			r.MaxTracked = 4
			_, err := sim.RunColoc(jobs, tc.s, sim.ColocOptions{Nodes: 1, GPUsPerNode: 8, GPUMemGiB: 16, Truth: coloc.MeasuredFactors(tp, tp.Pairs).Pair,
				MaxShare: 2, Rounds: &r, Rates: tp.Pair})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestGavelRoundsInvariants: energy is the sum of its parts, no more GPUs
// are busy than the cluster has, a run repeats byte for byte, and nodes
// that hold no job sleep when asked.
func TestGavelRoundsInvariants(t *testing.T) {
	tp := gavelTP(t)
	jobs := gavelJobs(t, "max_min_fairness", tp)
	p, _, err := coloc.FitPower(mustCal(t), 35, 300, 30, 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, sleep := range []bool{false, true} {
		run := func() *sim.ColocResult {
			s, err := gandivapack.New(gandivapack.Args{}.Default(), policy.ColocDeps{History: func() *coloc.History { return coloc.NewHistory(nil, nil) }, Seed: 0})
			if err != nil {
				t.Fatal(err)
			}
			r := sim.GavelRounds
			res, err := sim.RunColoc(jobs, s, sim.ColocOptions{Nodes: 4, GPUsPerNode: 8, GPUMemGiB: 16, Power: p, SleepIdle: sleep,
				Truth: coloc.MeasuredFactors(tp, tp.Pairs).Pair, MaxShare: 2, Timeline: true, Rounds: &r, Rates: tp.Pair})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		a, b := run(), run()
		if d := cmp.Diff(a, b); d != "" {
			t.Fatalf("sleep %v: two runs differ (-first +second):\n%s", sleep, d)
		}
		if sum := a.ActiveEnergy + a.IdleEnergy + a.SleepEnergy; math.Abs(float64(sum-a.Energy)) > 1e-6*float64(a.Energy) {
			t.Errorf("sleep %v: energy %v, parts sum to %v", sleep, a.Energy, sum)
		}
		if sleep != (a.SleepEnergy > 0) || a.IdleEnergy > 0 == sleep {
			t.Errorf("sleep %v: idle %v J, asleep %v J", sleep, a.IdleEnergy, a.SleepEnergy)
		}
		for _, pt := range a.Timeline {
			if pt.ActiveNodes > 4 || pt.Running > len(jobs) {
				t.Fatalf("sleep %v: %+v", sleep, pt)
			}
		}
		if a.Joins == 0 {
			t.Errorf("sleep %v: Gandiva ran no pair on an oversubscribed cluster", sleep)
		}
	}
}

func mustCal(t *testing.T) *coloc.Calibration {
	t.Helper()
	c, err := coloc.PaperCalibration()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGavelFailedJobs: Gavel's failed-round rule. Job 0 runs on 2 GPUs
// and has one step more than a round gives it, so its second round gives
// each GPU 1 // 2 = 0 steps: that round fails, and so does every later one
// (no step is credited); after MaxFailedAttempts (5) it is removed
// without a completion time and left out of the averages. Job 1 (1 GPU,
// three rounds' steps) completes. With IgnoreFailures job 0 finishes its
// last step.
func TestGavelFailedJobs(t *testing.T) {
	tp := gavelTP(t)
	k2, k1 := gavel.Key{Type: "ResNet-18 (batch size 32)", Scale: 2}, gavel.Key{Type: "ResNet-18 (batch size 32)", Scale: 1}
	r2, r1 := tp.Isolated[k2], tp.Isolated[k1]
	per2, per1 := math.Floor(r2*360), math.Floor(r1*360)
	jobs := []policy.ColocJob{
		{ID: 0, Key: k2, Steps: per2 + 1, EpochSteps: per2 + 1, IsoRate: r2, Deadline: policy.NoDeadline},
		{ID: 1, Key: k1, Steps: 3 * per1, EpochSteps: per1, IsoRate: r1, Deadline: policy.NoDeadline},
	}
	on := runGavelRounds(t, tp, jobs, "fifo", 8, 0)
	if on.Dropped != 1 || !on.Jobs[0].Dropped || on.Jobs[1].Dropped {
		t.Fatalf("dropped %d (%v, %v), want job 0 only", on.Dropped, on.Jobs[0].Dropped, on.Jobs[1].Dropped)
	}
	// Job 0 held its GPUs for one full round (per2 / r2 s) and five failed
	// ones of one step each (1 / r2 s).
	if got, want := on.Jobs[0].Run.Seconds(), per2/r2+5/r2; math.Abs(got-want) > 0.002 {
		t.Errorf("job 0 ran %.3f s, want %.3f (1 round + %d failed)", got, want, sim.MaxFailedAttempts)
	}
	// The averages are job 1's alone; the makespan is the later of job 1's
	// end and job 0's removal.
	if want := (on.Jobs[1].End - on.Jobs[1].Submit).Seconds(); on.AvgJTTSec != want {
		t.Errorf("avg JCT %.3f s, want job 1's %.3f", on.AvgJTTSec, want)
	}
	if on.Makespan != max(on.Jobs[0].End, on.Jobs[1].End) {
		t.Errorf("makespan %v, want the later of %v and %v", on.Makespan, on.Jobs[0].End, on.Jobs[1].End)
	}
	r := sim.GavelRounds
	r.IgnoreFailures = true
	off := runGavelTiming(t, tp, jobs, "fifo", 8, 0, r)
	if off.Dropped != 0 || off.Jobs[0].Dropped {
		t.Fatalf("rule off: %d dropped", off.Dropped)
	}
	if got, want := off.Jobs[0].Run.Seconds(), per2/r2+1/r2; math.Abs(got-want) > 0.002 {
		t.Errorf("rule off: job 0 ran %.3f s, want %.3f (its last step)", got, want)
	}
	if want := ((off.Jobs[0].End - off.Jobs[0].Submit) + (off.Jobs[1].End - off.Jobs[1].Submit)).Seconds() / 2; math.Abs(off.AvgJTTSec-want) > 1e-9 {
		t.Errorf("rule off: avg JCT %.3f, want both jobs' %.3f", off.AvgJTTSec, want)
	}
}
