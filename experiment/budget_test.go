package experiment

import (
	"math"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/scenario"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

func TestEstimateJobs(t *testing.T) {
	s := &scenario.Scenario{Mode: scenario.Coloc, Seeds: 1000}
	// 1,000,000 jobs, 4 systems x 1,000 seeds = 4,000 runs, 2 at once, the
	// event-driven engine's figures: base + 2 x (1 MiB + 1e6 x 1,229 B) +
	// 4,000 x (128 KiB + 1e6 x 32 B) (2.46e9 B + 1.285e11 B, about 122.0 GiB).
	e := EstimateJobs(s, "coloc.count 1000000 (poisson arrivals), 4 systems", 1000000, 4000, 2)
	if want := int64(40*mib + 2*(1*mib+1000000*1229) + 4000*(128*kib+1000000*32)); e.Bytes != want {
		t.Errorf("bytes %d, want %d", e.Bytes, want)
	}
	// Gavel's round-based timing and the other job engines have figures
	// of their own.
	for _, tc := range []struct {
		s    *scenario.Scenario
		want JobFigures
	}{
		{&scenario.Scenario{Mode: scenario.Coloc, Coloc: &scenario.ColocSpec{Timing: scenario.TimingGavel}}, HPCFigures},
		{&scenario.Scenario{Mode: scenario.HPC}, HPCFigures},
		{&scenario.Scenario{Mode: scenario.Elastic}, ElasticFigures},
	} {
		if got := FiguresFor(tc.s); got != tc.want {
			t.Errorf("%s: figures %+v, want %+v", tc.s.Mode, got, tc.want)
		}
	}
	err := e.Check(64 * gib)
	want := "mode coloc would run 1,000,000 jobs in each of 4,000 runs (~122.0 GiB) because of coloc.count 1000000 (poisson arrivals), 4 systems and 1000 seeds: above --max-memory 64.0 GiB"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error\n%v\nwant it to start with\n%s", err, want)
	}
}

// A study's runs: the same arithmetic as a scenario's, named by the
// command and the flag that gives the jobs.
func TestEstimateStudy(t *testing.T) {
	// 1,000,000 jobs, 72 runs, 2 at once, the HPC figures: base + 2 x
	// (1 MiB + 1e6 x 1,536 B) + 72 x (64 KiB + 1e6 x 32 B) = 42 MiB +
	// 3.072e9 B + 4.5 MiB + 2.304e9 B = 5.4249e9 B (~5.1 GiB).
	e := EstimateStudy("reproduce vahrm", "--jobs 1000000", HPCFigures, 1000000, 72, 2)
	if want := int64(40*mib + 2*(1*mib+1000000*1536) + 72*(64*kib+1000000*32)); e.Bytes != want {
		t.Errorf("bytes %d, want %d", e.Bytes, want)
	}
	err := e.Check(4 * gib)
	want := "reproduce vahrm would run 1,000,000 jobs in each of 72 runs (~5.1 GiB) because of --jobs 1000000: above --max-memory 4.0 GiB"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error\n%v\nwant it to start with\n%s", err, want)
	}
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "4GiB", want: 4 << 30},
		{in: "500MB", want: 500e6},
		{in: "1.5g", want: 3 << 29},
		{in: "12 GiB", want: 12 << 30},
		{in: "2048", want: 2048},
		{in: "64k", want: 64 << 10},
		{in: "1TB", want: 1e12},
		{in: "0", wantErr: "at least 1 byte"},
		{in: "0.1B", wantErr: "at least 1 byte"},
		{in: "-4GiB", wantErr: "at least 1 byte"},
		{in: "lots", wantErr: "want a number"},
		{in: "", wantErr: "want a number"},
		{in: "GiB", wantErr: "want a number"},
		{in: "NaN", wantErr: "want a number"},
		{in: "inf", wantErr: "want a number"},
		{in: "0x10", wantErr: "want a number"},
		{in: "9e18GiB", wantErr: "too large"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseBytes(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%q: %d, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"4GiB", "500MB", "1.5g", "0", "-1", "1e300", "NaN", "12 gib", "0x1p4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBytes(s)
		if err != nil {
			return
		}
		if b < 1 {
			t.Fatalf("%q: %d bytes accepted", s, b)
		}
		if FormatBytes(b) == "" {
			t.Fatalf("%q: no format", s)
		}
	})
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{
		100: "100 B", 1536: "1.5 KiB", 12 << 30: "12.0 GiB", 9985798963: "9.3 GiB", math.MaxInt64: "8.0 EiB",
	} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}
