package pwr

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
)

func TestMIGPower(t *testing.T) {
	geo, _ := hw.MIGFor("A100")
	a100, err := hw.Default().GPU("A100")
	if err != nil {
		t.Fatal(err)
	}
	m, err := cluster.NewMIGGPU(geo, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	// Catalog A100: idle 50 W, TDP 400 W.
	if got := MIGPower(&a100, m); got != 50 {
		t.Errorf("idle MIG GPU: %v W, want 50", got)
	}
	// A 3g adds 3/7 of 350 W = 150 W.
	inc, ok := MIGIncrease(&a100, m, "3g.40gb")
	if !ok || math.Abs(float64(inc)-150) > 1e-9 {
		t.Errorf("3g increase %v, %v; want 150 W", inc, ok)
	}
	if err := m.Take("3g.40gb", 4, 1); err != nil {
		t.Fatal(err)
	}
	// 50 W + 3/7 of 350 W = 200 W.
	if got := MIGPower(&a100, m); math.Abs(float64(got)-200) > 1e-9 {
		t.Errorf("3g busy: %v W, want 200", got)
	}
	if err := m.Take("4g.40gb", 0, 2); err != nil {
		t.Fatal(err)
	}
	// 3g + 4g = 7 of 7 compute slices: the TDP.
	if got := MIGPower(&a100, m); math.Abs(float64(got)-400) > 1e-9 {
		t.Errorf("full MIG GPU: %v W, want 400", got)
	}
	if _, ok := MIGIncrease(&a100, m, "1g.10gb"); ok {
		t.Error("a full GPU offers no 1g placement")
	}
}

// PWR scores a MIG pod by the power it adds under the MIG rule: a 3g.40gb
// (no CPU) on a dynamic A100 adds 3/7 x (400 - 50) = 150 W, on an empty
// GPU or beside a busy 4g alike; the same demand as a share of a
// time-sliced A100 would add the whole 350 W (pwr-fgd eq. 2).
func TestMIGScore(t *testing.T) {
	c := clustertest.New().Node("mig").GPUs(1, "A100").MIG().Node("plain").GPUs(1, "A100").Build()
	p, err := New(Args{}, policy.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	three := &job.Task{ID: 1, Demand: job.Demand{GPUCount: 1, GPUMilli: 428, MIGProfile: "3g.40gb"}}
	if s := p.Score(three, c.Nodes[0]); s != -150 {
		t.Errorf("score on the empty MIG GPU %d, want -150", s)
	}
	four := &job.Task{ID: 2, Demand: job.Demand{GPUCount: 1, GPUMilli: 571, MIGProfile: "4g.40gb"}}
	if err := c.AllocateMIG(four, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if s := p.Score(three, c.Nodes[0]); s != -150 {
		t.Errorf("score beside a busy 4g %d, want -150", s)
	}
	if g, s, ok := p.SelectMIG(three, c.Nodes[0]); !ok || g != 0 || s != 4 {
		t.Errorf("SelectMIG = GPU %d start %d (%v), want GPU 0 start 4 (the only free 3g start)", g, s, ok)
	}
	share := &job.Task{ID: 3, Demand: job.Demand{GPUCount: 1, GPUMilli: 428}}
	if s := p.Score(share, c.Nodes[1]); s != -350 {
		t.Errorf("share on the time-sliced A100 %d, want -350", s)
	}
}
