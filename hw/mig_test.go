package hw

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMIGTable(t *testing.T) {
	a40, ok := MIGFor("A100-SXM4-40GB")
	if !ok {
		t.Fatal("no A100-SXM4-40GB geometry")
	}
	// The user guide's -lgipp listing for an A100: 3g {0,4}:4, 4g {0}:4, 7g {0}:8.
	for _, c := range []struct {
		profile string
		memory  int
		starts  []int
	}{
		{"1g.5gb", 1, []int{0, 1, 2, 3, 4, 5, 6}},
		{"2g.10gb", 2, []int{0, 2, 4}},
		{"3g.20gb", 4, []int{0, 4}},
		{"4g.20gb", 4, []int{0}},
		{"7g.40gb", 8, []int{0}},
	} {
		p, ok := a40.Profile(c.profile)
		if !ok {
			t.Fatalf("%s missing", c.profile)
		}
		if p.Memory != c.memory {
			t.Errorf("%s memory slices %d, want %d", c.profile, p.Memory, c.memory)
		}
		if d := cmp.Diff(c.starts, p.Starts); d != "" {
			t.Errorf("%s starts (-want +got):\n%s", c.profile, d)
		}
	}
	// The catalog's A100 (80 GB) and H100 (80 GB) reach their geometries.
	for model, want := range map[string]string{"A100": "A100-SXM4-80GB", "H100": "H100-SXM5-80GB"} {
		g, ok := MIGFor(model)
		if !ok || g.Name != want {
			t.Errorf("MIGFor(%s) = %v, %v; want %s", model, g, ok, want)
		}
	}
	if _, ok := MIGFor("V100M16"); ok {
		t.Error("V100 has no MIG")
	}
}

func TestParseMIGRejects(t *testing.T) {
	head := "migs:\n  - name: X\n    models: []\n    compute_slices: 7\n    memory_slices: 8\n    profiles:\n"
	for _, c := range []struct{ name, profile, want string }{
		{"start off the GPU", "      - {name: 3g, compute: 3, memory: 4, max: 2, starts: [0, 5]}\n", "start 5"},
		{"too many instances", "      - {name: 4g, compute: 4, memory: 4, max: 2, starts: [0, 4]}\n", "max 2"},
		{"no starts", "      - {name: 1g, compute: 1, memory: 1, max: 7, starts: []}\n", "no starts"},
		{"unknown field", "      - {name: 1g, compute: 1, memory: 1, max: 7, starts: [0], watts: 3}\n", "watts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseMIG([]byte(head + c.profile))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one naming %q", err, c.want)
			}
		})
	}
}

// FuzzParseMIG: any input either fails to parse or gives geometries whose
// every start keeps its instance on the GPU.
func FuzzParseMIG(f *testing.F) {
	f.Add(migData)
	f.Add([]byte("migs:\n  - {name: X, models: [], compute_slices: 7, memory_slices: 8, profiles: [{name: 1g, compute: 1, memory: 1, max: 7, starts: [0]}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		gs, err := ParseMIG(data)
		if err != nil {
			return
		}
		for _, g := range gs {
			for _, p := range g.Profiles {
				for _, s := range p.Starts {
					if s < 0 || s+p.Memory > g.MemorySlices || p.Max*p.Compute > g.ComputeSlices {
						t.Fatalf("%s %s: start %d accepted", g.Name, p.Name, s)
					}
				}
			}
		}
	})
}

func TestMIGProfileFor(t *testing.T) {
	cat := Default()
	for _, c := range []struct {
		name    string
		models  []string
		profile string
		// milli = compute slices x 1000 / 7, rounded down.
		milli   int64
		wantErr string
	}{
		{"A100 3g", []string{"A100"}, "3g.40gb", 3 * 1000 / 7, ""},                     // 428
		{"H100 7g", []string{"H100"}, "7g.80gb", 1000, ""},                             // 7/7
		{"any model 1g", nil, "1g.10gb", 1000 / 7, ""},                                 // 142, on A100 40 and 80 GB alike
		{"non-MIG model passed over", []string{"V100M16", "A100"}, "2g.20gb", 285, ""}, // 2 x 1000 / 7
		{"40 GB name on the 80 GB part", []string{"A100"}, "3g.20gb", 0, "none of the accepted GPU models (A100) has it"},
		{"no MIG model", []string{"V100M16"}, "1g.10gb", 0, "has MIG"},
		{"unknown profile anywhere", nil, "5g.50gb", 0, "no MIG GPU has it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, milli, err := MIGProfileFor(cat, c.models, c.profile)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || milli != c.milli {
				t.Fatalf("MIGProfileFor = %d, %v; want %d", milli, err, c.milli)
			}
		})
	}
}

// The stand-in rule of shares as MIG instances: the fewest compute
// slices c with c/7 >= the share, then the fewest memory slices.
func TestSmallestProfileFor(t *testing.T) {
	g, _ := MIGFor("A100")
	for _, c := range []struct {
		milli int64
		want  string
	}{
		{50, "1g.10gb"},  // 1/7 = 0.143 >= 0.05; 1g.10gb has 1 memory slice, 1g.20gb 2
		{143, "2g.20gb"}, // 1/7 = 0.1428... < 0.143
		{142, "1g.10gb"}, // 142 x 7 = 994 <= 1000
		{460, "4g.40gb"}, // 3/7 = 0.429 < 0.46 <= 4/7
		{590, "7g.80gb"}, // no 5g or 6g profile
		{1000, "7g.80gb"},
	} {
		p, ok := g.SmallestProfileFor(c.milli)
		if !ok || p.Name != c.want {
			t.Errorf("SmallestProfileFor(%d) = %v, %v; want %s", c.milli, p, ok, c.want)
		}
	}
	if p, ok := g.SmallestProfileFor(1001); ok {
		t.Errorf("SmallestProfileFor(1001) = %s, want none", p.Name)
	}
}
