package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/policy"
)

func TestRepeatDays(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Submit: 5}, {ID: 1, Submit: 9}}
	got := repeatDays(jobs, 3)
	// Copy d of job i arrives d days (86,400,000 ms) after it, IDs 0..5.
	want := []int64{5, 9, 86_400_005, 86_400_009, 172_800_005, 172_800_009}
	if len(got) != len(want) {
		t.Fatalf("%d jobs, want %d", len(got), len(want))
	}
	for i, j := range got {
		if j.ID != i || int64(j.Submit) != want[i] {
			t.Errorf("job %d: ID %d submit %d, want ID %d submit %d", i, j.ID, j.Submit, i, want[i])
		}
	}
}

func TestBenchEnginesRefusesUnknown(t *testing.T) {
	var out bytes.Buffer
	err := cmdBenchEngines(&out, "coloc,warp", 1)
	if err == nil || !strings.Contains(err.Error(), `unknown engine "warp"`) {
		t.Fatalf("err = %v, want unknown engine warp", err)
	}
	if err := cmdBenchEngines(&out, "coloc", 0); err == nil || !strings.Contains(err.Error(), "--reps 0") {
		t.Fatalf("err = %v, want --reps refused", err)
	}
}

// TestEngineTable: a ratio above the budget says "no".
func TestEngineTable(t *testing.T) {
	var out bytes.Buffer
	pts := []EnginePoint{{Engine: "a", Work: "w", Jobs: [2]int{1, 10}, CPU: [2]float64{1, 12}}, {Engine: "b", Work: "w", Jobs: [2]int{1, 10}, CPU: [2]float64{1, 12.5}}}
	if err := writeEngineTable(&out, pts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.Contains(lines[2], "12.0x") || !strings.Contains(lines[2], "yes") || !strings.Contains(lines[3], "12.5x") || !strings.Contains(lines[3], " no ") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// The mig row's workload loads: its scenario is valid and its pods and
// MIG nodes are read (the run itself is the benchmark's).
func TestMIGBenchLoads(t *testing.T) {
	if _, err := migBench(1); err != nil {
		t.Fatal(err)
	}
}
