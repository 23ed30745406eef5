package policy_test

import (
	"strings"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// The gate refuses a node whose rack would go over its limit, with no
// cluster limit at all, and the explanation names the rack. Nodes a (1 T4:
// 25 W idle) in rack-a and b (1 V100: 45 W idle) in rack-b; the task (1
// vCPU, 1 GPU) adds 165 W on a and 375 W on b (TestPowerGateMeasured); the
// scorer prefers b. rack-b's limit 400 W < 45 + 375: the task goes to a,
// and the explanation counts b under rack-b's reason. With rack-a's limit
// at 180 W < 25 + 165 too, the task is held, and it can never start: even
// idle, neither rack can take it.
func TestGateDomains(t *testing.T) {
	for _, c := range []struct {
		name   string
		rackA  hw.Watts
		want   cluster.NodeID // -1: held
		reason string
	}{
		{"rack-b binds", 1000, 0, `power domain "rack-b" (rack, limit 400 W)`},
		{"both bind", 180, -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "V100M16").Build()
			tp := &power.Topology{Member: map[string]string{"a": "rack-a", "b": "rack-b"},
				Domains: []power.Domain{{Name: "rack-a", Level: "rack", Limit: c.rackA}, {Name: "rack-b", Level: "rack", Limit: 400}}}
			d, _, err := tp.Bind([]string{"a", "b"}, []hw.Watts{25, 45})
			if err != nil {
				t.Fatal(err)
			}
			p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 90}, Weight: 1}})
			if err != nil {
				t.Fatal(err)
			}
			task := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
			st := &policy.State{Cluster: cl, Queue: []*job.Task{task}, Power: power.PWR{}, Domains: d}
			var x *policy.Explanation
			o := &policy.Online{Placer: p, Explain: func(_ job.Time, _ *job.Task, e *policy.Explanation) { x = e }}
			acts := o.Schedule(st)
			if c.want < 0 {
				r, ok := acts[0].(policy.Reject)
				if len(acts) != 1 || !ok || !strings.Contains(r.Reason, "can never be admitted") || !strings.Contains(r.Reason, `power domain "rack-a"`) {
					t.Errorf("want a rejection naming rack-a (the binding domain of the first node), got %+v", acts)
				}
				return
			}
			s, ok := acts[0].(policy.Start)
			if len(acts) != 1 || !ok || s.Node != c.want {
				t.Fatalf("actions %+v, want a start on node %d", acts, c.want)
			}
			if x == nil || len(x.Filtered) != 1 || x.Filtered[0].Reason != c.reason || x.Filtered[0].Nodes != 1 {
				t.Errorf("explanation's filtered nodes %+v, want 1 under %q", x, c.reason)
			}
		})
	}
}
