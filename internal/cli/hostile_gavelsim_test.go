package cli

import "strings"

// hostileGavelsim: hostile inputs of this kind (issue 26); see
// hostile_test.go. The coloc keys of Gavel's round-based timing and of
// deadlines: a bad value, a key without its timing, a policy that cannot
// run in rounds, a trace out of arrival order or a job larger than the
// cluster is one error naming the key (or file, line and column), exit 1,
// nothing written.
var hostileGavelsim = []hostileCase{
	// A scenario's bad fields are on the lines after the first
	// (scenario.TestColocTimingKeys checks each message).
	roundsCase("timing unknown", "  timing: rounds\n", "", "s.yaml: invalid scenario"),
	roundsCase("round_s without gavel-rounds", "  round_s: 60\n", "", "s.yaml: invalid scenario"),
	roundsCase("round_s negative", "  timing: gavel-rounds\n  round_s: -360\n", "", "s.yaml: invalid scenario"),
	roundsCase("round_s not a number", "  timing: gavel-rounds\n  round_s: .nan\n", "", "s.yaml: invalid scenario"),
	roundsCase("round_s explicit 0", "  timing: gavel-rounds\n  round_s: 0\n", "", "coloc.round_s"),
	roundsCase("reset_s infinite", "  timing: gavel-rounds\n  reset_s: .inf\n", "", "s.yaml: invalid scenario"),
	roundsCase("reset_s explicit 0", "  timing: gavel-rounds\n  reset_s: 0\n", "", "coloc.reset_s"),
	roundsCase("deadlines unknown", "  deadlines: off\n", "", "s.yaml: invalid scenario"),
	roundsCase("EaCO under gavel-rounds", "  timing: gavel-rounds\n  systems: [FIFO, EaCO]\n", "", "s.yaml: invalid scenario"),
	roundsCase("FIFO admission unknown", "  timing: gavel-rounds\n  systems: [{name: F, policy: fifo, args: {admission: greedy}}]\n", "", "scenario t: invalid scenario"),
	roundsCase("arrivals out of order", "  timing: gavel-rounds\n", gavelLine10(9, "50")+gavelLine10(9, "10"),
		"j.trace:2: column arrival_time: 10 s is before the previous line's 50 s: timing gavel-rounds needs jobs in arrival order"),
	func() hostileCase {
		c := roundsCase("job larger than the cluster", "  timing: gavel-rounds\n", gavelLine10(6, "8")+gavelLine10(6, "16"),
			"j.trace:2: column scale_factor: 16 GPUs, the cluster has 8")
		c.files["s.yaml"] = strings.Replace(c.files["s.yaml"], "gavel-simulation", "t.json", 1)
		c.files["t.json"] = `{"v100": {"('A3C', 8)": {"null": 2}, "('A3C', 16)": {"null": 3}}}`
		return c
	}(),
}

// roundsCase runs a coloc scenario on one 8-GPU node with Gavel's
// simulation throughputs, the coloc keys extra added, over trace j.trace
// (one A3C job when trace is empty).
func roundsCase(name, extra, trace, errLine string) hostileCase {
	if trace == "" {
		trace = gavelLine10(0, "A3C")
	}
	y := "name: t\ncoloc:\n  jobs: j.trace\n  throughputs: gavel-simulation\n  nodes: 1\n" + extra
	return hostileCase{name: name, files: map[string]string{"j.trace": trace, "s.yaml": y},
		args: []string{"run", "-c", "{D}/s.yaml", "-o", "{D}/out"}, code: 1, errLine: errLine}
}
