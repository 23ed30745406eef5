package fgd

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
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
