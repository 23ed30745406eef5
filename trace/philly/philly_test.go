package philly

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wattsched/wattsched/trace"
)

func TestDay(t *testing.T) {
	jobs, err := Day()
	if err != nil {
		t.Fatal(err)
	}
	// README of the shared Philly folder: 1,896 jobs carry a 2017-10-13 timestamp.
	if len(jobs) != 1896 {
		t.Fatalf("%d jobs, want 1896", len(jobs))
	}
	for _, j := range jobs {
		if j.SubmitSec < 0 || j.SubmitSec >= 86400 || j.GPUs < 1 {
			t.Fatalf("job %+v outside the day", j)
		}
	}
}

func TestGridDays(t *testing.T) {
	// Job counts of the shared table's days (README of the Philly folder).
	want := map[string]int{"2017-10-13": 1896, "2017-11-10": 2027, "2017-11-13": 1717, "2017-11-16": 2040, "2017-12-08": 2073}
	for _, d := range GridDays {
		jobs, err := DayOf(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != want[d] {
			t.Errorf("%s: %d jobs, want %d", d, len(jobs), want[d])
		}
		for _, j := range jobs {
			if j.SubmitSec < 0 || j.SubmitSec >= 86400 {
				t.Fatalf("%s: job %+v outside the day", d, j)
			}
		}
	}
	if _, err := DayOf("2017-10-14"); err == nil {
		t.Error("a day that is not embedded was accepted")
	}
}

func TestReadErrors(t *testing.T) {
	head := strings.Join(Columns, ",") + "\n"
	for _, c := range []struct{ in, want string }{
		{head + "2017-10-13 01:00:00,60,x,60,vc\n", "f.csv:2: column num_gpus:"},
		{head + "2017-10-13 01:00:00,-5,1,60,vc\n", "f.csv:2: column duration:"},
		{head + "13/10/2017,60,1,60,vc\n", "f.csv:2: column timestamp:"},
		{"a,b\n", "f.csv:1: header"},
		{head + "2017-10-13 01:00:00,NaN,1,60,vc\n", "f.csv:2: column duration:"},
		{head + "2017-10-13 01:00:00,+Inf,1,60,vc\n", "f.csv:2: column duration:"},
		{head + "2017-10-13 01:00:00,1e300,1,60,vc\n", "f.csv:2: column duration:"},
		{head + "2017-10-13 01:00:00,31536001,1,60,vc\n", "f.csv:2: column duration:"},
		{head + "2017-10-13 01:00:00,60,1e12,60,vc\n", "f.csv:2: column num_gpus:"},
		{head + "2017-10-13 01:00:00,60,NaN,60,vc\n", "f.csv:2: column num_gpus:"},
		{head + "2017-10-13 01:00:00,60,9.2e18,60,vc\n", "f.csv:2: column num_gpus:"},
		// A zero date would become the table's start and push the other
		// jobs out of the window (they were dropped silently).
		{head + "2017-10-13 01:00:00,60,1,60,vc\n0001-01-01 00:00:00,60,1,60,vc\n", "f.csv:3: column timestamp: \"0001-01-01 00:00:00\" is outside the years 1970..2100"},
		{head + "2101-01-01 00:00:00,60,1,60,vc\n", "f.csv:2: column timestamp:"},
	} {
		_, err := Read(strings.NewReader(c.in), "f.csv", time.Time{})
		var pe *trace.ParseError
		if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Read(%q) error %v, want prefix %q", c.in, err, c.want)
		}
	}
	jobs, err := Read(strings.NewReader(head+"2017-10-13 01:00:00,60,2,120,vc\n2017-10-13 01:00:30,5,1,5,vc\n"), "f.csv", time.Time{})
	if err != nil || len(jobs) != 2 || jobs[1].SubmitSec != 30 || jobs[0].GPUs != 2 {
		t.Fatalf("got %+v, %v", jobs, err)
	}
	// The table is not sorted: times count from its earliest timestamp.
	jobs, err = Read(strings.NewReader(head+"2017-10-13 02:00:00,60,2,120,vc\n2017-10-13 01:00:00,5,1,5,vc\n"), "f.csv", time.Time{})
	if err != nil || len(jobs) != 2 || jobs[0].SubmitSec != 3600 || jobs[1].SubmitSec != 0 {
		t.Fatalf("unsorted: got %+v, %v", jobs, err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(strings.Join(Columns, ",") + "\n2017-10-13 01:00:00,60,2,120,vc\n")
	f.Fuzz(func(t *testing.T, s string) {
		jobs, err := Read(strings.NewReader(s), "f.csv", time.Time{})
		if err != nil {
			var pe *trace.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		for _, j := range jobs {
			if j.GPUs < 1 || j.GPUs > MaxGPUs || !(j.DurationSec >= 0 && j.DurationSec <= MaxDurationSec) || j.SubmitSec < 0 || math.IsNaN(j.SubmitSec) {
				t.Fatalf("bad job %+v", j)
			}
		}
	})
}
