package builtin_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/solver"
)

// The slotted family builds CE-DLA from strictly decoded arguments with the
// family's solver, and the baselines, which take no arguments.
func TestSlottedFamily(t *testing.T) {
	r := builtin.Registries().Slotted
	if got, want := strings.Join(r.Names(), ","), "cedla,fifo,eprons,pambt"; got != want {
		t.Fatalf("slotted registry = %s, want %s", got, want)
	}
	withSolver := policy.SlotDeps{Solver: solver.BruteForce(), RestartSeconds: 60}
	cases := []struct {
		name, policy, args string
		deps               policy.SlotDeps
		want               string // "" builds
	}{
		{"cedla defaults", "cedla", "", withSolver, ""},
		{"cedla hard with its args", "cedla", "mode: hard\nbinary_slots: 4\nsafety_net: 10m\nrel_gap: 0.02\n", withSolver, ""},
		{"cedla unknown field", "cedla", "mode: soft\nlate_penalty: 1\n", withSolver, "cedla args: yaml: unmarshal errors:\n  line 2: field late_penalty not found in type cedla.Args"},
		{"cedla bad mode", "cedla", "mode: medium\n", withSolver, `cedla args: cedla.mode: "medium"`},
		{"cedla bad duration", "cedla", "safety_net: soon\n", withSolver, "cedla args: yaml: unmarshal errors"},
		{"cedla without a solver", "cedla", "", policy.SlotDeps{}, "built without it: build it with 'make build'"},
		{"cedla with something else", "cedla", "", policy.SlotDeps{Solver: "glpk"}, "cedla: SlotDeps.Solver is a string, want a solver.Solver"},
		{"fifo", "fifo", "", policy.SlotDeps{}, ""},
		{"eprons", "eprons", "", policy.SlotDeps{}, ""},
		{"pambt", "pambt", "", policy.SlotDeps{}, ""},
		{"fifo takes no args", "fifo", "sleep_idle: true\n", policy.SlotDeps{}, "fifo args: yaml: unmarshal errors:\n  line 1: field sleep_idle not found in type slotfifo.Args"},
		{"unknown", "edf", "", policy.SlotDeps{}, `unknown slotted policy "edf" (known: cedla, fifo, eprons, pambt)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := r.New(c.policy, []byte(c.args), c.deps)
			if c.want == "" {
				if err != nil || p == nil {
					t.Fatalf("New = %v, %v; want a planner", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New = %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, err := r.New("cedla", nil, policy.SlotDeps{}); !errors.Is(err, policy.ErrNoSolver) {
		t.Errorf("cedla without a solver: %v, want policy.ErrNoSolver", err)
	}
}
