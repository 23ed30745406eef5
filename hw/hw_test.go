package hw

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

func TestDefaultCatalogMatchesPaperTableII(t *testing.T) {
	c := Default()
	// pwr-fgd Table II and Section V-B.
	cases := []struct {
		name      string
		idle, tdp Watts
	}{
		{"V100M16", 30, 300}, {"V100M32", 30, 300}, {"P100", 25, 250}, {"T4", 10, 70},
		{"A10", 30, 150}, {"G2", 30, 150}, {"G3", 50, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := c.GPU(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if g.IdleW != tc.idle || g.TDPW != tc.tdp {
				t.Errorf("%s: idle %v tdp %v, want %v %v", tc.name, g.IdleW, g.TDPW, tc.idle, tc.tdp)
			}
			if g.Source == "" {
				t.Errorf("%s: no source", tc.name)
			}
		})
	}
	cpu, err := c.CPU(DefaultCPU)
	if err != nil {
		t.Fatal(err)
	}
	if cpu.IdleW != 15 || cpu.TDPW != 120 || cpu.Cores != 16 || cpu.VCPUs() != 32 {
		t.Errorf("default CPU = %+v, want 15 W idle, 120 W TDP, 16 cores, 32 vCPU", cpu)
	}
}

// The current parts' figures as Vadari's "The Model Parking Tax"
// (arXiv:2605.23918) gives them, bare idle from Table 2 and TDP from
// Table 1, and the B200 as the study's later version and samples give it;
// each GPU feature discovery name resolves to its model.
func TestCurrentPartsMatchVadari(t *testing.T) {
	type part struct {
		Name             string
		IdleW, TDPW      Watts
		MemoryGiB        float64
		Curve            []CurvePoint
		CitesMeasurement bool
	}
	cases := []struct {
		label string
		want  part
	}{
		{"NVIDIA-H100-80GB-HBM3", part{"H100", 71.8, 700, 80, nil, true}},
		{"NVIDIA-L40S", part{"L40S", 35.6, 350, 48, nil, true}},
		{"NVIDIA-A100-80GB-PCIe", part{"A100-PCIe-80GB", 53.7, 300, 80, nil, true}},
		// Median of the 16 bare-idle samples at 120 MHz
		// (181.46 ... 182.25 W; 181.69 and 181.70 in the middle).
		{"NVIDIA-B200", part{"B200", 181.7, 1000, 180, nil, true}},
	}
	c := Default()
	for _, tc := range cases {
		t.Run(tc.want.Name, func(t *testing.T) {
			for _, name := range []string{tc.want.Name, tc.label} {
				g, err := c.GPU(name)
				if err != nil {
					t.Fatal(err)
				}
				got := part{g.Name, g.IdleW, g.TDPW, g.MemoryGiB, g.Curve,
					strings.Contains(g.Source, "arXiv:2605.23918") || strings.Contains(g.Source, "gpu-parking-tax")}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("GPU(%q) (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// MI300X: the median of the readings of the seven GPUs without work in
// cmontemuino/amd-mi300x-ml-benchmarks' monitoring files (146 W; per card
// 145, 147, 150, 152, 140, 147, 144 W), AMD's 750 W and 192 GB.
func TestMI300XFromPublicData(t *testing.T) {
	g, err := Default().GPU("MI300X")
	if err != nil {
		t.Fatal(err)
	}
	if g.IdleW != 146 || g.TDPW != 750 || g.MemoryGiB != 192 {
		t.Errorf("MI300X = idle %v tdp %v memory %v, want 146 750 192", g.IdleW, g.TDPW, g.MemoryGiB)
	}
	for _, want := range []string{"amd-mi300x-ml-benchmarks", "not named", "MI300X-NPS1-SPX-192GB-750W"} {
		if !strings.Contains(g.Source, want) {
			t.Errorf("MI300X source lacks %q: %s", want, g.Source)
		}
	}
}

func TestCatalogErrors(t *testing.T) {
	cases := map[string]string{
		"unknown field":  "gpus:\n  - name: X\n    idle_w: 1\n    tdp_w: 2\n    source: s\n    bogus: 1\n",
		"idle above tdp": "gpus:\n  - name: X\n    idle_w: 3\n    tdp_w: 2\n    source: s\n",
		"missing source": "gpus:\n  - name: X\n    idle_w: 1\n    tdp_w: 2\n",
		"bad alias":      "aliases:\n  - name: Y\n    target: nope\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(doc)); err == nil {
				t.Fatalf("Parse accepted %q", doc)
			}
		})
	}
	// Watts above MaxDeviceW (100 kW) are refused with the model and the
	// field, in a file, a --catalog and a scenario's hardware (both With).
	huge := []struct{ doc, want string }{
		{"gpus:\n  - name: X\n    idle_w: 1e30\n    tdp_w: 1e30\n    source: s\n", "gpus[0] (X).idle_w: 1e+30 W, over the 100000 W bound"},
		{"gpus:\n  - name: X\n    idle_w: 1\n    tdp_w: 1e15\n    source: s\n", "gpus[0] (X).tdp_w: 1e+15 W"},
		{"gpus:\n  - name: X\n    idle_w: 1\n    tdp_w: 100001\n    source: s\n", "gpus[0] (X).tdp_w: 100001 W"},
		{"cpus:\n  - name: C\n    idle_w: 1\n    tdp_w: 2e5\n    cores: 1\n    threads_per_core: 1\n    source: s\n", "cpus[0] (C).tdp_w: 200000 W"},
	}
	for _, c := range huge {
		if _, err := Parse([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want %q", c.doc, err, c.want)
		}
		extra := &Catalog{}
		if err := yaml.Unmarshal([]byte(c.doc), extra); err != nil {
			t.Fatal(err)
		}
		if _, err := Default().With(extra, "hardware"); err == nil || !strings.Contains(err.Error(), "hardware: "+c.want) {
			t.Errorf("With(%q) = %v, want %q", c.doc, err, c.want)
		}
	}
	// At the bound itself: accepted.
	if _, err := Parse([]byte("gpus:\n  - name: X\n    idle_w: 100000\n    tdp_w: 100000\n    source: s\n")); err != nil {
		t.Errorf("100 kW: %v", err)
	}
	if _, err := Default().GPU("H9000"); err == nil || !strings.Contains(err.Error(), "unknown GPU model") {
		t.Fatalf("unknown model error = %v", err)
	}
}

// A user's models join the embedded ones; a clash with a built-in name, a
// NaN or infinite figure, or a missing source is an error naming where it
// came from; an unknown model's error says how to add one.
func TestWithUserModels(t *testing.T) {
	base := Default()
	extra := &Catalog{
		GPUs:    []GPUModel{{Name: "H200-SXM", IdleW: 70, TDPW: 700, MemoryGiB: 141, Source: "test"}},
		Aliases: []Alias{{Name: "NVIDIA-H200", Target: "H200-SXM", Source: "test"}},
	}
	c, err := base.With(extra, "my.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if g, err := c.GPU("NVIDIA-H200"); err != nil || g.TDPW != 700 {
		t.Fatalf("alias of the added model: %+v %v", g, err)
	}
	if _, err := c.GPU("A100"); err != nil {
		t.Fatal("built-in model lost:", err)
	}
	if _, err := base.GPU("H200-SXM"); err == nil {
		t.Fatal("With changed the base catalog")
	}
	for _, bad := range []*Catalog{
		{GPUs: []GPUModel{{Name: "A100", IdleW: 1, TDPW: 2, Source: "x"}}},
		{Aliases: []Alias{{Name: "NVIDIA-H100-80GB-HBM3", Target: "A100", Source: "x"}}},
		{GPUs: []GPUModel{{Name: "X", IdleW: Watts(math.NaN()), TDPW: 2, Source: "x"}}},
		{GPUs: []GPUModel{{Name: "X", IdleW: 1, TDPW: Watts(math.Inf(1)), Source: "x"}}},
		{GPUs: []GPUModel{{Name: "X", IdleW: 1, TDPW: 2}}},
		{CPUs: []CPUModel{{Name: "Y", IdleW: 1, TDPW: Watts(math.NaN()), Cores: 1, ThreadsPerCore: 1, Source: "x"}}},
		{Aliases: []Alias{{Name: "Z", Target: "nothing", Source: "x"}}},
	} {
		if _, err := base.With(bad, "my.yaml"); err == nil || !strings.HasPrefix(err.Error(), "my.yaml: ") {
			t.Errorf("%+v: error %v, want one naming my.yaml", bad, err)
		}
	}
	_, err = base.GPU("H9000")
	if err == nil || !strings.Contains(err.Error(), "hardware section or a --catalog file") {
		t.Errorf("unknown model error %v does not say how to add one", err)
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "c.yaml")
	os.WriteFile(good, []byte("gpus:\n  - {name: L40S, idle_w: 35, tdp_w: 350, memory_gib: 48, source: test}\n"), 0o644)
	c, err := ParseFile(good)
	if err != nil || len(c.GPUs) != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("gpus:\n  - {name: L40S, idle: 35}\n"), 0o644)
	if _, err := ParseFile(bad); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error %v, want the file and line 2", err)
	}
}

// A measured curve is piecewise linear from idle (share 0) through its
// points to TDP (share 1); without one any allocation draws TDP; a curve
// out of order or outside idle..TDP is refused.
func TestPowerCurve(t *testing.T) {
	g := GPUModel{Name: "X", IdleW: 50, TDPW: 400, Source: "test", Curve: []CurvePoint{{Share: 0.5, Watts: 300}}}
	for u, want := range map[float64]Watts{0: 50, 0.25: 175, 0.5: 300, 0.75: 350, 1: 400} {
		if got := g.At(u); math.Abs(float64(got-want)) > 1e-9 {
			t.Errorf("At(%v) = %v, want %v", u, got, want)
		}
	}
	plain := GPUModel{IdleW: 50, TDPW: 400}
	if plain.At(0) != 50 || plain.At(0.01) != 400 {
		t.Error("without a curve: idle at 0, TDP above")
	}
	for _, bad := range [][]CurvePoint{{{0.5, 300}, {0.4, 350}}, {{0.5, 500}}, {{0.5, 20}}, {{1.5, 300}}, {{0.5, 300}, {0.8, 250}}} {
		c := &Catalog{GPUs: []GPUModel{{Name: "Y", IdleW: 50, TDPW: 400, Source: "t", Curve: bad}}}
		if _, err := Default().With(c, "c.yaml"); err == nil || !strings.Contains(err.Error(), "curve") {
			t.Errorf("curve %v: %v", bad, err)
		}
	}
}

// Every entry of the embedded catalog names where its figures come from
// (aliases included, which Parse does not require of a user's file), has
// 0 < idle < TDP, and a GPU has its memory; no figure is marked as a
// placeholder. Parse checks the rest (aliases resolve, names are unique).
func TestEmbeddedCatalogEntriesAreSourced(t *testing.T) {
	c := Default()
	if len(c.GPUs) == 0 || len(c.CPUs) == 0 {
		t.Fatalf("embedded catalog: %d GPUs, %d CPUs", len(c.GPUs), len(c.CPUs))
	}
	sourced := func(kind, name, src string) {
		t.Helper()
		if strings.TrimSpace(src) == "" {
			t.Errorf("%s %s: no source", kind, name)
		}
		if strings.Contains(strings.ToLower(src), "placeholder") {
			t.Errorf("%s %s: source %q marks a placeholder", kind, name, src)
		}
	}
	for _, g := range c.GPUs {
		sourced("GPU", g.Name, g.Source)
		if !(g.IdleW > 0 && g.IdleW < g.TDPW) {
			t.Errorf("GPU %s: idle %v W, TDP %v W, want 0 < idle < TDP", g.Name, g.IdleW, g.TDPW)
		}
		if !(g.MemoryGiB > 0) {
			t.Errorf("GPU %s: memory %v GiB", g.Name, g.MemoryGiB)
		}
	}
	for _, p := range c.CPUs {
		sourced("CPU", p.Name, p.Source)
		if !(p.IdleW > 0 && p.IdleW < p.TDPW) {
			t.Errorf("CPU %s: idle %v W, TDP %v W, want 0 < idle < TDP", p.Name, p.IdleW, p.TDPW)
		}
	}
	for _, a := range c.Aliases {
		sourced("alias", a.Name, a.Source)
		_, gerr := c.GPU(a.Name)
		_, cerr := c.CPU(a.Name)
		if gerr != nil && cerr != nil {
			t.Errorf("alias %s -> %s resolves to no model", a.Name, a.Target)
		}
	}
}
