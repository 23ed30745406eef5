package cli

import (
	"strings"
	"testing"
)

func TestMemTotal(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int64
		wantErr  string
	}{
		// 24,567,890 kB x 1,024 = 25,157,519,360 bytes.
		{name: "linux", in: "MemTotal:       24567890 kB\nMemFree:        1000 kB\n", want: 25157519360},
		{name: "not first", in: "MemFree: 1 kB\nMemTotal: 2 kB\n", want: 2048},
		{name: "missing", in: "MemFree: 1 kB\n", wantErr: "no MemTotal"},
		{name: "zero", in: "MemTotal: 0 kB\n", wantErr: "want a positive number"},
		{name: "not a number", in: "MemTotal: lots kB\n", wantErr: "want a positive number"},
		{name: "overflow", in: "MemTotal: 99999999999999999999 kB\n", wantErr: "want a positive number"},
		{name: "other unit", in: "MemTotal: 2 MB\n", wantErr: "no MemTotal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := memTotal(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%d, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestCgroupMax(t *testing.T) {
	for in, want := range map[string]int64{"4294967296\n": 4 << 30, "max\n": -1, "": -1, "0": -1, "-5": -1, "1e9": -1} {
		got, ok := cgroupMax(in)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("cgroupMax(%q) = %d, want %d (-1: no limit)", in, got, want)
		}
	}
}

func FuzzMemTotal(f *testing.F) {
	f.Add("MemTotal:       24567890 kB\n")
	f.Add("MemTotal: 9007199254740993 kB\n")
	f.Add("MemTotal: -1 kB\n")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := memTotal(s)
		if err == nil && (b <= 0 || b%1024 != 0) {
			t.Fatalf("%q: %d bytes", s, b)
		}
	})
}

// TestMaxMemory: --max-memory is parsed; without it the limit is half the
// machine's memory, never 0 (which would mean no limit).
func TestMaxMemory(t *testing.T) {
	if b, err := maxMemory("3GiB"); err != nil || b != 3<<30 {
		t.Errorf("3GiB: %d, %v", b, err)
	}
	if b, err := maxMemory(""); err != nil || b <= 0 {
		t.Errorf("default: %d, %v; want a positive limit", b, err)
	}
	if _, err := maxMemory("0"); err == nil || !strings.HasPrefix(err.Error(), "--max-memory: ") {
		t.Errorf("0: %v, want an error naming --max-memory", err)
	}
}
