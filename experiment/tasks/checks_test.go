package tasks_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/scenario"
)

// writeScenario writes files into a temporary directory and loads s.yaml.
func writeScenario(t *testing.T, files map[string]string) *scenario.Scenario {
	t.Helper()
	d := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := scenario.Load(filepath.Join(d, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const checkPodsHead = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

// Pods that can never start are counted before the run (the first five
// named), kept in summary.json and the notes, and fail the run with
// Strict; waits are over the pods that started, and with none the mean is
// null, not 0.
func TestNeverStart(t *testing.T) {
	pods := checkPodsHead
	// 7 pods asking for a T4 on a V100 cluster, and one that fits.
	for i := range 7 {
		pods += fmt.Sprintf("t4-%d,1000,1024,1,1000,T4,LS,Running,0,60,0\n", i)
	}
	ok := "ok,1000,1024,1,1000,,LS,Running,0,60,0\n"
	files := func(pods string) map[string]string {
		return map[string]string{
			"s.yaml":    "name: t\nmode: replay\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\npolicies:\n  - name: FGD\n    scorers: [{policy: fgd, weight: 1000}]\n",
			"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,4,V100M32\n",
			"pods.csv":  pods,
		}
	}
	cases := []struct {
		name     string
		pods     string
		want     *tasks.NeverStart
		meanWait any // summary.json's mean_wait_s
	}{
		{"all fit", checkPodsHead + ok, nil, 0.0},
		{"seven never start", pods + ok, &tasks.NeverStart{Count: 7, NoNode: 7, First: []string{"t4-0", "t4-1", "t4-2", "t4-3", "t4-4"},
			Why: "t4-0: fits no node: GPU model not accepted on 1 of 1 nodes"}, 0.0},
		{"none starts", pods, &tasks.NeverStart{Count: 7, NoNode: 7, First: []string{"t4-0", "t4-1", "t4-2", "t4-3", "t4-4"},
			Why: "t4-0: fits no node: GPU model not accepted on 1 of 1 nodes"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := writeScenario(t, files(c.pods))
			in, err := tasks.LoadInputs(s)
			if err != nil {
				t.Fatal(err)
			}
			var notes []string
			env := testEnv()
			env.Note = func(f string, a ...any) { notes = append(notes, fmt.Sprintf(f, a...)) }
			runs, err := tasks.RunReplay(env, s, in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, in.NeverStart); diff != "" {
				t.Errorf("NeverStart (-want +got):\n%s", diff)
			}
			res, err := tasks.ReplayResults("test", s, in, runs)
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				NeverStart *tasks.NeverStart `json:"never_start"`
				Policies   []map[string]any  `json:"policies"`
			}
			if err := json.Unmarshal(res.Files["summary.json"], &sum); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, sum.NeverStart); diff != "" {
				t.Errorf("summary.json never_start (-want +got):\n%s", diff)
			}
			if got := sum.Policies[0]["mean_wait_s"]; got != c.meanWait {
				t.Errorf("mean_wait_s %v, want %v", got, c.meanWait)
			}
			warned := strings.Contains(strings.Join(notes, "\n"), "warning: 7 of ")
			noted := strings.Contains(strings.Join(res.Notes, "\n"), "Warning: 7 of ")
			if want := c.want != nil; warned != want || noted != want {
				t.Errorf("warning printed %v, in the report %v; want %v", warned, noted, want)
			}
			env.Strict = true
			_, err = tasks.RunReplay(env, s, in)
			if want := c.want != nil; (err != nil) != want || want && !strings.Contains(err.Error(), "--strict: 7 of ") {
				t.Errorf("strict: %v, want an error %v", err, want)
			}
		})
	}
}

// A measured recording that ends before simulated time 0 is refused before
// the run; one that covers it is accepted.
func TestRecordingMustReachTheRun(t *testing.T) {
	rec, err := os.ReadFile("../../examples/data/measured-dcgm.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ start, want string }{
		{"2023-05-21 00:00:00", ""},
		{"2024-06-01 00:00:00", "end before the run begins (simulated time 0 is measured.start 2024-06-01T00:00:00Z)"},
	} {
		t.Run(c.start, func(t *testing.T) {
			s := writeScenario(t, map[string]string{
				"s.yaml": "name: t\nmode: replay\ntrace:\n  pods: pods.csv\npolicies:\n  - name: FGD\n    scorers: [{policy: fgd, weight: 1000}]\n" +
					"power_limit:\n  watts: 252000\nmeasured:\n  file: m.json\n  start: \"" + c.start + "\"\n  stale_after_s: 1200\n",
				"pods.csv": checkPodsHead + "p,1000,1024,1,1000,,LS,Running,0,60,0\n",
				"m.json":   string(rec),
			})
			in, err := tasks.LoadInputs(s)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tasks.RunReplay(testEnv(), s, in)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}
