// Package philly reads the Microsoft Philly job table as Pollux/AdaptDL
// extracted it (CSV: timestamp, duration, num_gpus, gpu_time, cluster;
// Jeon et al., ATC'19, CC BY 4.0) and embeds one day of it.
package philly

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/trace"
)

// Columns are the header the reader expects.
var Columns = []string{"timestamp", "duration", "num_gpus", "gpu_time", "cluster"}

// Layout is the timestamp format.
const Layout = "2006-01-02 15:04:05"

//go:embed data/philly-2017-10-13.csv.gz
var day []byte

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

// Read parses the table; submission times are seconds from start (the
// first job's timestamp when start is zero). Errors name file, line and
// column.
func Read(r io.Reader, name string, start time.Time) ([]trace.GPUJob, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	bad := func(line int, col string, err error) error {
		return &trace.ParseError{File: name, Line: line, Column: col, Err: err}
	}
	head, err := cr.Read()
	if err == io.EOF {
		return nil, bad(1, "", errors.New("empty file"))
	}
	if err != nil {
		return nil, bad(1, "", err)
	}
	if strings.Join(head, ",") != strings.Join(Columns, ",") {
		return nil, bad(1, "", fmt.Errorf("header %q, want %q", strings.Join(head, ","), strings.Join(Columns, ",")))
	}
	var out []trace.GPUJob
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
		dur, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || dur < 0 {
			return nil, bad(line, "duration", fmt.Errorf("%q is not a non-negative number", rec[1]))
		}
		g, err := strconv.ParseFloat(rec[2], 64)
		if err != nil || g < 1 || g != float64(int(g)) {
			return nil, bad(line, "num_gpus", fmt.Errorf("%q is not a positive integer", rec[2]))
		}
		if start.IsZero() {
			start = ts
		}
		out = append(out, trace.GPUJob{ID: strconv.Itoa(line - 1), SubmitSec: ts.Sub(start).Seconds(), DurationSec: dur, GPUs: int(g), Line: line})
	}
	return out, nil
}

// ReadFile reads a table file (gzip-compressed when its name ends in .gz).
func ReadFile(path string, start time.Time) ([]trace.GPUJob, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, &trace.ParseError{File: path, Line: 1, Err: fmt.Errorf("gzip: %w", err)}
		}
		r = zr
	}
	return Read(r, path, start)
}
