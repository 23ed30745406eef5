package cli

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// budgetChartValues is the part of budget --values' file the chart reads.
type budgetChartValues struct {
	Profiles []struct {
		SchedulerName string   `yaml:"schedulerName"`
		Scoring       string   `yaml:"scoring"`
		PWRWeight     *float64 `yaml:"pwrWeight"`
		PowerBudget   *struct {
			BudgetWatts float64 `yaml:"budgetWatts"`
			Mode        string  `yaml:"mode"`
		} `yaml:"powerBudget"`
	} `yaml:"profiles"`
}

// Two nodes of the embedded openb GPU cluster, by hand (catalog: A10 30/150 W,
// A100 50/400 W, Xeon-E5-2682-v4 15/120 W a socket of 16 cores x 2 threads):
//
//	G2, 96 vCPU (48 cores, 3 sockets), 8 A10:   idle 3x15 + 8x30  = 285 W, full 3x120 + 8x150 = 1560 W
//	G3, 128 vCPU (64 cores, 4 sockets), 8 A100: idle 4x15 + 8x50  = 460 W, full 4x120 + 8x400 = 3680 W
//
// idle 745 W, full 5240 W, no system pods (baseline = idle); budget at share
// 0.5: 745 + 0.5 x 4495 = 2992.5, rounded up to 2993 W; at share 0.25:
// 745 + 1123.75 = 1868.75 -> 1869 W.
func TestBudgetOpenBTwoNodes(t *testing.T) {
	all, err := alibaba2023.GPUNodes()
	if err != nil {
		t.Fatal(err)
	}
	var two []cluster.NodeSpec
	for _, model := range []string{"G2", "G3"} {
		for _, n := range all {
			if n.GPUModel == model {
				two = append(two, n)
				break
			}
		}
	}
	if len(two) != 2 || two[0].CPUMilli != 96000 || two[0].GPUs != 8 || two[1].CPUMilli != 128000 || two[1].GPUs != 8 {
		t.Fatalf("openb nodes changed: %+v (the arithmetic above assumes 96 vCPU x 8 G2 and 128 vCPU x 8 G3)", two)
	}
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.csv")
	var buf bytes.Buffer
	if err := alibaba2023.WriteNodes(&buf, two); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nodes, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(dir, "budget-values.yaml")
	code, stdout, stderr := run(t, "budget", "--nodes", nodes, "--values", values)
	if code != 0 {
		t.Fatalf("budget: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"2 nodes, 2 modelled", "A10 / Xeon-E5-2682-v4 1 8 A10 30/150; Xeon-E5-2682-v4 15/120 0.285 0.285 1.560",
		"A100 / Xeon-E5-2682-v4 1 8 A100 50/400; Xeon-E5-2682-v4 15/120 0.460 0.460 3.680",
		"total 2 0.745 0.745 5.240",
		"budgetWatts: 2993 = baseline 745 W + 0.5 x (full 5240 W - baseline 745 W)"} {
		if !strings.Contains(squashSpaces(stdout), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(values)
	if err != nil {
		t.Fatal(err)
	}
	var v budgetChartValues
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", values, err, b)
	}
	if len(v.Profiles) != 2 || v.Profiles[1].PowerBudget == nil || v.Profiles[1].PowerBudget.BudgetWatts != 2993 || v.Profiles[1].PowerBudget.Mode != "estimated" ||
		v.Profiles[0].PowerBudget != nil || v.Profiles[0].SchedulerName == v.Profiles[1].SchedulerName {
		t.Errorf("values file:\n%s", b)
	}
	// The values file is claimed like every output: not replaced without --force.
	code, _, stderr = run(t, "budget", "--nodes", nodes, "--values", values, "--share", "0.25")
	if code == 0 || !strings.Contains(stderr, "exists") {
		t.Errorf("budget over an existing --values file: exit %d, want a refusal: %s", code, stderr)
	}
	code, stdout, stderr = run(t, "budget", "--nodes", nodes, "--values", values, "--share", "0.25", "--force")
	if code != 0 || !strings.Contains(stdout, "budgetWatts: 1869 = baseline 745 W + 0.25 x") {
		t.Errorf("budget --share 0.25 --force: exit %d: %s%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(values); !bytes.Contains(b, []byte("budgetWatts: 1869\n")) {
		t.Errorf("--force did not replace the values file:\n%s", b)
	}
}

// The dump fixtures, by hand (H100 71.8/700 W, L40S 35.6/350 W, A100
// 50/400 W; Xeon sockets 15/120 W of 32 vCPU):
//
//	cluster.json: cpu-0 16 vCPU (1 socket): 15 / 120 W; a100-0 128 vCPU 8 A100: 460 / 3680 W;
//	  two H100 nodes of 96 vCPU x 8: 2 x (45 + 574.4) = 1238.8 / 2 x (360 + 5600) = 11920 W;
//	  l40s 64 vCPU x 4: 30 + 142.4 = 172.4 / 240 + 1400 = 1640 W; h200-0 not in the catalog.
//	  idle 1886.2, full 17360; budget 1886.2 + 0.5 x 15473.8 = 9623.1 -> 9624 W.
//	system.json: cpu-0 (16 vCPU) 15 / 120 W, its system pods make its socket busy: baseline 120 W;
//	  gpu-h100-0 96 vCPU x 8 H100: idle 619.4, one busy socket: 120 + 30 + 574.4 = 724.4, full 5960;
//	  two L40S nodes of 64 vCPU x 4: idle 2 x 172.4 = 344.8, one with a system pod: +105 -> 449.8, full 3280.
//	  idle 979.2, baseline 1294.2, full 9360.
func TestBudgetDumps(t *testing.T) {
	for _, tc := range []struct {
		dump             string
		idle, base, full hw.Watts
		unknown          []string
		budget           hw.Watts
	}{
		{clusterDump, 1886.2, 1886.2, 17360, []string{"h200-0"}, 9624},
		{systemDump, 979.2, 1294.2, 9360, nil, 5328}, // 1294.2 + 0.5 x 8065.8 = 5327.1 -> 5328
	} {
		t.Run(filepath.Base(tc.dump), func(t *testing.T) {
			nodes, _, err := readBudgetCluster(t.Context(), powerBudgetFlags{in: tc.dump})
			if err != nil {
				t.Fatal(err)
			}
			cp, err := modelClusterPower(hw.Default(), nodes)
			if err != nil {
				t.Fatal(err)
			}
			near := func(a, b hw.Watts) bool { return a-b < 1e-6 && b-a < 1e-6 }
			if !near(cp.idle, tc.idle) || !near(cp.base, tc.base) || !near(cp.full, tc.full) {
				t.Errorf("idle %v baseline %v full %v, want %v %v %v", cp.idle, cp.base, cp.full, tc.idle, tc.base, tc.full)
			}
			var unknown []string
			for _, u := range cp.unknown {
				unknown = append(unknown, u.node)
			}
			if diff := cmp.Diff(tc.unknown, unknown); diff != "" {
				t.Errorf("unknown nodes (-want +got):\n%s", diff)
			}
			if got := suggestBudget(cp, defaultBudgetShare); got != tc.budget {
				t.Errorf("budget %v, want %v", got, tc.budget)
			}
			// The order of the nodes changes nothing.
			shuffled := append([]budgetNode(nil), nodes...)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			again, err := modelClusterPower(hw.Default(), shuffled)
			if err != nil {
				t.Fatal(err)
			}
			if again.idle != cp.idle || again.base != cp.base || again.full != cp.full || !cmp.Equal(again.rows, cp.rows, cmp.AllowUnexported(budgetRow{})) {
				t.Errorf("shuffled nodes: idle %v baseline %v full %v, want %v %v %v", again.idle, again.base, again.full, cp.idle, cp.base, cp.full)
			}
		})
	}
}

// squashSpaces makes every run of blanks in s one space (table columns).
func squashSpaces(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(lines, "\n")
}

// The command names the unknown node on stderr and in its table, and
// bad flags are usage errors.
func TestBudgetCommand(t *testing.T) {
	code, stdout, stderr := run(t, "budget", "-f", clusterDump)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"6 nodes, 5 modelled", "1 not in the catalog", "Nodes not in the catalog (not counted)", "budgetWatts: 9624"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, `warning: node h200-0: GPU model "NVIDIA-H200" (8 GPUs) not in the catalog`) {
		t.Errorf("stderr: %s", stderr)
	}
	for _, args := range [][]string{
		{"budget"},
		{"budget", "-f", clusterDump, "--nodes", "openb-gpu"},
		{"budget", "--nodes", "openb-gpu", "--share", "1.5"},
		{"budget", "--nodes", "openb-gpu", "--share", "NaN"},
		{"budget", "--nodes", "openb-gpu", "--force"},
		{"budget", "--nodes", "openb-gpu", "--context", "x"},
	} {
		if code, _, stderr := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage): %s", args, code, stderr)
		}
	}
}
