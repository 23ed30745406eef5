package cluster

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

func a100x40(t *testing.T) *hw.MIGGeometry {
	t.Helper()
	g, ok := hw.MIGFor("A100-SXM4-40GB")
	if !ok {
		t.Fatal("no A100-SXM4-40GB geometry")
	}
	return g
}

func TestMIGPlacementRules(t *testing.T) {
	g := a100x40(t)
	for _, c := range []struct {
		name   string
		layout []MIGSlot
		ok     bool
	}{
		{"3g at 0 and 4", []MIGSlot{{"3g.20gb", 0}, {"3g.20gb", 4}}, true},
		{"4g at 0 + 3g at 4", []MIGSlot{{"4g.20gb", 0}, {"3g.20gb", 4}}, true},
		{"3g at 2: not a start", []MIGSlot{{"3g.20gb", 2}}, false},
		{"4g at 4: only 0", []MIGSlot{{"4g.20gb", 4}}, false},
		{"7g at 0 + 1g: overlap", []MIGSlot{{"7g.40gb", 0}, {"1g.5gb", 6}}, false},
		{"two 1g+me: max 1", []MIGSlot{{"1g.5gb+me", 0}, {"1g.5gb+me", 1}}, false},
		{"profile of another GPU", []MIGSlot{{"3g.40gb", 0}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewMIGGPU(g, c.layout, false)
			if (err == nil) != c.ok {
				t.Fatalf("err %v, want ok=%v", err, c.ok)
			}
		})
	}
}

func TestMIGDynamicTake(t *testing.T) {
	m, err := NewMIGGPU(a100x40(t), nil, true)
	if err != nil {
		t.Fatal(err)
	}
	// An illegal start is refused as an invalid allocation.
	if err := m.Take("3g.20gb", 2, 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("3g at 2: err %v, want ErrInvalid", err)
	}
	if err := m.Take("3g.20gb", 4, 1); err != nil {
		t.Fatal(err)
	}
	// With memory slices 4..7 taken: a 4g can still go at 0, a 3g only at 0,
	// a 2g at 0 and 2 (not 4), a 1g at 0..3.
	for profile, want := range map[string][]int{
		"4g.20gb": {0}, "3g.20gb": {0}, "2g.10gb": {0, 2}, "1g.5gb": {0, 1, 2, 3}, "7g.40gb": nil,
	} {
		if d := cmp.Diff(want, m.Starts(profile)); d != "" {
			t.Errorf("%s starts (-want +got):\n%s", profile, d)
		}
	}
	if err := m.Take("4g.20gb", 0, 2); err != nil {
		t.Fatal(err)
	}
	if got := m.BusyCompute(); got != 7 {
		t.Errorf("busy compute %d, want 4+3", got)
	}
	if err := m.Release(4, 1); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{4}, m.Starts("3g.20gb")); d != "" {
		t.Errorf("after release, 3g starts (-want +got):\n%s", d)
	}
}

func TestMIGStaticTake(t *testing.T) {
	m, err := NewMIGGPU(a100x40(t), []MIGSlot{{"3g.20gb", 0}, {"2g.10gb", 4}, {"1g.5gb", 6}}, false)
	if err != nil {
		t.Fatal(err)
	}
	// A static layout offers its free instances only: no 1g at 0, even
	// though 1g may start there on an empty GPU.
	if err := m.Take("1g.5gb", 0, 1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("1g at 0 on a 3g instance: err %v, want ErrInvalid", err)
	}
	if err := m.Take("2g.10gb", 4, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Take("2g.10gb", 4, 2); !errors.Is(err, ErrInvalid) {
		t.Fatalf("busy instance taken twice: err %v", err)
	}
	if got := m.Starts("2g.10gb"); got != nil {
		t.Errorf("2g starts %v, want none", got)
	}
	if err := m.Release(4, 1); err != nil {
		t.Fatal(err)
	}
	if len(m.Instances) != 3 {
		t.Errorf("a static layout keeps its instances: %d", len(m.Instances))
	}
}

func TestSingleLayout(t *testing.T) {
	g := a100x40(t)
	for profile, want := range map[string][]int{
		"1g.5gb": {0, 1, 2, 3, 4, 5, 6}, "1g.10gb": {0, 2, 4, 6}, "2g.10gb": {0, 2, 4}, "3g.20gb": {0, 4}, "7g.40gb": {0},
	} {
		l, err := SingleLayout(g, profile)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, s := range l {
			got = append(got, s.Start)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", profile, d)
		}
	}
}

func TestLayoutFromCounts(t *testing.T) {
	g := a100x40(t)
	for _, c := range []struct {
		name   string
		gpus   int
		counts map[string]int
		want   [][]MIGSlot // nil: an error
	}{
		// 3g + 2g + 1g + 1g fits only with the 3g at 4: a 3g at 0 leaves
		// the 2g slice 4 and a single 1g start (6), slice 7 taking no 1g.
		{"3g+2g+1g+1g", 1, map[string]int{"3g.20gb": 1, "2g.10gb": 1, "1g.5gb": 2},
			[][]MIGSlot{{{"2g.10gb", 0}, {"1g.5gb", 2}, {"1g.5gb", 3}, {"3g.20gb", 4}}}},
		{"4g+3g", 1, map[string]int{"3g.20gb": 1, "4g.20gb": 1},
			[][]MIGSlot{{{"4g.20gb", 0}, {"3g.20gb", 4}}}},
		{"two GPUs of 3g and 1g", 2, map[string]int{"3g.20gb": 3, "1g.5gb": 3},
			[][]MIGSlot{{{"3g.20gb", 0}, {"3g.20gb", 4}}, {{"3g.20gb", 0}, {"1g.5gb", 4}, {"1g.5gb", 5}, {"1g.5gb", 6}}}},
		{"three 3g on one GPU", 1, map[string]int{"3g.20gb": 3}, nil},
		{"no GPUs", 0, map[string]int{"1g.5gb": 1}, nil},
		{"negative GPUs", -1, map[string]int{"1g.5gb": 1}, nil},
		{"a profile of another GPU", 1, map[string]int{"3g.40gb": 1}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := LayoutFromCounts(g, c.gpus, c.counts)
			if c.want == nil {
				if err == nil {
					t.Fatalf("layout %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			for _, l := range got {
				if _, err := NewMIGGPU(g, l, false); err != nil {
					t.Errorf("layout breaks the rules: %v", err)
				}
			}
		})
	}
	// A full node of the single strategy: 8 GPUs x 7 1g.
	l, err := LayoutFromCounts(g, 8, map[string]int{"1g.5gb": 56})
	if err != nil || len(l) != 8 || len(l[7]) != 7 {
		t.Errorf("8 x 7 1g: %v, %v", l, err)
	}
}

// A MIG task never lands on a GPU that is not in MIG mode: it asks for an
// instance, not a share.
func TestMIGTaskNeedsMIGGPU(t *testing.T) {
	c, err := New(hw.Default(), []NodeSpec{{Name: "n", CPUMilli: 8000, MemMiB: 1024, GPUs: 1, GPUModel: "A100"}})
	if err != nil {
		t.Fatal(err)
	}
	d := job.Demand{GPUCount: 1, GPUMilli: 142, MIGProfile: "1g.10gb"}
	if ok, why := Fits(&d, c.Nodes[0]); ok || why != "no MIG GPUs" {
		t.Errorf("Fits = %v, %q; want false, no MIG GPUs", ok, why)
	}
}
