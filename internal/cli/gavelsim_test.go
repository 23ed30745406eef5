package cli

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRunGavelRounds runs Gavel's artifact_evaluation trace through
// `wattsched run` as a user would (mode coloc, timing gavel-rounds,
// deadlines none, Gavel's simulation throughputs, one server of 8 V100)
// and compares runs.csv with Gavel's own simulator, which printed these
// figures for
//
//	python3 scripts/drivers/simulate_scheduler_with_trace.py \
//	  -t traces/physical_cluster/artifact_evaluation.trace -p POLICY -c 8:0:0 \
//	  --num_gpus_per_server 8:8:8 --throughputs_file simulation_throughputs.json --seed 0
//
// (Gavel c4fa400; sim/testdata/gavel/reference.tsv holds every
// configuration): average JCT and makespan in seconds.
func TestRunGavelRounds(t *testing.T) {
	want := map[string][2]float64{
		"FIFO":        {2961.349, 6212.931},
		"FIFO_packed": {2783.710, 5644.110},
		"Gandiva":     {2073.959, 5413.719},
	}
	d := t.TempDir()
	s := filepath.Join(d, "s.yaml")
	y := "name: g\ncoloc:\n  jobs: gavel-artifact_evaluation\n  throughputs: gavel-simulation\n  nodes: 1\n  timing: gavel-rounds\n  deadlines: none\n" +
		"  systems: [FIFO, FIFO_packed, {name: Gandiva, policy: gandiva_packing, args: {gavel_seed: 0}}]\n"
	if err := os.WriteFile(s, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(d, "out")
	if code, _, stderr := run(t, "run", "-c", s, "-o", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(filepath.Join(out, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if len(rows) != 1+len(want) {
		t.Fatalf("runs.csv has %d rows, want %d", len(rows)-1, len(want))
	}
	for _, r := range rows[1:] {
		w, ok := want[r[col["system"]]]
		if !ok {
			t.Fatalf("unexpected system %q", r[col["system"]])
		}
		for k, name := range []string{"avg_jtt_s", "makespan_s"} {
			got, err := strconv.ParseFloat(r[col[name]], 64)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got/w[k]-1) > 1e-4 {
				t.Errorf("%s %s: %v, Gavel %v", r[col["system"]], name, got, w[k])
			}
		}
	}
}
