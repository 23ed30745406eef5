package policy_test

import (
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// In measured mode the gate counts, per node, the larger of the measured
// and the estimated power, and the task's estimated increase. Nodes a
// (1 T4, one 32-vCPU socket: 15 + 10 = 25 W idle) and b (1 V100: 15 + 30
// = 45 W), 70 W estimated; the task adds 165 W on a, 375 W on b (see
// TestPlacerPowerGate); limit 400 W, the scorer prefers b.
func TestPowerGateMeasured(t *testing.T) {
	task := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	cases := []struct {
		name    string
		meter   power.Readings
		clusteW hw.Watts
		want    cluster.NodeID // -1: held
	}{
		{"estimates: b 70+375 > 400, a 70+165 = 235", nil, 70, 0},
		{"a's GPUs measured 100 W: 15+100 + 45 = 160, a 325", power.Readings{"a": {Watts: 100, Scope: power.ScopeGPU}}, 160, 0},
		{"b measured 250 W: 25 + 250 = 275, a 440 > 400: held", power.Readings{"b": {Watts: 250, Scope: power.ScopeNode}}, 275, -1},
		{"below the estimate: max keeps 45 W", power.Readings{"b": {Watts: 20, Scope: power.ScopeNode}}, 70, 0},
		{"GPU reading below the estimate: max keeps 10 W", power.Readings{"a": {Watts: 5, Scope: power.ScopeGPU}}, 70, 0},
		{"unknown scope counts the estimate", power.Readings{"b": {Watts: 900, Scope: "rack"}}, 70, 0},
		{"unknown node is ignored", power.Readings{"z": {Watts: 900, Scope: power.ScopeNode}}, 70, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
			p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 90}, Weight: 1}})
			if err != nil {
				t.Fatal(err)
			}
			g := &policy.PowerGate{Limit: 400, Model: power.PWR{}}
			if tc.meter != nil {
				g.Meter = tc.meter
			}
			p.SetGate(g)
			if got := g.ClusterPower(c.Nodes); got != tc.clusteW {
				t.Errorf("cluster power %v W, want %v W", got, tc.clusteW)
			}
			d, ok := p.Place(task, c)
			got := cluster.NodeID(-1)
			if ok {
				got = d.Node
			}
			if got != tc.want {
				t.Errorf("placed on %d, want %d (held %v)", got, tc.want, p.Held())
			}
			if (tc.want < 0) != p.Held() {
				t.Errorf("held %v, want %v", p.Held(), tc.want < 0)
			}
		})
	}
}

// Online passes the state's Meter to the gate it builds: the same task is
// placed with estimates and waits for power with a high measurement.
func TestOnlineUsesStateMeter(t *testing.T) {
	for _, m := range []power.Readings{nil, {"b": {Watts: 250, Scope: power.ScopeNode}}} {
		c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
		p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 90}, Weight: 1}})
		if err != nil {
			t.Fatal(err)
		}
		task := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
		st := &policy.State{Cluster: c, Queue: []*job.Task{task}, PowerLimit: 400, Power: power.PWR{}}
		if m != nil {
			st.Meter = m
		}
		acts := (&policy.Online{Placer: p}).Schedule(st)
		if started := len(acts) == 1; started != (m == nil) {
			t.Errorf("meter %v: actions %v", m, acts)
		}
	}
}
