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

// The domain-headroom term moves a task to the cooler rack. Nodes a and b
// (one T4 each: 25 W idle; the task adds 165 W) in racks of 1000 W and
// 300 W; the scorer gives a 10 and b 90. DomainScore: a (1000 - 25 -
// 165)/1000 = 0.81 -> 81; b (300 - 25 - 165)/300 = 0.367 -> 37. Weight 0:
// b (90 > 10). Weight 2: a 10 + 2x81 = 172 over b 90 + 2x37 = 164.
func TestDomainHeadroomTerm(t *testing.T) {
	for _, c := range []struct {
		weight int64
		want   cluster.NodeID
		total  int64
	}{{0, 1, 90}, {2, 0, 172}} {
		cl := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Build()
		tp := &power.Topology{Member: map[string]string{"a": "rack-a", "b": "rack-b"},
			Domains: []power.Domain{{Name: "rack-a", Limit: 1000}, {Name: "rack-b", Limit: 300}}}
		d, _, err := tp.Bind([]string{"a", "b"}, []hw.Watts{25, 25})
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "f", Scorer: fixed{10, 90}, Weight: 1}})
		if err != nil {
			t.Fatal(err)
		}
		p.SetGate(&policy.PowerGate{Model: power.PWR{}, Domains: d})
		p.SetDomainWeight(c.weight)
		task := &job.Task{ID: 1, Class: 0, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
		got, ok := p.Place(task, cl)
		if !ok || got.Node != c.want || got.Score != c.total {
			t.Errorf("weight %d: %+v, want node %d with total %d", c.weight, got, c.want, c.total)
		}
	}
	l := (&power.Topology{Member: map[string]string{"a": "r"}, Domains: []power.Domain{{Name: "r", Limit: 100}}})
	d, _, _ := l.Bind([]string{"a"}, []hw.Watts{25})
	if got := policy.DomainScore(d.NewLoad(), d, 0, 150); got != 0 {
		t.Errorf("over the limit: score %d, want 0 (clamped)", got)
	}
}
