package tasks

import (
	"math"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/scenario"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// budgetInputs is a cluster of n 8-GPU nodes and the given pods.
func budgetInputs(n int, pods ...job.Task) *Inputs {
	in := &Inputs{Pods: pods}
	for i := 0; i < n; i++ {
		in.Nodes = append(in.Nodes, cluster.NodeSpec{Name: "n", GPUs: 8, GPUModel: "V100M16"})
	}
	return in
}

func gpuPod(name string, count int, milli int64) job.Task {
	return job.Task{Name: name, Demand: job.Demand{GPUCount: count, GPUMilli: milli}}
}

func timedPod(submitS int64, workS float64) job.Task {
	t := gpuPod("p", 1, 500)
	t.Submit, t.Work = job.Time(submitS*1000), workS
	return t
}

func policies(n int) []scenario.PolicySpec { return make([]scenario.PolicySpec, n) }

func TestEstimateInflation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        *Inputs
		policies  int
		seeds     int
		target    float64
		workers   int
		wantBytes int64
		wantWhat  string
		wantCause string
	}{
		{
			// 10 nodes x 8 GPUs = 80,000 GPU milli; target 1.3: 104,000
			// milli requested; one pod of 1 milli: 104,000 tasks. One run:
			// base + 1 pod sampled (512 B) + (run + 10 nodes x (2 KiB + 1 class x 100 B) +
			// 104,000 tasks) + 1 kept run.
			name: "one pod of 1 milli", in: budgetInputs(10, gpuPod("p0", 1, 1)), policies: 1, seeds: 1, target: 1.3, workers: 4,
			wantBytes: 40*mib + 512 + (2*mib + 10*(2*kib+100) + 104000*kib) + 96*kib,
			wantWhat:  "inflation would hold about 104,000 tasks", wantCause: "because pod p0 asks for gpu_milli 1 (target 1.3 of 80,000 GPU milli)",
		},
		{
			// Pods of 100 and 300 milli: 200 milli a draw on average;
			// 1.0 x 80,000 / 200 = 400 tasks. 3 policies x 2 seeds = 6 runs,
			// 4 workers: 4 at once; 2 classes.
			name: "mean of two pods", in: budgetInputs(10, gpuPod("a", 1, 300), gpuPod("b", 1, 100)), policies: 3, seeds: 2, target: 1, workers: 4,
			wantBytes: 40*mib + 2*512 + 4*(2*mib+10*(2*kib+2*100)+400*kib) + 6*96*kib,
			wantWhat:  "400 tasks in each of 4 runs going at once", wantCause: "200 GPU milli on average (smallest: pod b, gpu_milli 100",
		},
		{
			// A pod without GPU counts in the mean: (0 + 2,000) / 2 = 1,000
			// milli a draw: 2 x 80,000 / 1,000 = 160 tasks; 1 run.
			name: "whole GPUs and a CPU pod", in: budgetInputs(10, gpuPod("cpu", 0, 0), gpuPod("w", 2, 1000)), policies: 1, seeds: 1, target: 2, workers: 2,
			wantBytes: 40*mib + 2*512 + (2*mib + 10*(2*kib+2*100) + 160*kib) + 96*kib,
			wantWhat:  "about 160 tasks", wantCause: "smallest: pod w, num_gpu 2",
		},
		{
			// 9 policies x 1,000 seeds keep 9,000 x 96 KiB = 843.8 MiB of
			// curves, more than 2 runs of 8,000 tasks going (2 x 10.0 MiB):
			// the runs drive it. 1 x 800,000 / 100 = 8,000 tasks.
			name: "many runs", in: budgetInputs(100, gpuPod("s", 1, 100)), policies: 9, seeds: 1000, target: 1, workers: 2,
			wantBytes: 40*mib + 512 + 2*(2*mib+100*(2*kib+100)+8000*kib) + 9000*96*kib,
			wantWhat:  "keep the curves of 9,000 runs", wantCause: "because of 9 policies x 1000 seeds",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scenario.Scenario{Mode: scenario.Inflation, Policies: policies(tc.policies), Seeds: tc.seeds, Target: tc.target}
			e := EstimateInflation(s, tc.in, tc.workers)
			if e.Bytes != tc.wantBytes {
				t.Errorf("bytes %d, want %d", e.Bytes, tc.wantBytes)
			}
			if !strings.Contains(e.What, tc.wantWhat) || !strings.Contains(e.Cause, tc.wantCause) {
				t.Errorf("%q %q, want %q and %q", e.What, e.Cause, tc.wantWhat, tc.wantCause)
			}
			if err := e.Check(tc.wantBytes); err != nil {
				t.Errorf("Check at exactly the estimate: %v", err)
			}
			err := e.Check(tc.wantBytes - 1)
			if err == nil || !strings.Contains(err.Error(), tc.wantCause) || !strings.Contains(err.Error(), "raise --max-memory") {
				t.Errorf("Check one byte below: %v, want an error naming %q", err, tc.wantCause)
			}
		})
	}
}

