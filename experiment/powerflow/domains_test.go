package powerflow_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/powerflow"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/scenario"
)

// The racks example, one seed, PowerFlow and Gandiva: every domain's
// charged power stays within its limit, the racks bind (the guard moves or
// holds back allocations of both systems), Gandiva waits longer than
// without the topology, and domains.csv has a row per run and domain.
func TestScenarioElasticDomains(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the Philly day under two systems twice (about 30 s)")
	}
	run := func(topo bool) []powerflow.ScenarioRun {
		s, err := scenario.Load("../../examples/elastic-powerflow-racks.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s.Seeds, s.Elastic.Systems = 1, s.Elastic.Systems[:2]
		if !topo {
			s.Topology = nil
		}
		env := &experiment.Env{Version: "test", Registries: builtin.Registries(), Catalog: hw.Default()}
		res, err := powerflow.RunScenario(context.Background(), env, s)
		if err != nil {
			t.Fatal(err)
		}
		var sum powerflow.ScenarioResult
		if err := json.Unmarshal(res[0].Files["summary.json"], &sum); err != nil {
			t.Fatal(err)
		}
		csv, ok := res[0].Files["domains.csv"]
		if topo && (!ok || strings.Count(string(csv), "\n") != 1+2*4) {
			t.Errorf("domains.csv: want a header and 4 domains for each of 2 runs:\n%s", csv)
		}
		if !topo && ok {
			t.Error("domains.csv without a topology")
		}
		return sum.Runs
	}
	free, racks := run(false), run(true)
	for i, r := range racks {
		if len(r.Domains) != 4 {
			t.Fatalf("%s: %d domains, want 4", r.System, len(r.Domains))
		}
		acted := 0
		for _, d := range r.Domains {
			if d.PredPeakW > d.LimitW*(1+1e-9) {
				t.Errorf("%s %s: charged peak %.1f W above the %.0f W limit", r.System, d.Name, d.PredPeakW, d.LimitW)
			}
			acted += d.Moved + d.Held
		}
		if acted == 0 {
			t.Errorf("%s: no allocation moved or held back: the racks do not bind", r.System)
		}
		if len(free[i].Domains) != 0 {
			t.Errorf("%s without a topology reports domains", free[i].System)
		}
	}
	if g, f := racks[1], free[1]; g.System != "Gandiva" || g.AvgJCTh <= f.AvgJCTh {
		t.Errorf("%s: average JCT %.2f h under the racks, %.2f h without: want longer", g.System, g.AvgJCTh, f.AvgJCTh)
	}
}
