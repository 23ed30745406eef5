package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// packFirst puts every active job on 2 GPUs of the lowest-numbered node
// with room, powering every node; it predicts no power (as the baselines).
type packFirst struct{}

func (packFirst) ScheduleElastic(st *policy.ElasticState) policy.ElasticDecision {
	var d policy.ElasticDecision
	free := make([]int, st.Nodes)
	for i := range free {
		free[i] = st.GPUsPerNode
	}
	for _, v := range st.Jobs {
		for n := range free {
			if free[n] >= 2 {
				free[n] -= 2
				d.Allocs = append(d.Allocs, policy.ElasticAlloc{Job: v.Job.ID, Nodes: []policy.NodeShare{{Node: n, GPUs: 2}}, FreqIdx: 1})
				break
			}
		}
	}
	return d
}

// racks binds four 2-GPU nodes into two racks of two nodes under one row.
func racks(t *testing.T, rackW hw.Watts) *power.Domains {
	t.Helper()
	topo := &power.Topology{Domains: []power.Domain{{Name: "row", Level: "row", Limit: 10000},
		{Name: "rack-a", Level: "rack", Parent: "row", Limit: rackW}, {Name: "rack-b", Level: "rack", Parent: "row", Limit: rackW}},
		Member: map[string]string{"n0": "rack-a", "n1": "rack-a", "n2": "rack-b", "n3": "rack-b"}}
	d, _, err := topo.Bind([]string{"n0", "n1", "n2", "n3"}, []hw.Watts{100, 100, 100, 100})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A decision that takes a domain above its limit is a policy error naming
// the domain; the cluster limit alone would have allowed it.
func TestElasticRefusesDomainOverLimit(t *testing.T) {
	jobs := []policy.ElasticJob{{ID: 0, Iters: 100, ReqGPUs: 2, MaxGPUs: 2}, {ID: 1, Iters: 100, ReqGPUs: 2, MaxGPUs: 2}}
	o := ElasticOptions{Nodes: 4, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50,
		Domains: racks(t, 500), DomainGPUW: []hw.Watts{60, 100}}
	// Both jobs on rack-a (nodes 0 and 1): 4 GPUs charged 100 W = 400 W,
	// plus rack-b's idle GPUs elsewhere; rack-a at 400 W passes; at a
	// 350 W limit it does not.
	if _, err := RunElastic(jobs, fakeTruth{}, packFirst{}, o); err != nil {
		t.Fatalf("within the limits: %v", err)
	}
	o.Domains = racks(t, 350)
	_, err := RunElastic(jobs, fakeTruth{}, packFirst{}, o)
	if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), `domain "rack-a"`) {
		t.Fatalf("got %v, want a policy error naming rack-a", err)
	}
}

// The guard moves what a domain cannot hold to another domain with room,
// else holds it back; every domain's charged and actual power stay within
// its limit over the run, and the same jobs finish.
func TestElasticDomainGuard(t *testing.T) {
	var jobs []policy.ElasticJob
	for i := range 6 {
		jobs = append(jobs, policy.ElasticJob{ID: i, Submit: 0, Iters: float64(100 + 10*i), ReqGPUs: 2, MaxGPUs: 2})
	}
	o := ElasticOptions{Nodes: 4, GPUsPerNode: 2, FreqsMHz: []int{1000, 1400}, IdleGPU: 50,
		Domains: racks(t, 350), DomainGPUW: []hw.Watts{60, 100}, DomainsAbove: 0.9}
	g := policy.NewElasticDomainGuard(packFirst{}, o.Domains, o.DomainGPUW)
	res, err := RunElastic(jobs, fakeTruth{}, g, o)
	if err != nil {
		t.Fatal(err)
	}
	// packFirst wants jobs 0-3 on nodes 0-3; each rack holds one 2-GPU job
	// at 200 W plus an idle node's 100 W = 300 W, not two (400 W).
	if g.Moved[1]+g.Held[1] == 0 || g.Held[1] == 0 {
		t.Fatalf("rack-a moved %d held %d: the guard never acted", g.Moved[1], g.Held[1])
	}
	if len(res.Domains) != 3 || len(res.DomainsActual) != 3 {
		t.Fatalf("domain summaries %d/%d, want 3", len(res.Domains), len(res.DomainsActual))
	}
	for i, d := range res.Domains {
		a := res.DomainsActual[i]
		if d.Peak > d.Limit || a.Peak > d.Limit {
			t.Errorf("domain %s: charged peak %v, actual peak %v, limit %v", d.Name, d.Peak, a.Peak, d.Limit)
		}
		if d.Seconds != res.Makespan.Seconds() {
			t.Errorf("domain %s: recorded %v s of a %v s run", d.Name, d.Seconds, res.Makespan.Seconds())
		}
	}
	if res.Domains[1].Peak != 300 {
		t.Errorf("rack-a charged peak %v, want 300 W (one job and an idle node)", res.Domains[1].Peak)
	}
	// Without the guard, the same scheduler breaks the limit.
	if _, err := RunElastic(jobs, fakeTruth{}, packFirst{}, o); !errors.Is(err, ErrPolicy) {
		t.Fatalf("without the guard: %v, want a policy error", err)
	}
}

// The charge rule: metered in place, the system's prediction, else the
// GPU envelope at the frequency (its highest for a profiling window).
func TestElasticDomainCharge(t *testing.T) {
	env := []hw.Watts{60, 100}
	here := []policy.NodeShare{{Node: 1, GPUs: 2}}
	v := &policy.ElasticView{Nodes: here, GPUs: 2, FreqIdx: 0, PowerW: 110}
	for _, c := range []struct {
		name string
		a    policy.ElasticAlloc
		want hw.Watts
	}{
		{"metered in place", policy.ElasticAlloc{Nodes: here, FreqIdx: 0, Pred: 300}, 55},
		{"moved: its prediction", policy.ElasticAlloc{Nodes: []policy.NodeShare{{Node: 2, GPUs: 2}}, FreqIdx: 0, Pred: 300}, 150},
		{"other frequency, no prediction", policy.ElasticAlloc{Nodes: here, FreqIdx: 1}, 100},
		{"moved, no prediction", policy.ElasticAlloc{Nodes: []policy.NodeShare{{Node: 2, GPUs: 2}}, FreqIdx: 0}, 60},
		{"profiling, no prediction", policy.ElasticAlloc{Nodes: here, FreqIdx: 0, Profile: true}, 100},
	} {
		if got := policy.ElasticDomainCharge(v, &c.a, env); got != c.want {
			t.Errorf("%s: %v W, want %v", c.name, got, c.want)
		}
	}
}
