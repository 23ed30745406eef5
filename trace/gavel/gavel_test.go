package gavel

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEmbedded(t *testing.T) {
	tp, err := V100()
	if err != nil {
		t.Fatal(err)
	}
	// 26 job types at scale factor 1 (data/README.md).
	if len(tp.Keys) != 26 {
		t.Fatalf("keys = %d, want 26", len(tp.Keys))
	}
	a := Key{"ResNet-18 (batch size 16)", 1}
	if got := tp.Isolated[a]; got < 32.35 || got > 32.36 {
		t.Errorf("isolated %v = %v, want 32.353 steps/s as in the file", a, got)
	}
	b := Key{"ResNet-18 (batch size 256)", 1}
	ra, rb, ok := tp.Pair(a, b)
	if !ok || ra < 24.45 || ra > 24.46 || rb < 10.30 || rb > 10.31 {
		t.Errorf("pair = %v %v %v, want 24.45, 10.30", ra, rb, ok)
	}
	rb2, ra2, _ := tp.Pair(b, a)
	if rb2 != rb || ra2 != ra {
		t.Errorf("pair lookup is not symmetric")
	}
	jobs, err := MSR()
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 951 {
		t.Fatalf("jobs = %d, want 951", len(jobs))
	}
	for _, j := range jobs {
		if _, ok := tp.Isolated[Key{j.Type, j.Scale}]; !ok {
			t.Fatalf("line %d: %s x%d has no V100 throughput", j.Line, j.Type, j.Scale)
		}
	}
}

func TestThroughputErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"not JSON", `{`, "f.json: line 1, column 1: unexpected end of JSON input"},
		{"NaN", "{\"v100\": {\"('A', 1)\": {\n\"null\": NaN}}}", "f.json: line 2, column 9: invalid character 'N' looking for beginning of value (NaN and Infinity are not JSON numbers: rates must be finite)"},
		{"-Infinity", `{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [-Infinity, 1]}}}`, "f.json: line 1, column 49: invalid character 'I' in numeric literal (NaN and Infinity"},
		{"not an object", `[]`, "f.json: $: json: cannot unmarshal array"},
		{"worker not an object", `{"v100": 5}`, "f.json: $.v100: want an object of keys ('job type', scale)"},
		{"row not an object", `{"v100": {"('A', 1)": 5}}`, `f.json: $.v100["('A', 1)"]: want an object of null and co-tenants`},
		{"worker missing", `{"k80": {}}`, "$.v100: worker type missing (the file has k80)"},
		{"bad key", `{"v100": {"bad": {"null": 1}}}`, `$.v100["bad"]`},
		{"scale 0", `{"v100": {"('A', 0)": {"null": 1}}}`, `$.v100["('A', 0)"]: key "('A', 0)": scale factor`},
		{"key written twice", `{"v100": {"('A', 1)": {"null": 1}, "('A',1)": {"null": 2}}}`, `$.v100["('A',1)"]: the key ('A', 1) is also written "('A', 1)"`},
		{"isolated missing", `{"v100": {"('A', 1)": {}}}`, `$.v100["('A', 1)"].null: isolated throughput missing`},
		{"isolated negative", `{"v100": {"('A', 1)": {"null": -1}}}`, `.null: isolated throughput is not a number of steps/s >= 0`},
		{"isolated string", `{"v100": {"('A', 1)": {"null": "NaN"}}}`, `.null: isolated throughput is not a number`},
		{"isolated null", `{"v100": {"('A', 1)": {"null": null}}}`, `.null: isolated throughput is not a number`},
		{"isolated overflows", `{"v100": {"('A', 1)": {"null": 1e400}}}`, `.null: isolated throughput is not a number`},
		{"co-tenant unknown", `{"v100": {"('A', 1)": {"null": 1, "('B', 1)": [1, 2]}}}`, `["('B', 1)"]: co-tenant has no isolated`},
		{"one rate", `{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [1]}}}`, `want [this job's steps/s`},
		{"rate negative", `{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [1, -2]}}}`, `["('A', 1)"][1]: throughput`},
		{"rate null", `{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [1, null]}}}`, `["('A', 1)"][1]: throughput`},
		{"scales differ", `{"v100": {"('A', 1)": {"null": 1, "('A', 2)": [1, 1]}, "('A', 2)": {"null": 2}}}`, `["('A', 1)"]["('A', 2)"]: co-tenants on 1 and 2 GPUs`},
		{"rows disagree", `{"v100": {"('A', 1)": {"null": 1, "('B', 1)": [0.5, 0.25]}, "('B', 1)": {"null": 1, "('A', 1)": [0.25, 0.75]}}}`, `$.v100["('A', 1)"]["('B', 1)"]: [0.5, 0.25] disagrees with the pair's other row, [0.25, 0.75]`},
		{"self pair asymmetric", `{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [0.5, 0.4]}}}`, `disagrees with the pair's other row`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadThroughputs("f.json", []byte(c.in), "v100")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err = %v, want %q", c.in, err, c.want)
			}
		})
	}
}

