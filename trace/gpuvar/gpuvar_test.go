package gpuvar

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/userfile"
)

func TestLonghorn(t *testing.T) {
	runs, err := Longhorn()
	if err != nil {
		t.Fatal(err)
	}
	devs := map[string]map[string]bool{}
	for _, r := range runs {
		if devs[r.App] == nil {
			devs[r.App] = map[string]bool{}
		}
		devs[r.App][r.Device] = true
	}
	// Trace README: 392 GPUs ran SGEMM (11,087 runs); 336, 136 and 172 GPUs ran ResNet, BERT, PageRank.
	want := map[string]int{"sgemm": 392, "resnet": 336, "bert": 136, "pagerank": 172}
	for app, n := range want {
		if len(devs[app]) != n {
			t.Errorf("%s: %d devices, want %d", app, len(devs[app]), n)
		}
	}
	if len(runs) != 11087+1404+1096+880 {
		t.Errorf("%d runs", len(runs))
	}
}

func TestReadErrors(t *testing.T) {
	head := "uuid,perf,freq,memfreq,temp,pwr\n"
	cases := map[string]string{
		head + "g1,1,2,3,4,x\n":   "f.csv:2: column pwr: \"x\" is not a number in [0, 10000]",
		head + "g1,1,2,3,4,NaN\n": "column pwr",
		head + "g1,1,2,3,4,1e9\n": "column pwr",
		head + "g1,1,Inf,3,4,5\n": "column freq",
		head + "g1,1,2,3,-4,5\n":  "column temp",
		head + ",1,2,3,4,5\n":     "column uuid: empty GPU UUID",
		"uuid,perf\ng,1\n":        "no column freq",
		head + "g1,1,2,3,4\n":     "f.csv:2: 5 fields, want 6",
		head:                      "no runs",
		head + "g1,1,2,3,4,0\n":   "zero power",
	}
	for in, want := range cases {
		_, err := Read(strings.NewReader(in), "f.csv", "x")
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%q) = %v, want %q", in, err, want)
		}
	}
}

// FuzzRead: any input parses or fails with an error naming the file (a
// ParseError, or a bound of userfile: NUL bytes, long lines); a run that
// parses has a finite power in (0, 10 kW].
func FuzzRead(f *testing.F) {
	f.Add([]byte("uuid,perf,freq,memfreq,temp,pwr\ng1,1,2,3,4,5\n"))
	f.Add([]byte("uuid,perf,freq,memfreq,temp,mean_pwr\ng1,1,2,3,4,NaN\n"))
	f.Add([]byte("uuid,perf\n\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		runs, err := Read(bytes.NewReader(in), "f.csv", "x")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) && !userfile.IsLimit(err) {
				t.Fatalf("error %v (%T) is neither a ParseError nor a bound", err, err)
			}
			return
		}
		for _, r := range runs {
			if !(r.PowerW > 0 && r.PowerW <= 1e4) {
				t.Fatalf("line %d: power %v", r.Line, r.PowerW)
			}
		}
	})
}
