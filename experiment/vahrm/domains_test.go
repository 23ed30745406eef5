package vahrm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/vahrm"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
)

// An hpc scenario with a topology: the 540 nodes in 9 racks of 60, each
// limited to 60 idle nodes plus 24 nodes' dynamic range at TDP, so that
// racks bind. Every run completes, no rack's predicted peak passes its
// limit, summary.json and domains.csv report every rack, and the
// limits make jobs wait longer than without them for some system.
func TestScenarioHPCDomains(t *testing.T) {
	if testing.Short() {
		t.Skip("fits TSMVA and replays 2 x 2 systems (about 10 s)")
	}
	const head = "name: h\nmode: hpc\nhpc: {swf: nasa-ipsc, jobs: 600, procs_per_node: 1, sr: 8, first_run_ratio: 0, workloads: [8], systems: [VU-FCFS, VAHRM+IDEAL]}\n"
	run := func(topo string) []vahrm.Relative {
		s, err := scenario.Parse([]byte(head+topo), "h.yaml")
		if err != nil {
			t.Fatal(err)
		}
		env := &experiment.Env{Version: "test", Registries: builtin.Registries(), Catalog: hw.Default()}
		res, err := vahrm.RunScenario(context.Background(), env, s)
		if err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Runs []vahrm.Relative `json:"runs"`
		}
		if err := json.Unmarshal(res[0].Files["summary.json"], &sum); err != nil {
			t.Fatal(err)
		}
		if topo != "" {
			if csv := string(res[0].Files["domains.csv"]); strings.Count(csv, "\n") != 1+len(sum.Runs)*9 {
				t.Errorf("domains.csv: want a header and 9 racks per run:\n%.400s", csv)
			}
		}
		return sum.Runs
	}
	free := run("")
	// One node: 2 CPUs and 4 GPUs of the truth table; limits from its
	// idle and TDP powers (power.HPCNodes), computed the same way here.
	var b strings.Builder
	b.WriteString("topology:\n  members:\n")
	for i := range 540 {
		fmt.Fprintf(&b, "    %s: rack-%d\n", vahrm.NodeName(i), i/60)
	}
	b.WriteString("  domains:\n")
	idle, tdp := nodeIdleTDP(t)
	for r := range 9 {
		fmt.Fprintf(&b, "    - {name: rack-%d, level: rack, limit_w: %.0f}\n", r, 60*idle+24*(tdp-idle))
	}
	racked := run(b.String())
	longer := false
	for i, r := range racked {
		if len(r.Domains) != 9 {
			t.Fatalf("%s: %d domains, want 9", r.System, len(r.Domains))
		}
		for _, d := range r.Domains {
			if d.PredPeakW > d.LimitW*(1+1e-9) {
				t.Errorf("%s %s: predicted peak %.0f W over its %.0f W limit", r.System, d.Name, d.PredPeakW, d.LimitW)
			}
		}
		if len(free[i].Domains) != 0 {
			t.Errorf("no topology: domains %+v", free[i].Domains)
		}
		longer = longer || r.MeanWaitS > free[i].MeanWaitS
	}
	if !longer {
		t.Error("the rack limits made no job wait longer: the test needs limits that bind")
	}
}

func nodeIdleTDP(t *testing.T) (idle, tdp float64) {
	t.Helper()
	log, err := vahrm.LoadScenarioLog(&scenario.Scenario{HPC: &scenario.HPCSpec{SWF: scenario.SWFNASAiPSC, Jobs: 10, ProcsPerNode: 1}})
	if err != nil {
		t.Fatal(err)
	}
	e, _, _, err := vahrm.BuildEnv(builtin.Registries(), log, 42)
	if err != nil {
		t.Fatal(err)
	}
	return float64(e.Truth.Idle()), float64(e.Truth.TDP())
}