// TestReadThroughputsRows: a pair given only in the row of its larger key
// is kept (rates turned to the smaller key's order), and a key measured at
// 0 steps/s is listed as unrunnable with its pairs left out.
func TestReadThroughputsRows(t *testing.T) {
	tp, err := ReadThroughputs("f.json", []byte(`{"w": {
		"('A', 1)": {"null": 4},
		"('B', 1)": {"null": 2, "('A', 1)": [1, 3]},
		"('C', 1)": {"null": 0, "('A', 1)": [0, 0]}}}`), "w")
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := Key{"A", 1}, Key{"B", 1}, Key{"C", 1}
	// B's row gives [B's rate, A's rate] = [1, 3]; the pair is stored as (A, B).
	if ra, rb, ok := tp.Pair(a, b); !ok || ra != 3 || rb != 1 || tp.Pairs[0].A != a {
		t.Errorf("Pair(A, B) = %v, %v, %v; pairs %+v", ra, rb, ok, tp.Pairs)
	}
	if diff := cmp.Diff([]Key{c}, tp.Unrunnable); diff != "" {
		t.Errorf("unrunnable (-want +got):\n%s", diff)
	}
	if _, _, ok := tp.Pair(a, c); ok || len(tp.Pairs) != 1 || len(tp.Keys) != 2 {
		t.Errorf("C's pair kept: %+v, keys %v", tp.Pairs, tp.Keys)
	}
}

// TestSimulationTables reads every worker type of the embedded copy of
// Gavel's simulation_throughputs.json: every key of the file (26 job types
// at scale 1 and 19 at scales 2, 4 and 8: 83) loads, and the rates are the
// file's (values read from the file by hand).
func TestSimulationTables(t *testing.T) {
	cases := []struct {
		worker string
		// keys and pairs runnable (K80: ResNet-50 (batch size 128) on 2,
		// 4 and 8 GPUs measured 0 steps/s, so 80 keys; pairs: 351 at scale
		// 1 and 190 at 2, 4 and 8 (921), less the 57 of those three keys).
		keys, pairs, unrunnable, placeholders int
		rn18x4, a3c                           float64
		pa, pb                                Key
		ra, rb                                float64
	}{
		{"v100", 83, 921, 0, 14, 123.85376642692827, 7.175767179667988,
			Key{"ResNet-18 (batch size 16)", 1}, Key{"ResNet-18 (batch size 64)", 1}, 32.353384328946916, 24.093231895382736},
		{"p100", 83, 921, 0, 0, 94.32078314001782, 5.681346110543853,
			Key{"ResNet-18 (batch size 16)", 1}, Key{"ResNet-18 (batch size 16)", 1}, 21.42923282537872, 21.42923282537872},
		{"k80", 80, 864, 3, 0, 16.121271269107403, 3.4387678290723933,
			Key{"ResNet-18 (batch size 16)", 1}, Key{"ResNet-18 (batch size 32)", 1}, 2.539979567443098, 3.1201925448827033},
	}
	for _, c := range cases {
		t.Run(c.worker, func(t *testing.T) {
			tp, err := Simulation(c.worker)
			if err != nil {
				t.Fatal(err)
			}
			if len(tp.Keys) != c.keys || len(tp.Pairs) != c.pairs || len(tp.Unrunnable) != c.unrunnable {
				t.Errorf("keys %d, pairs %d, unrunnable %d; want %d, %d, %d", len(tp.Keys), len(tp.Pairs), len(tp.Unrunnable), c.keys, c.pairs, c.unrunnable)
			}
			if got, ok := tp.Rate(Key{"ResNet-18 (batch size 16)", 4}); !ok || got != c.rn18x4 {
				t.Errorf("ResNet-18 (batch size 16) x4 = %v, %v; want %v", got, ok, c.rn18x4)
			}
			if got, _ := tp.Rate(Key{"A3C", 1}); got != c.a3c {
				t.Errorf("A3C x1 = %v, want %v", got, c.a3c)
			}
			if ra, rb, ok := tp.Pair(c.pa, c.pb); !ok || ra != c.ra || rb != c.rb {
				t.Errorf("pair %v %v = %v %v %v, want %v %v", c.pa, c.pb, ra, rb, ok, c.ra, c.rb)
			}
			// Gavel measured no space-sharing of multi-GPU jobs: every pair
			// at scale 2, 4 and 8 is [0, 0] in the file.
			if ra, rb, ok := tp.Pair(Key{"ResNet-18 (batch size 64)", 2}, Key{"LM (batch size 20)", 2}); !ok || ra != 0 || rb != 0 {
				t.Errorf("scale-2 pair = %v %v %v, want 0 0 true", ra, rb, ok)
			}
			ph := tp.PlaceholderPairs()
			if len(ph) != c.placeholders {
				t.Errorf("placeholder pairs = %d, want %d", len(ph), c.placeholders)
			}
			for _, k := range tp.Keys {
				if err := tp.Check(k); err != nil {
					t.Errorf("Check(%v) = %v", k, err)
				}
			}
		})
	}
}

