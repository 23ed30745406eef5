// Package philly reads the Microsoft Philly job table as Pollux/AdaptDL
// extracted it (CSV: timestamp, duration, num_gpus, gpu_time, cluster;
// Jeon et al., ATC'19, CC BY 4.0) and embeds one day of it.
package philly

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

// Columns are the header the reader expects.
var Columns = []string{"timestamp", "duration", "num_gpus", "gpu_time", "cluster"}

// Layout is the timestamp format.
const Layout = "2006-01-02 15:04:05"

//go:embed data/philly-2017-10-13.csv.gz
var day []byte

//go:embed data/philly-days.csv.gz
var moreDays []byte

// GridDays are the embedded days (YYYY-MM-DD): 2017-10-13 and the four
// other days whose job counts are closest to the PowerFlow paper's 1,901
// (2,027, 1,717, 2,040 and 2,073 jobs); chosen by that rule before any
// result on them was looked at.
var GridDays = []string{"2017-10-13", "2017-11-10", "2017-11-13", "2017-11-16", "2017-12-08"}

// DayOf returns every job submitted on one of GridDays, times from that
// day's midnight.
func DayOf(date string) ([]trace.GPUJob, error) {
	if date == "2017-10-13" {
		return Day()
	}
	if !slices.Contains(GridDays, date) {
		return nil, fmt.Errorf("philly: %q is not an embedded day (%s)", date, strings.Join(GridDays, ", "))
	}
	start, err := time.Parse(Layout, date+" 00:00:00")
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(moreDays))
	if err != nil {
		return nil, err
	}
	all, err := Read(zr, "philly-days.csv", start)
	if err != nil {
		return nil, err
	}
	var out []trace.GPUJob
	for _, j := range all {
		if j.SubmitSec >= 0 && j.SubmitSec < 86400 {
			out = append(out, j)
		}
	}
	return out, nil
}

// DayName names the embedded day.
const DayName = "philly-2017-10-13"

// Day returns the embedded day: every job submitted on 2017-10-13 (UTC
// timestamps as recorded), 1,896 jobs, times from midnight.
func Day() ([]trace.GPUJob, error) {
	zr, err := gzip.NewReader(bytes.NewReader(day))
	if err != nil {
		return nil, err
	}
	start, _ := time.Parse(Layout, "2017-10-13 00:00:00")
	return Read(zr, DayName+".csv", start)
}

// MaxDurationSec and MaxGPUs bound a row's duration (one year; the
// longest Philly job ran 54 days) and GPU count (the longest tables have
// 128-GPU jobs): a value past them is an input error, not a job to run.
const (
	MaxDurationSec = 365 * 24 * 3600
	MaxGPUs        = 4096
)

// MinYear and MaxYear bound a timestamp's year (the Philly trace is of
// 2017; a Pollux-format table of any GPU cluster is after 1970).
const (
	MinYear = 1970
	MaxYear = 2100
)

// Read parses the table; submission times are seconds from start (the
// earliest timestamp in the table when start is zero: the table is not
// sorted). Errors name file, line and column; NaN, infinite, negative and
// out-of-range numbers are errors.
func Read(r io.Reader, name string, start time.Time) ([]trace.GPUJob, error) {
	cr, head, err := trace.OpenCSV(r, name)
	if err != nil {
		return nil, err
	}
	bad := cr.Bad
	cr.ReuseRecord = true // head is not used after the next read
	if strings.Join(head, ",") != strings.Join(Columns, ",") {
		return nil, bad(1, "", fmt.Errorf("header %q, want %q", strings.Join(head, ","), strings.Join(Columns, ",")))
	}
	var out []trace.GPUJob
	var stamps []time.Time
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bad(line, "", err)
		}
		if len(rec) != len(Columns) {
			return nil, bad(line, "", fmt.Errorf("%d fields, want %d", len(rec), len(Columns)))
		}
		ts, err := time.Parse(Layout, rec[0])
		if err != nil {
			return nil, bad(line, "timestamp", fmt.Errorf("%q is not %s", rec[0], Layout))
		}
		// A zero date (0001-01-01) or a typo'd year would become the
		// table's start and push every other job out of the window.
		if y := ts.Year(); y < MinYear || y > MaxYear {
			return nil, bad(line, "timestamp", fmt.Errorf("%q is outside the years %d..%d", rec[0], MinYear, MaxYear))
		}
		dur, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || !(dur >= 0 && dur <= MaxDurationSec) {
			return nil, bad(line, "duration", fmt.Errorf("%q is not a number of seconds in [0, %d]", rec[1], MaxDurationSec))
		}
		g, err := strconv.ParseFloat(rec[2], 64)
		if err != nil || !(g >= 1 && g <= MaxGPUs) || g != math.Trunc(g) {
			return nil, bad(line, "num_gpus", fmt.Errorf("%q is not an integer in [1, %d]", rec[2], MaxGPUs))
		}
		out = append(out, trace.GPUJob{ID: strconv.Itoa(line - 1), DurationSec: dur, GPUs: int(g), Line: line})
		stamps = append(stamps, ts)
	}
	if start.IsZero() {
		for i, ts := range stamps {
			if i == 0 || ts.Before(start) {
				start = ts
			}
		}
	}
	for i := range out {
		out[i].SubmitSec = stamps[i].Sub(start).Seconds()
	}
	return out, nil
}

// ReadFile reads a table file, gzip-compressed or not (whatever its
// name), within the bounds of a table (userfile.Table).
func ReadFile(path string, start time.Time) ([]trace.GPUJob, error) {
	f, err := userfile.Open(path, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path, start)
}
