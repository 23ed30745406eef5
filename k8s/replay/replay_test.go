package replay

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
)

func TestMain(m *testing.M) { localkube.MainWithEtcd(m, false) }

// TestKwokReplay replays the 30-pod CI scenario through kube-scheduler on
// kwok nodes at 100x, with the score plugins' explain mode on, and checks
// it against the simulator's run: every pod bound, run and completed by
// kwok, with each plugin's explanation, the same pods started, the energy
// within 2% (the bind latency times the factor shifts starts by seconds
// on pods of minutes), each placement difference explained and none by
// kube-scheduler's own plugins, the outputs written as `wattsched run`
// writes them, and the same parity recomputed from observed.json.
func TestKwokReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and replays 30 pods (about 20 s)")
	}
	const factor = 100
	s, in, err := Load(filepath.Join("testdata", "small.yaml"), factor)
	if err != nil {
		t.Fatal(err)
	}
	env := Env("test")
	out, err := Replay(t, env, s, in, Options{Factor: factor, Log: t.Logf, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	pr, p := out.K8s[0], out.Parity[0]
	for k, ob := range pr.Pods {
		if ob.Bound.IsZero() || ob.Finished.IsZero() {
			t.Fatalf("pod %s (%s): bound %v, finished %v: kwok did not run it to completion", podName(k), in.Pods[k].Name, ob.Bound, ob.Finished)
		}
		// kwok's pod-complete stage held it for its duration / factor
		// (less the lag, up to 200 ms of wall-clock time on a loaded
		// machine, between kwok's watch and this test's seeing the bind).
		if run := ob.Finished.Sub(ob.Bound).Seconds() * factor; run < in.Pods[k].Work-0.2*factor {
			t.Errorf("pod %s ran %.1f simulated s, its duration is %.0f s", podName(k), run, in.Pods[k].Work)
		}
		// Explain on: each score plugin's explanation of the bind, naming
		// the pod's node.
		for _, sc := range s.Policies[0].Scorers {
			if x := ob.Explain[plugin[sc.Policy]]; x == nil || x.Chosen.Node != ob.Node {
				t.Errorf("pod %s on %s: %s explanation %+v", podName(k), ob.Node, plugin[sc.Policy], x)
			}
		}
	}
	if p.Placed != len(in.Pods) {
		t.Fatalf("%d of %d pods started in both runs", p.Placed, len(in.Pods))
	}
	if p.SameNode == 0 {
		t.Fatalf("no pod on the simulator's node: %+v", p)
	}
	diffs := 0
	for r, n := range p.Reasons {
		if reasonText[r] == "" {
			t.Errorf("reason %q has no explanation", r)
		}
		diffs += n
	}
	if diffs != len(p.Diffs) || p.SameNode+diffs != p.Placed {
		t.Fatalf("%d same + %d differences explained != %d placed", p.SameNode, diffs, p.Placed)
	}
	// Every difference has a cause outside kube-scheduler's own plugins:
	// a tie, an earlier difference, or a snapshot the watch cannot order.
	for _, d := range p.Diffs {
		if d.Reason == ReasonPlugin {
			k := slices.IndexFunc(in.Pods, func(t job.Task) bool { return t.Name == d.Task })
			t.Errorf("pod %s on %s (simulator: %s) is %q: kube-scheduler's explanations %+v", d.Task, d.K8sNode, d.SimNode, d.Reason, pr.Pods[k].Explain)
		}
	}
	if math.Abs(p.EnergyRel) > 0.02 || p.K8sKWh <= 0 {
		t.Fatalf("energy: simulator %.4f kWh, kube-scheduler %.4f kWh (%+.2f%%), want within 2%%", p.SimKWh, p.K8sKWh, 100*p.EnergyRel)
	}
	// The observed replay's waits include the bind latency times the factor.
	if p.K8sWaitS < p.SimWaitS/2 {
		t.Errorf("mean wait %.1f s in kube-scheduler, %.1f s in the simulator", p.K8sWaitS, p.SimWaitS)
	}
	t.Logf("\n%s", p.Text())

	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(dir, "test", s, in, out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "jobs.csv", "parity.json", "parity.txt", "sim/summary.json", "sim/jobs.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	jobs, _ := os.ReadFile(filepath.Join(dir, "jobs.csv"))
	simJobs, _ := os.ReadFile(filepath.Join(dir, "sim", "jobs.csv"))
	jl, sl := strings.Split(strings.TrimSpace(string(jobs)), "\n"), strings.Split(strings.TrimSpace(string(simJobs)), "\n")
	if len(jl) != len(in.Pods)+1 || jl[0] != sl[0] {
		t.Fatalf("jobs.csv: %d lines, header %q; the simulator's: %q", len(jl), jl[0], sl[0])
	}
	var sum struct {
		Policies []struct {
			Started   int     `json:"started"`
			EnergyKWh float64 `json:"energy_kwh"`
		} `json:"policies"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Policies) != 1 || sum.Policies[0].Started != len(in.Pods) || math.Abs(sum.Policies[0].EnergyKWh-p.K8sKWh) > 1e-3 {
		t.Fatalf("summary.json: %v %s", err, b)
	}
	if err := Write(dir, "test", s, in, out); err == nil {
		t.Fatal("Write over an existing directory succeeded")
	}
	// observed.json gives the same parity without a cluster.
	again, err := Recompute(env, s, in, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(out.Parity)
	got, _ := json.Marshal(again.Parity)
	if string(got) != string(want) {
		t.Fatalf("parity recomputed from observed.json:\n%s\nwant\n%s", got, want)
	}
	other := *s
	other.Name = "another"
	if _, err := Recompute(env, &other, in, dir, Options{}); err == nil || !strings.Contains(err.Error(), "observed.json") {
		t.Errorf("observed.json of scenario %q recomputed as %q: %v", s.Name, other.Name, err)
	}
}

// TestRefused: scenarios the kwok replay cannot express are refused by
// Load, before an API server starts or a pod is created, naming the field.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile(filepath.Join("testdata", "small.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"small-nodes.csv", "small-pods.csv"} {
		b, _ := os.ReadFile(filepath.Join("testdata", f))
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	cases := map[string]struct {
		edit func(string) string
		want string
	}{
		"power_down":   {func(s string) string { return s + "power_down: {idle_after_s: 600, wake_s: 60, off_w: 10}\n" }, "power_down"},
		"power_limit":  {func(s string) string { return s + "power_limit: {watts: 5000}\n" }, "power_limit"},
		"head_of_line": {func(s string) string { return s + "gangs: {backfill: false}\n" }, "gangs.backfill"},
		"group_by":     {func(s string) string { return s + "gangs: {group_by: gpu_model}\n" }, "gangs.group_by"},
		"scorer": {func(s string) string {
			return strings.Replace(s, "{policy: pwr, weight: 200}", "{policy: eaco, weight: 200}", 1)
		}, "has no kube-scheduler plugin"},
		"reference_gpu": {func(s string) string {
			return strings.Replace(s, "  pods: small-pods.csv\n", "  pods: small-pods.csv\n  reference_gpu: V100M32\n", 1)
		}, "reference_gpu"},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(c.edit(string(base))), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Load(p, 100)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error naming %q", name, err, c.want)
		}
	}
	if _, _, err := Load(filepath.Join("testdata", "small.yaml"), 0); err == nil || !strings.Contains(err.Error(), "time factor") {
		t.Errorf("factor 0: %v", err)
	}
	if _, _, err := Load(filepath.Join("..", "..", "examples", "hpc-vahrm.yaml"), 100); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("hpc scenario: %v", err)
	}
}