// TestPlaceholderPairs: the 14 V100 single-GPU pairs whose co-located
// rates equal the isolated ones, the same in the embedded single-GPU table
// and in the full one; e.g. Recommendation (batch size 1024) with
// ResNet-18 (batch size 16).
func TestPlaceholderPairs(t *testing.T) {
	small, err := V100()
	if err != nil {
		t.Fatal(err)
	}
	full, err := Simulation("v100")
	if err != nil {
		t.Fatal(err)
	}
	a, b := small.PlaceholderPairs(), full.PlaceholderPairs()
	if diff := cmp.Diff(a, b); diff != "" || len(a) != 14 {
		t.Fatalf("%d placeholder pairs; embedded vs full (-small +full):\n%s", len(a), diff)
	}
	want := Pair{A: Key{"Recommendation (batch size 1024)", 1}, B: Key{"ResNet-18 (batch size 16)", 1}}
	found := false
	for _, p := range a {
		if p.RateA != small.Isolated[p.A] || p.RateB != small.Isolated[p.B] || p.A.Scale != 1 {
			t.Errorf("%+v is not a placeholder", p)
		}
		found = found || (p.A == want.A && p.B == want.B)
	}
	if !found {
		t.Errorf("%v + %v missing from %+v", want.A, want.B, a)
	}
}

