package scenario

import (
	"strings"
	"testing"
)

// The coloc section's Gavel keys (issue 26): worker types and the table
// that must hold them, checked at validation with the field named.
func TestColocGavelKeys(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
		worker           string // the worker type of a valid scenario
	}{
		{"default table", "coloc: {jobs: gavel-msr}", "", "v100"},
		{"v100 on the default table", "coloc: {jobs: gavel-msr, worker: v100}", "", "v100"},
		{"k80 embedded table", "coloc: {jobs: gavel-max_min_fairness, throughputs: gavel-simulation, worker: k80}", "", "k80"},
		{"p100 file", "coloc: {jobs: j.trace, throughputs: t.json, worker: p100}", "", "p100"},
		{"unknown worker", "coloc: {jobs: gavel-msr, throughputs: gavel-simulation, worker: a100}", `coloc.worker: "a100", want one of v100, p100, k80`, ""},
		{"worker case", "coloc: {jobs: gavel-msr, throughputs: gavel-simulation, worker: V100}", `coloc.worker: "V100", want one of`, ""},
		{"p100 without a table", "coloc: {jobs: gavel-msr, worker: p100}", "coloc.worker: p100 needs coloc.throughputs (the default table is Gavel's V100 single-GPU one): gavel-simulation or a Gavel throughput file", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte("name: t\n"+tc.yaml+"\n"), "t.yaml")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid scenario refused: %v", err)
				}
				if got := s.Coloc.WorkerType(); got != tc.worker {
					t.Errorf("worker type %q, want %q", got, tc.worker)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
