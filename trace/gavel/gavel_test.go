package gavel

import (
	"bytes"
	"strings"
	"testing"
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
	cases := []struct{ in, want string }{
		{`{`, "f.json: $:"},
		{`{"k80": {}}`, "$.v100: worker type missing"},
		{`{"v100": {"bad": {"null": 1}}}`, `$.v100["bad"]`},
		{`{"v100": {"('A', 1)": {}}}`, `$.v100["('A', 1)"].null: isolated throughput missing`},
		{`{"v100": {"('A', 1)": {"null": -1}}}`, `.null: isolated throughput is not a positive`},
		{`{"v100": {"('A', 1)": {"null": 1, "('B', 1)": [1, 2]}}}`, `["('B', 1)"]: co-tenant has no isolated`},
		{`{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [1]}}}`, `want [this job's steps/s`},
		{`{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [1, -2]}}}`, `["('A', 1)"][1]: throughput`},
	}
	for _, c := range cases {
		_, err := ReadThroughputs("f.json", []byte(c.in), "v100")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.in, err, c.want)
		}
	}
}

func TestTraceErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a\tb\n", "t.trace:1: 2 tab-separated fields"},
		{"A\tc\t-n\t1\tx\t0\t1\n", "t.trace:1: column total_steps"},
		{"A\tc\t-n\t1\t10\t0\t1\nA\tc\t-n\t1\t10\t-5\t1\n", "t.trace:2: column arrival_time"},
		{"A\tc\t-n\t1\t10\t0\t0\n", "column scale_factor"},
		{"\n", "no jobs"},
	}
	for _, c := range cases {
		_, err := ReadTrace("t.trace", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzReadThroughputs(f *testing.F) {
	f.Add(v100JSON[:2000])
	f.Add([]byte(`{"v100": {"('A', 1)": {"null": 1, "('A', 1)": [1, 2]}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tp, err := ReadThroughputs("f", b, "v100")
		if err != nil {
			return
		}
		for _, p := range tp.Pairs {
			if p.RateA < 0 || p.RateB < 0 {
				t.Fatalf("negative rate accepted: %+v", p)
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
	f.Fuzz(func(t *testing.T, b []byte) {
		jobs, err := ReadTrace("t", bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, j := range jobs {
			if !(j.Steps >= 1) || j.Scale < 1 || j.ArrivalSec < 0 {
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