// TestEstimateIssueCase: the issue's one-pod list of gpu_milli 1 on the
// openb cluster (6,212 GPUs) at target 10 needs 62,120,000 tasks, about 60
// GiB, refused at 12 GiB; the estimate never wraps, however absurd the
// input.
func TestEstimateIssueCase(t *testing.T) {
	in := &Inputs{Pods: []job.Task{gpuPod("p0", 1, 1)}, Nodes: []cluster.NodeSpec{{GPUs: 6212}}}
	s := &scenario.Scenario{Mode: scenario.Inflation, Policies: policies(1), Seeds: 1, Target: 10}
	e := EstimateInflation(s, in, 1)
	// 40 MiB + 512 B + 2 MiB + 1 node x (2 KiB + 100 B) + 62,120,000 KiB + 96 KiB
	if want := int64(40*mib + 512 + 2*mib + 2*kib + 100 + 62120000*kib + 96*kib); e.Bytes != want {
		t.Errorf("bytes %d, want %d", e.Bytes, want)
	}
	err := e.Check(12 * gib)
	want := "inflation would hold about 62,120,000 tasks (~59.3 GiB) because pod p0 asks for gpu_milli 1 (target 10 of 6,212,000 GPU milli): above --max-memory 12.0 GiB; raise --max-memory or use a coarser pod list or a lower target"
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	in.Nodes[0].GPUs = math.MaxInt32
	s.Policies, s.Seeds = policies(1000), 1000
	if e := EstimateInflation(s, in, 1<<30); e.Bytes != math.MaxInt64 {
		t.Errorf("absurd inflation: %d bytes, want saturation at MaxInt64", e.Bytes)
	}
}

func TestEstimateReplayCompare(t *testing.T) {
	// Two pods, the later ending at 7,000 s + 200 s = 7,200 s: 2 hours,
	// hourly series of 2 + 1 = 3 entries.
	in := budgetInputs(1, timedPod(0, 100), timedPod(7000, 200))
	// With power_down, compare adds no automatic power-down variant.
	s := &scenario.Scenario{Mode: scenario.Replay, Policies: policies(3), Seeds: 1000, PowerDown: &scenario.AutoPowerDown}
	r := EstimateReplay(s, in)
	// base + 2 pods read for a replay (2.5 KiB each) + 3 runs x (run + 1
	// node x 2 KiB + 2 pods x 2,688 B + 3 hours x 16 B)
	if want := int64(40*mib + 2*2560 + 3*(2*mib+2*kib+2*2688+3*16)); r.Bytes != want {
		t.Errorf("replay: %d bytes, want %d", r.Bytes, want)
	}
	c := EstimateCompare(s, in, 2)
	// base + 2 pods read + 3,000 runs x (256 KiB + 2 pods x 736 B + 3
	// hours x 16 B) kept + 3 systems x 3 hours x 640 B + 2 runs going x
	// (run + 1 node x 2 KiB + 6 MiB + 2 pods x 256 B + 4 MiB under power_down)
	if want := int64(40*mib + 2*kib + 3000*(256*kib+2*736+3*16) + 3*3*640 + 2*(2*mib+2*kib+6*mib+2*256+4*mib)); c.Bytes != want {
		t.Errorf("compare: %d bytes, want %d", c.Bytes, want)
	}
	if err := c.Check(42 * mib); err == nil || !strings.Contains(err.Error(), "3,000 runs (3 policies x 1000 seeds)") || !strings.Contains(err.Error(), "--seeds 1000") {
		t.Errorf("compare over the limit: %v", err)
	}
	// Variants multiply the policies: 3 policies under the scenario's
	// settings and a PUE variant, and the first policy under the
	// automatic power-down (no setting powers down): 3 + 3 + 1 = 7
	// systems x 10 seeds = 70 runs.
	v := &scenario.Scenario{Mode: scenario.Replay, Policies: policies(3), Seeds: 10, Variants: []scenario.VariantSpec{{Name: "pue", PUE: 1.5}}}
	cv := EstimateCompare(v, in, 2)
	if want := int64(40*mib + 2*kib + 70*(256*kib+2*736+3*16) + 7*3*640 + 2*(2*mib+2*kib+6*mib+2*256)); cv.Bytes != want {
		t.Errorf("compare with variants: %d bytes, want %d", cv.Bytes, want)
	}
	if err := cv.Check(42 * mib); err == nil || !strings.Contains(err.Error(), "70 runs (7 systems: 3 policies under 3 settings") {
		t.Errorf("compare with variants over the limit: %v", err)
	}
	// A pod at the documented maximum time (2^40 s) spans 305,419,897
	// hours: its hourly series alone is 4.6 GiB a run.
	far := budgetInputs(1, timedPod(1<<40, 0))
	if got := EstimateReplay(s, far).Bytes; got < 3*305419897*16 {
		t.Errorf("replay over 2^40 s: %d bytes, want at least 3 runs x 305,419,897 hours x 16 B", got)
	}
}
