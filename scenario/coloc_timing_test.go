package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The coloc section's timing and deadline keys (issue 26): defaults, and
// each bad value refused at validation with its field named.
func TestColocTimingKeys(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
		// Of a valid scenario: round and reset seconds, system policies.
		round, reset float64
		policies     []string
	}{
		{"events by default", "coloc: {jobs: gavel-msr}", "", 0, 0, []string{"fifo", "fifo_packed", "gandiva_packing", "eaco"}},
		{"events named", "coloc: {jobs: gavel-msr, timing: events, deadlines: drawn}", "", 0, 0, []string{"fifo", "fifo_packed", "gandiva_packing", "eaco"}},
		{"gavel-rounds defaults", "coloc: {jobs: gavel-msr, timing: gavel-rounds, deadlines: none}", "", 360, 1920, []string{"fifo", "fifo_packed", "gandiva_packing"}},
		{"gavel-rounds set", "coloc: {jobs: gavel-msr, timing: gavel-rounds, round_s: 60, reset_s: 1, systems: [Gandiva]}", "", 60, 1, []string{"gandiva_packing"}},
		{"timing unknown", "coloc: {jobs: gavel-msr, timing: rounds}", `coloc.timing: "rounds", want events or gavel-rounds`, 0, 0, nil},
		{"round_s under events", "coloc: {jobs: gavel-msr, round_s: 60}", "coloc.round_s, coloc.reset_s: only for timing: gavel-rounds", 0, 0, nil},
		{"reset_s under events", "coloc: {jobs: gavel-msr, timing: events, reset_s: 60}", "coloc.round_s, coloc.reset_s: only for timing: gavel-rounds", 0, 0, nil},
		{"round_s negative", "coloc: {jobs: gavel-msr, timing: gavel-rounds, round_s: -360}", "coloc.round_s: -360, want 1..86400 seconds", 0, 0, nil},
		{"round_s NaN", "coloc: {jobs: gavel-msr, timing: gavel-rounds, round_s: .nan}", "coloc.round_s: NaN, want 1..86400 seconds", 0, 0, nil},
		{"round_s too long", "coloc: {jobs: gavel-msr, timing: gavel-rounds, round_s: 1e9}", "coloc.round_s: 1e+09, want 1..86400 seconds", 0, 0, nil},
		{"round_s explicit 0", "coloc: {jobs: gavel-msr, timing: gavel-rounds, round_s: 0}", "coloc.round_s", 0, 0, nil},
		{"reset_s infinite", "coloc: {jobs: gavel-msr, timing: gavel-rounds, reset_s: .inf}", "coloc.reset_s: +Inf, want 1..2592000 seconds", 0, 0, nil},
		{"reset_s explicit 0", "coloc: {jobs: gavel-msr, timing: gavel-rounds, reset_s: 0}", "coloc.reset_s", 0, 0, nil},
		{"deadlines unknown", "coloc: {jobs: gavel-msr, deadlines: off}", `coloc.deadlines: "off", want drawn or none`, 0, 0, nil},
		{"EaCO in rounds", "coloc: {jobs: gavel-msr, timing: gavel-rounds, systems: [FIFO, EaCO]}",
			"coloc.systems[1] (EaCO): policy eaco does not run under timing: gavel-rounds (these do: [fifo fifo_packed gandiva_packing])", 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte("name: t\n"+tc.yaml+"\n"), "t.yaml")
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want it to contain %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("valid scenario refused: %v", err)
			}
			var pols []string
			for _, sys := range s.Coloc.Systems {
				pols = append(pols, sys.Policy)
			}
			if d := cmp.Diff(tc.policies, pols); d != "" {
				t.Errorf("systems (-want +got):\n%s", d)
			}
			if s.Coloc.RoundS != tc.round || s.Coloc.ResetS != tc.reset {
				t.Errorf("round_s %v, reset_s %v; want %v, %v", s.Coloc.RoundS, s.Coloc.ResetS, tc.round, tc.reset)
			}
		})
	}
}

// TestColocFailedJobs: coloc.failed_jobs (Gavel's failed-round rule) is
// drop by default under gavel-rounds, finish turns it off, and it is
// refused under event timing or with another value.
func TestColocFailedJobs(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
		drops            bool
	}{
		{"gavel-rounds: drop by default", "coloc: {jobs: gavel-msr, timing: gavel-rounds}", "", true},
		{"drop named", "coloc: {jobs: gavel-msr, timing: gavel-rounds, failed_jobs: drop}", "", true},
		{"finish", "coloc: {jobs: gavel-msr, timing: gavel-rounds, failed_jobs: finish}", "", false},
		{"events: no rule", "coloc: {jobs: gavel-msr}", "", false},
		{"under events", "coloc: {jobs: gavel-msr, failed_jobs: drop}", "coloc.failed_jobs: only for timing: gavel-rounds", false},
		{"unknown", "coloc: {jobs: gavel-msr, timing: gavel-rounds, failed_jobs: keep}", `coloc.failed_jobs: "keep", want drop or finish`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte("name: t\n"+tc.yaml+"\n"), "t.yaml")
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want it to contain %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("valid scenario refused: %v", err)
			}
			if got := s.Coloc.DropsFailedJobs(); got != tc.drops {
				t.Errorf("drops failed jobs: %v, want %v", got, tc.drops)
			}
		})
	}
}