func TestCheck(t *testing.T) {
	small, err := V100()
	if err != nil {
		t.Fatal(err)
	}
	k80, err := Simulation("k80")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		tp   *Throughputs
		k    Key
		want string
	}{
		{"runs", small, Key{"A3C", 1}, ""},
		{"scale not measured", small, Key{"A3C", 4}, `"A3C" has no v100 throughput on 4 GPU(s) in gavel:v100_scale1.json (scale factors there: 1)`},
		{"unknown type", small, Key{"ResNet-18", 1}, `unknown job type "ResNet-18": not in gavel:v100_scale1.json for v100 (job types there: A3C; CycleGAN;`},
		{"zero on k80", k80, Key{"ResNet-50 (batch size 128)", 2}, `"ResNet-50 (batch size 128)" on 2 GPU(s) has throughput 0 on k80 in gavel:simulation_throughputs.json (it does not run there)`},
		{"k80 scale 16", k80, Key{"ResNet-50 (batch size 128)", 16}, `(scale factors there: 1, 2, 4, 8)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.tp.Check(c.k)
			if c.want == "" {
				if err != nil {
					t.Errorf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Check = %v, want %q", err, c.want)
			}
		})
	}
}

// TestReadTraces reads Gavel's traces in both layouts: the three embedded
// physical-cluster traces (10 fields) and msr traces (7 fields); the
// figures were counted in the files with awk (jobs, jobs on more than one
// GPU, the most GPUs, the sum of total_steps, the last line's arrival).
// Every job of the 10-field traces has a V100 throughput in Gavel's
// simulation table; on the K80 one job of max_min_fairness does not run.
func TestReadTraces(t *testing.T) {
	v100, err := Simulation("v100")
	if err != nil {
		t.Fatal(err)
	}
	k80, err := Simulation("k80")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) ([]Job, error) {
		if strings.HasSuffix(name, ".trace") {
			f, err := os.Open(name)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return ReadTrace(name, f)
		}
		if name == "msr" {
			return MSR()
		}
		return ClusterTrace(name)
	}
	cases := []struct {
		name              string
		layout            Layout
		jobs, multi, most int
		steps, lastArrSec float64
		k80Unrunnable     int
	}{
		{"artifact_evaluation", LayoutCluster, 15, 3, 2, 304697, 0, 0},
		{"max_min_fairness", LayoutCluster, 96, 37, 4, 18166806, 46317, 1},
		{"minimize_makespan", LayoutCluster, 100, 29, 4, 42596220, 0, 0},
		{"testdata/23dbec.trace", LayoutMSR, 9, 7, 8, 4632861, 188011, 0},
		{"testdata/795a4c.trace", LayoutMSR, 3, 0, 1, 85353, 3362, 0},
		{"msr", LayoutMSR, 951, 0, 1, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jobs, err := read(c.name)
			if err != nil {
				t.Fatal(err)
			}
			multi, most, steps, unrun := 0, 0, 0.0, 0
			for _, j := range jobs {
				if j.Layout != c.layout || j.PriorityWeight != 1 || j.SLO != 0 {
					t.Errorf("line %d: layout %d, priority %v, SLO %v; want %d, 1, 0", j.Line, j.Layout, j.PriorityWeight, j.SLO, c.layout)
				}
				if j.Scale > 1 {
					multi++
				}
				most, steps = max(most, j.Scale), steps+j.Steps
				if c.layout == LayoutCluster {
					if err := v100.Check(j.Key()); err != nil {
						t.Errorf("line %d: %v", j.Line, err)
					}
					if k80.Check(j.Key()) != nil {
						unrun++
					}
				}
			}
			if len(jobs) != c.jobs || multi != c.multi || most != c.most || unrun != c.k80Unrunnable {
				t.Errorf("jobs %d, multi-GPU %d, most GPUs %d, K80 unrunnable %d; want %d, %d, %d, %d", len(jobs), multi, most, unrun, c.jobs, c.multi, c.most, c.k80Unrunnable)
			}
			if c.steps > 0 && (steps != c.steps || jobs[len(jobs)-1].ArrivalSec != c.lastArrSec) {
				t.Errorf("steps %v, last arrival %v; want %v, %v", steps, jobs[len(jobs)-1].ArrivalSec, c.steps, c.lastArrSec)
			}
		})
	}
}

func TestTraceFields(t *testing.T) {
	jobs, err := ReadTrace("t.trace", strings.NewReader("A\tc\tdir\t-n\t0\t100\t4\t2.5\t1.5\t30.5\r\n\nB\tc\tdir\t-n\t1\t7\t1\t1\t-1.000000\t0\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{Type: "A", Steps: 100, Scale: 4, ArrivalSec: 30.5, PriorityWeight: 2.5, SLO: 1.5, Layout: LayoutCluster, Line: 1},
		{Type: "B", Steps: 7, Scale: 1, ArrivalSec: 0, PriorityWeight: 1, Layout: LayoutCluster, Line: 3},
	}
	if diff := cmp.Diff(want, jobs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTraceErrors(t *testing.T) {
	const msr = "A\tc\t-n\t1\t10\t0\t1\n"
	const cl = "A\tc\tdir\t-n\t1\t10\t1\t1\t-1\t0\n"
	// with replaces field i of a one-line trace by v.
	with := func(line string, i int, v string) string {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		f[i] = v
		return strings.Join(f, "\t") + "\n"
	}
	cases := []struct{ name, in, want string }{
		{"2 fields", "a\tb\n", "t.trace:1: 2 tab-separated fields, want 7 (msr layout) or 10 (Gavel's parse_trace layout)"},
		{"layouts mixed", msr + cl, "t.trace:2: 10 tab-separated fields, want 7 as on line 1 (one layout per file)"},
		{"layouts mixed 10 first", "\n" + cl + msr, "t.trace:3: 7 tab-separated fields, want 10 as on line 2"},
		{"no jobs", "\n", "no jobs"},
		{"msr job_type empty", with(msr, 0, " "), "t.trace:1: column job_type: empty"},
		{"msr needs_data_dir", with(msr, 3, "2"), "t.trace:1: column needs_data_dir"},
		{"msr total_steps text", with(msr, 4, "x"), "t.trace:1: column total_steps"},
		{"msr total_steps zero", with(msr, 4, "0"), "column total_steps"},
		{"msr total_steps NaN", with(msr, 4, "NaN"), "column total_steps"},
		{"msr arrival negative", msr + with(msr, 5, "-5"), "t.trace:2: column arrival_time"},
		{"msr arrival Inf", with(msr, 5, "+Inf"), "column arrival_time"},
		{"msr scale 0", with(msr, 6, "0"), "column scale_factor"},
		{"msr scale 65", with(msr, 6, "65"), "column scale_factor"},
		{"job_type empty", with(cl, 0, ""), "t.trace:1: column job_type: empty"},
		{"needs_data_dir", with(cl, 4, "yes"), "t.trace:1: column needs_data_dir"},
		{"total_steps fraction", with(cl, 5, "10.5"), `column total_steps: "10.5" is not an integer`},
		{"total_steps negative", with(cl, 5, "-10"), "column total_steps"},
		{"scale_factor", with(cl, 6, "1.5"), "column scale_factor"},
		{"priority_weight 0", with(cl, 7, "0"), "column priority_weight"},
		{"priority_weight NaN", with(cl, 7, "nan"), "column priority_weight"},
		{"SLO -2", with(cl, 8, "-2"), `column SLO: "-2" is not -1 (none)`},
		{"SLO 0", with(cl, 8, "0"), "column SLO"},
		{"SLO Inf", with(cl, 8, "inf"), "column SLO"},
		{"arrival negative", cl + with(cl, 9, "-1"), "t.trace:2: column arrival_time"},
		{"arrival huge", with(cl, 9, "1e300"), "column arrival_time"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadTrace("t.trace", strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
			}
		})
	}
}

func FuzzReadThroughputs(f *testing.F) {
	f.Add(v100JSON[:2000])
	f.Add([]byte(`{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [1, 1]}}}`))
	f.Add([]byte(`{"v100": {"('A', 2)": {"null": 0, "('B', 2)": [0, 0]}, "('B', 2)": {"null": 3, "('A', 2)": [0, 0]}}}`))
	f.Add(simulationJSON[:3000])
	f.Fuzz(func(t *testing.T, b []byte) {
		tp, err := ReadThroughputs("f", b, "v100")
		if err != nil {
			return
		}
		for _, p := range tp.Pairs {
			if !validRate(p.RateA) || !validRate(p.RateB) || p.A.Scale != p.B.Scale {
				t.Fatalf("bad pair accepted: %+v", p)
			}
			if _, ok := tp.Isolated[p.A]; !ok {
				t.Fatalf("pair of a key without an isolated rate: %+v", p)
			}
			if ra, rb, ok := tp.Pair(p.B, p.A); !ok || ra != p.RateB || rb != p.RateA {
				t.Fatalf("pair lookup is not symmetric: %+v", p)
			}
		}
		for _, k := range tp.Keys {
			if tp.Check(k) != nil {
				t.Fatalf("key %v fails Check", k)
			}
		}
		for k, v := range tp.Isolated {
			if !(v > 0) {
				t.Fatalf("isolated %v = %v accepted", k, v)
			}
		}
	})
}

func FuzzReadTrace(f *testing.F) {
	f.Add(msrTrace[:600])
	f.Add(maxMinFairness[:1200])
	f.Add([]byte("A\tc\tdir\t-n\t0\t100\t4\t2.5\t1.5\t30.5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		jobs, err := ReadTrace("t", bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, j := range jobs {
			if !(j.Steps >= 1 && j.Steps <= MaxSteps) || j.Scale < 1 || j.Scale > MaxScale || !(j.ArrivalSec >= 0 && j.ArrivalSec < MaxArrivalSec) || j.Type == "" {
				t.Fatalf("bad job accepted: %+v", j)
			}
			if !(j.PriorityWeight > 0 && j.PriorityWeight <= MaxPriorityWeight) || !(j.SLO == 0 || j.SLO > 0 && j.SLO <= MaxSLO) || j.Layout != jobs[0].Layout {
				t.Fatalf("bad job accepted: %+v", j)
			}
		}
	})
}

func TestNewThroughputs(t *testing.T) {
	a, b := Key{"A", 1}, Key{"B", 2}
	tp, err := NewThroughputs("w", map[Key]float64{b: 2, a: 1}, []Pair{{A: b, B: a, RateA: 0.5, RateB: 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	ra, rb, ok := tp.Pair(a, b)
	if !ok || ra != 0.25 || rb != 0.5 || len(tp.Keys) != 2 || tp.Keys[0] != a {
		t.Errorf("pair %v %v %v, keys %v", ra, rb, ok, tp.Keys)
	}
	bad := []struct {
		iso   map[Key]float64
		pairs []Pair
		want  string
	}{
		{map[Key]float64{a: 0}, nil, "want a positive number"},
		{map[Key]float64{a: 1}, []Pair{{A: a, B: b}}, "has no isolated rate"},
		{map[Key]float64{a: 1, b: 1}, []Pair{{A: a, B: b, RateA: -1}}, "are not numbers >= 0"},
		{map[Key]float64{a: 1, b: 1}, []Pair{{A: a, B: b}, {A: b, B: a}}, "appears twice"},
	}
	for _, c := range bad {
		if _, err := NewThroughputs("w", c.iso, c.pairs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: err = %v, want %q", c.iso, c.pairs, err, c.want)
		}
	}
}
