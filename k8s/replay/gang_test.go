package replay

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

// TestKwokReplayGangs replays testdata/gangs.yaml (12 pods, three gang
// jobs, each arriving when the cluster has room for it whole) through
// kube-scheduler on kwok nodes at 100x: every pod is bound and run to
// completion; a gang's pods are created together (when its last pod
// arrives, 25 s, 80 s and 420 s), carry the gang's label and finish
// together (the gang's longest duration); every gang is bound whole and
// started whole in the accounting; the energy is within 2% of the
// simulator's and every placement difference is explained, none by
// kube-scheduler's own plugins.
func TestKwokReplayGangs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and replays 12 pods (about 10 s)")
	}
	const factor = 100
	s, in, err := Load(filepath.Join("testdata", "gangs.yaml"), factor)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Replay(t, Env("test"), s, in, Options{Factor: factor, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	pr, p := out.K8s[0], out.Parity[0]
	t.Logf("\n%s", p.Text())
	byGang := map[string][]int{}
	for k, ob := range pr.Pods {
		if ob.Bound.IsZero() || ob.Finished.IsZero() {
			t.Fatalf("pod %s (%s): bound %v, finished %v", podName(k), in.Pods[k].Name, ob.Bound, ob.Finished)
		}
		if g := in.Pods[k].Gang; g != "" {
			byGang[g] = append(byGang[g], k)
		}
	}
	arrive := map[string]job.Time{"ga": 25000, "gb": 80000, "gc": 420000}
	for g, ks := range byGang {
		first := pr.Pods[ks[0]]
		for _, k := range ks {
			ob := pr.Pods[k]
			// Created together, at the last pod's arrival (the replay
			// sleeps until then: 0.25 s, 0.8 s, 4.2 s after its start).
			if d := ob.Created.Sub(pr.Start) - time.Duration(arrive[g]/factor)*time.Millisecond; d < 0 || d > 500*time.Millisecond {
				t.Errorf("gang %s pod %s created %v after its gang's arrival", g, in.Pods[k].Name, d)
			}
			if d := ob.Created.Sub(first.Created); d.Abs() > 200*time.Millisecond {
				t.Errorf("gang %s: pods created %v apart", g, d)
			}
			// Finished together: each runs for the gang's longest
			// duration, from its own bind.
			if d := ob.Finished.Sub(first.Finished) - ob.Bound.Sub(first.Bound); d.Abs() > 300*time.Millisecond {
				t.Errorf("gang %s pod %s: finished %v apart from its bind spread", g, in.Pods[k].Name, d)
			}
		}
	}
	if p.Gangs == nil || p.Gangs.Gangs != 3 || p.Gangs.Whole != 3 || p.Gangs.Partial != 0 {
		t.Fatalf("gangs: %+v, want 3 bound whole", p.Gangs)
	}
	// The accounting started each gang whole, all its pods at once.
	for _, ks := range byGang {
		var start job.Time = -2
		for _, k := range ks {
			r := pr.Run.Result.Tasks[k]
			if start == -2 {
				start = r.Start
			}
			if r.Start < 0 || r.Start != start {
				t.Errorf("accounting: %s started at %d, its gang at %d", in.Pods[k].Name, r.Start, start)
			}
		}
	}
	if p.Placed != len(in.Pods) {
		t.Fatalf("%d of %d pods started in both runs", p.Placed, len(in.Pods))
	}
	diffs := 0
	for r, n := range p.Reasons {
		if reasonText[r] == "" {
			t.Errorf("reason %q has no explanation", r)
		}
		if r == ReasonPlugin {
			t.Errorf("%d pods placed otherwise by kube-scheduler's own plugins: %+v", n, p.Diffs)
		}
		diffs += n
	}
	if p.SameNode+diffs != p.Placed {
		t.Fatalf("%d same + %d differences explained != %d placed", p.SameNode, diffs, p.Placed)
	}
	if math.Abs(p.EnergyRel) > 0.02 || p.K8sKWh <= 0 {
		t.Fatalf("energy: simulator %.4f kWh, kube-scheduler %.4f kWh (%+.2f%%), want within 2%%", p.SimKWh, p.K8sKWh, 100*p.EnergyRel)
	}
	if !strings.Contains(p.Text(), "gangs: 3, bound whole 3") {
		t.Errorf("parity text without its gang line:\n%s", p.Text())
	}
}

// A gang bound in part (no gang mechanism in the scheduler) is not
// started in the accounting, and the parity gives its pods their own
// reason: here gang g's second pod was never bound.
func TestGangPartialIsExplained(t *testing.T) {
	pods := []job.Task{
		{ID: 0, Name: "g-0", Gang: "g", GangSize: 2, Submit: 0, Work: 10, Demand: job.Demand{GPUCount: 1, GPUMilli: 1000, CPUMilli: 1000}},
		{ID: 1, Name: "g-1", Gang: "g", GangSize: 2, Submit: 0, Work: 10, Demand: job.Demand{GPUCount: 1, GPUMilli: 1000, CPUMilli: 1000}},
		{ID: 2, Name: "s", Submit: 0, Work: 10, Demand: job.Demand{GPUCount: 1, GPUMilli: 1000, CPUMilli: 1000}},
	}
	start := time.Unix(1000, 0)
	pr := &PolicyRun{Start: start, Pods: []Observed{{Node: "n", Bound: start}, {}, {Node: "n", Bound: start}}}
	gp, partial := gangParity(&tasks.Inputs{Pods: pods}, pr)
	if gp.Gangs != 1 || gp.Partial != 1 || !partial["g"] || len(gp.PartialGangs) != 1 {
		t.Fatalf("gang parity %+v %v", gp, partial)
	}
	// The accounting's scheduler starts s, and neither pod of g.
	queue := []*job.Task{&pods[0], &pods[1], &pods[2]}
	taken := map[job.ID]bool{}
	take := func(t *job.Task) (policy.Start, bool) {
		if pr.Pods[t.ID].Bound.IsZero() {
			return policy.Start{}, false
		}
		taken[t.ID] = true
		return policy.Start{Task: t.ID}, true
	}
	release := func(t *job.Task) { delete(taken, t.ID) }
	out, got := startGangs(queue, take, release, nil, nil)
	if len(out) != 0 || len(got) != 0 || len(taken) != 0 {
		t.Fatalf("started %v (taken %v) of a gang bound in part", out, taken)
	}
}
