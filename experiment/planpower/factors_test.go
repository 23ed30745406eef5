package planpower

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// Draw 0 is the catalog's figures; every other draw is within each
// model's band, the same for the same seed and draw, different across
// draws.
func TestFactors(t *testing.T) {
	p := &Planner{p95: map[string]float64{"A100": 0.2, "V100M32": 0.87}}
	for m, f := range p.factors(5, 0) {
		if f != 1 {
			t.Errorf("draw 0, %s: factor %v, want 1", m, f)
		}
	}
	seen := map[float64]bool{}
	for draw := 1; draw <= 50; draw++ {
		f := p.factors(5, draw)
		for m, e := range p.p95 {
			if f[m] < 1-e || f[m] > 1+e {
				t.Errorf("draw %d, %s: factor %v outside [%v, %v]", draw, m, f[m], 1-e, 1+e)
			}
			if g := p.factors(5, draw)[m]; g != f[m] {
				t.Errorf("draw %d, %s: %v then %v", draw, m, f[m], g)
			}
		}
		seen[f["A100"]] = true
	}
	if len(seen) < 45 {
		t.Errorf("%d distinct A100 factors over 50 draws", len(seen))
	}
}

// scaled charges busy GPUs times the factor: a node with two P100s (25 W
// idle, 250 W busy under PWR), one busy: GPU power 250 + 25 = 275 W; at
// factor 1.2 the busy GPU draws 300 W: 325 W. Idle, it draws 50 W at any
// factor.
func TestScaledBusyGPUs(t *testing.T) {
	c := clustertest.New().Node("n").GPUs(2, "P100").CPU(32000).Build()
	n := c.Nodes[0]
	m := scaled{Model: power.PWR{}, f: map[string]float64{"P100": 1.2}}
	if got := m.NodePower(n).GPU; got != 50 {
		t.Errorf("idle node: GPU %v W, want 50", got)
	}
	task := &job.Task{ID: 1, Demand: job.Demand{CPUMilli: 1000, MemMiB: 1, GPUCount: 1, GPUMilli: 1000}}
	if err := c.Allocate(task, cluster.NodeID(0), []int{0}); err != nil {
		t.Fatal(err)
	}
	if got := (power.PWR{}).NodePower(n).GPU; got != 275 {
		t.Fatalf("PWR: GPU %v W, want 275", got)
	}
	if got := m.NodePower(n).GPU; math.Abs(float64(got)-325) > 1e-9 {
		t.Errorf("scaled: GPU %v W, want 325", got)
	}
}
