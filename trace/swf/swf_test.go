package swf

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadEmbeddedNASA(t *testing.T) {
	l, err := NASAiPSC()
	if err != nil {
		t.Fatal(err)
	}
	// Archive README: 18,239 jobs on 128 nodes.
	if len(l.Jobs) != 18239 {
		t.Errorf("%d jobs, want 18239", len(l.Jobs))
	}
	if v, ok := l.HeaderValue("MaxNodes"); !ok || v != "128" {
		t.Errorf("MaxNodes = %q %v", v, ok)
	}
	j := l.Jobs[1]
	// Second record: "2 1460 -1 3726 128 -1 ...".
	if j.Number != 2 || j.Submit != 1460 || j.Wait != Missing || j.Run != 3726 || j.Procs() != 128 || j.Line != 34 {
		t.Errorf("job 2 = %+v", j)
	}
}

func TestReadErrors(t *testing.T) {
	ok := "1 0 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"
	cases := map[string]string{
		"; c\n" + ok + "2 5 -1 10 4\n":                           "f.swf:3: 5 fields, want 18",
		ok + "2 5 -1 1x 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n":  "f.swf:2: column run_time: \"1x\" is not an integer",
		ok + "2 5 -1 10 -4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n": "column allocated_processors: -4: only -1 may be negative",
		"; only a header\n":                                      "f.swf:1: no job records",
		ok + "2 5 -1 10 4 abc -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n": "column average_cpu_time",
		ok + "1 5 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n":  "f.swf:2: column job_number: job 1 already on line 1",
	}
	for in, want := range cases {
		_, err := Read(strings.NewReader(in), "f.swf")
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%q) = %v, want %q", in, err, want)
		}
	}
	l, err := Read(strings.NewReader("; Version: 2.2\n\n"+ok), "f.swf")
	if err != nil || l.Jobs[0].AvgCPUTime != -1 || l.Jobs[0].Procs() != 4 {
		t.Fatalf("Read = %+v, %v", l, err)
	}
}

// int64 extremes, NaN and infinities are errors naming the field.
func TestReadBounds(t *testing.T) {
	for _, c := range []struct{ row, col string }{
		{"1 0 -1 9223372036854775807 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1", "run_time"},
		{"1 0 -1 10 99999999999 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1", "allocated_processors"},
		{"1 0 -1 10 4 NaN -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1", "average_cpu_time"},
		{"1 0 -1 10 4 -1 +Inf 4 -1 -1 1 1 1 -1 -1 -1 -1 -1", "used_memory"},
		{"1 -5 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1", "submit_time"},
	} {
		_, err := Read(strings.NewReader(c.row+"\n"), "x.swf")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Column != c.col || pe.Line != 1 {
			t.Errorf("%q: %v, want column %s", c.row, err, c.col)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add("; Version: 2.2\n1 0 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n")
	f.Add("1 2 3\n")
	f.Fuzz(func(t *testing.T, in string) {
		l, err := Read(strings.NewReader(in), "fuzz.swf")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		for _, j := range l.Jobs {
			if j.Run < -1 || j.Submit < -1 || j.AllocProcs < -1 {
				t.Fatalf("accepted negative field: %+v", j)
			}
			if j.Run > MaxSeconds || j.Submit > MaxSeconds || j.ReqTime > MaxSeconds || j.AllocProcs > MaxProcs || j.ReqProcs > MaxProcs {
				t.Fatalf("accepted an out-of-range field: %+v", j)
			}
			for _, v := range []float64{j.AvgCPUTime, j.UsedMemory, j.ReqMemory} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < -1 {
					t.Fatalf("accepted %v", v)
				}
			}
		}
	})
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "ok.swf")
	if err := os.WriteFile(good, []byte("; Version: 2.2\n1 0 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := ReadFile(good)
	if err != nil || len(l.Jobs) != 1 || l.Jobs[0].Run != 10 {
		t.Fatalf("ReadFile: %v, %+v", err, l)
	}
	bad := filepath.Join(dir, "bad.swf")
	if err := os.WriteFile(bad, []byte("1 0 -1 10 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), "bad.swf:1:") {
		t.Fatalf("err = %v, want one naming bad.swf line 1", err)
	}
	// gzip is recognised by its magic bytes, not by the name: a plain log
	// named .gz is read, a broken gzip stream named .swf is a gzip error.
	plainGz := filepath.Join(dir, "plain.swf.gz")
	if err := os.WriteFile(plainGz, []byte("1 0 -1 10 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if l, err := ReadFile(plainGz); err != nil || len(l.Jobs) != 1 {
		t.Fatalf("ReadFile(plain log named .gz): %v, %+v", err, l)
	}
	badGz := filepath.Join(dir, "x.swf")
	if err := os.WriteFile(badGz, []byte("\x1f\x8bxx"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(badGz); err == nil || !strings.Contains(err.Error(), "x.swf: gzip") {
		t.Fatalf("err = %v, want a gzip error naming the file", err)
	}
}
