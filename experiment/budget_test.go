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
	// 1,000,000 jobs, 4 systems x 1,000 seeds = 4,000 runs, 2 at once:
	// base + 2 x (run + 1e6 x 4 KiB) + 4,000 x 1e6 x 512 B (1.9 TB).
	e := EstimateJobs(s, "coloc.count 1000000 (poisson arrivals), 4 systems", 1000000, 4000, 2)
	if want := int64(64*mib + 2*(16*mib+1000000*4096) + 4000*1000000*512); e.Bytes != want {
		t.Errorf("bytes %d, want %d", e.Bytes, want)
	}
	err := e.Check(64 * gib)
	want := "mode coloc would run 1,000,000 jobs in each of 4,000 runs (~1.9 TiB) because of coloc.count 1000000 (poisson arrivals), 4 systems and 1000 seeds: above --max-memory 64.0 GiB"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error\n%v\nwant it to start with\n%s", err, want)
	}
}

// A study's runs: the same arithmetic as a scenario's, named by the
// command and the flag that gives the jobs.
func TestEstimateStudy(t *testing.T) {
	// 1,000,000 jobs, 72 runs, 2 at once: base + 2 x (run + 1e6 x 4 KiB) +
	// 72 x 1e6 x 512 B = 96 MiB + 8.192e9 B + 3.6864e10 B = 4.5157e10 B (~42.1 GiB).
	e := EstimateStudy("reproduce vahrm", "--jobs 1000000", 1000000, 72, 2)
	if want := int64(64*mib + 2*(16*mib+1000000*4096) + 72*1000000*512); e.Bytes != want {
		t.Errorf("bytes %d, want %d", e.Bytes, want)
	}
	err := e.Check(8 * gib)
	want := "reproduce vahrm would run 1,000,000 jobs in each of 72 runs (~42.1 GiB) because of --jobs 1000000: above --max-memory 8.0 GiB"
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
