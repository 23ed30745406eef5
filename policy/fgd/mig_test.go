package fgd

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

func migGPU(t *testing.T, dynamic bool, layout []cluster.MIGSlot, busy ...int) *cluster.MIGGPU {
	t.Helper()
	g, ok := hw.MIGFor("A100-SXM4-40GB")
	if !ok {
		t.Fatal("no A100-SXM4-40GB geometry")
	}
	m, err := cluster.NewMIGGPU(g, nil, dynamic)
	if dynamic {
		for i, s := range layout {
			if err == nil {
				err = m.Take(s.Profile, s.Start, job.ID(i))
			}
		}
	} else {
		m, err = cluster.NewMIGGPU(g, layout, false)
		for i, s := range busy {
			if err == nil {
				err = m.Take(layout[s].Profile, layout[s].Start, job.ID(i))
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMIGFrag(t *testing.T) {
	w := MIGWorkload{{"1g.5gb", 0.5}, {"2g.10gb", 0.25}, {"3g.20gb", 0.25}}
	for _, c := range []struct {
		name string
		m    *cluster.MIGGPU
		want float64
	}{
		// Dynamic, 4g at 0 and 1g at 4 busy: free slices 5, 6, 7.
		// 1g may start at 5 and 6 (not 7): 1 unusable; 2g starts 0, 2, 4
		// are all taken: 3; 3g starts 0, 4 taken: 3.
		// 0.5 x 1 + 0.25 x 3 + 0.25 x 3 = 2.
		{"dynamic", migGPU(t, true, []cluster.MIGSlot{{Profile: "4g.20gb", Start: 0}, {Profile: "1g.5gb", Start: 4}}), 2},
		// Static 3g@0 (busy), 2g@4, 1g@6, slice 7 in no instance: free
		// slices 4..7. A 1g uses only its instance at 6: 3 unusable; a 2g
		// its instance at 4..5: 2; a 3g none: 4.
		// 0.5 x 3 + 0.25 x 2 + 0.25 x 4 = 3.
		{"static", migGPU(t, false, []cluster.MIGSlot{{Profile: "3g.20gb", Start: 0}, {Profile: "2g.10gb", Start: 4}, {Profile: "1g.5gb", Start: 6}}, 0), 3},
		// An empty dynamic GPU: a 1g can start at 0..6, slice 7 never:
		// 0.5 x 1; 2g at 0, 2, 4 cover 0..5, so 6, 7: 0.25 x 2; 3g at 0, 4
		// cover all: 0. 0.5 + 0.5 = 1.
		{"empty dynamic", migGPU(t, true, nil), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := w.MIGFrag(c.m); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("MIGFrag = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMIGBestStart(t *testing.T) {
	// Workload all 4g, which may start at 0 only. A 1g at 0..3 leaves no 4g
	// placement: all 7 free slices unusable; a 1g at 4..6 leaves 0..3 for a
	// 4g: 3 unusable. FGD picks 4, the lowest of the best (a first-fit
	// placement would take 0).
	w := MIGWorkload{{"4g.20gb", 1}}
	start, frag, ok := w.MIGBestStart(migGPU(t, true, nil), "1g.5gb")
	if !ok || start != 4 || frag != 3 {
		t.Errorf("MIGBestStart = %d, %v, %v; want 4, 3, true", start, frag, ok)
	}
}

func TestNewMIGWorkload(t *testing.T) {
	got := NewMIGWorkload([]string{"3g.20gb", "1g.5gb", "1g.5gb", "1g.5gb"})
	want := MIGWorkload{{"1g.5gb", 0.75}, {"3g.20gb", 0.25}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// In the engine's reading, MIG pods are the MIG workload and are left out
// of the share classes; a node in MIG mode is measured over its GPUs in
// milli-GPU (memory slices x 1000 / 8), a time-sliced node as before.
func TestWorkloadWithMIGPods(t *testing.T) {
	pods := []job.Task{
		{Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}},
		{Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 428, MIGProfile: "3g.40gb"}},
		{Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 571, MIGProfile: "4g.40gb"}},
	}
	w, err := NewWorkload(pods, Args{}.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Classes) != 1 || w.Classes[0].GPUMilli != 500 || w.Classes[0].Popularity != 1 {
		t.Errorf("share classes %+v, want the one share pod with popularity 1", w.Classes)
	}
	if d := cmp.Diff(MIGWorkload{{"3g.40gb", 0.5}, {"4g.40gb", 0.5}}, w.MIG); d != "" {
		t.Errorf("MIG workload (-want +got):\n%s", d)
	}
	c := clustertest.New().Node("mig").GPUs(2, "A100").MIG().Build()
	n := c.Nodes[0]
	// Two empty dynamic A100s: a 3g may start at 0 or 4 (covering 0..7),
	// a 4g at 0 (0..3): 4 slices unusable for it. 0.5 x 0 + 0.5 x 4 = 2
	// memory slices per GPU = 250 milli-GPU; 500 for the node.
	if got := w.NodeFrag(n); math.Abs(got-500) > 1e-9 {
		t.Errorf("NodeFrag = %v, want 500", got)
	}
	// FGD places a 3g at slice 4: that GPU's fragmentation falls from 2
	// memory slices to 0 (slices 0..3 serve a 3g or the 4g); at 0 it would
	// stay 2 (slices 4..7 serve a 3g only, the 4g none).
	p := &Policy{W: w}
	g, s, ok := p.SelectMIG(&pods[1], n)
	if !ok || g != 0 || s != 4 {
		t.Errorf("SelectMIG = GPU %d start %d (%v), want GPU 0 start 4", g, s, ok)
	}
	// With a 1g.10gb at slice 6 of GPU 0, a 3g may start there only at 0,
	// which leaves GPU 0's fragmentation at 3 slices (before: 3g and 4g
	// each find 3 free slices unusable, after: 4, 5, 7 for both); on the
	// empty GPU 1 it falls from 2 to 0: GPU 1 at slice 4.
	one := &job.Task{ID: 9, Demand: job.Demand{GPUCount: 1, GPUMilli: 142, MIGProfile: "1g.10gb"}}
	if err := c.AllocateMIG(one, 0, 0, 6); err != nil {
		t.Fatal(err)
	}
	if g, s, ok := p.SelectMIG(&pods[1], n); !ok || g != 1 || s != 4 {
		t.Errorf("SelectMIG beside a 1g = GPU %d start %d (%v), want GPU 1 start 4", g, s, ok)
	}
}
