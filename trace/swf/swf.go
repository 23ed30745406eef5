// Package swf reads logs in the Standard Workload Format of the Parallel
// Workloads Archive: header comments starting with ';' and one job per line
// with 18 whitespace-separated fields, -1 meaning missing.
package swf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

// Fields in order (SWF 2.2).
var Fields = [18]string{"job_number", "submit_time", "wait_time", "run_time", "allocated_processors",
	"average_cpu_time", "used_memory", "requested_processors", "requested_time", "requested_memory",
	"status", "user_id", "group_id", "executable_number", "queue_number", "partition_number",
	"preceding_job_number", "think_time"}

// Missing is the SWF value for an unknown field.
const Missing = -1

// Job is one record. Times are seconds; -1 means missing.
type Job struct {
	Number       int64
	Submit       int64
	Wait         int64
	Run          int64
	AllocProcs   int64
	AvgCPUTime   float64
	UsedMemory   float64
	ReqProcs     int64
	ReqTime      int64
	ReqMemory    float64
	Status       int64
	User         int64
	Group        int64
	Executable   int64
	Queue        int64
	Partition    int64
	PrecedingJob int64
	ThinkTime    int64
	Line         int // line number in the file
}

// Procs is the job's processor count: allocated, else requested (-1 if neither).
func (j Job) Procs() int64 {
	if j.AllocProcs > 0 {
		return j.AllocProcs
	}
	return j.ReqProcs
}

// Log is a parsed SWF file.
type Log struct {
	// Header holds the comment lines without the leading ';'.
	Header []string
	Jobs   []Job
}

// HeaderValue returns the value of a "; Key: value" header line.
func (l *Log) HeaderValue(key string) (string, bool) {
	for _, h := range l.Header {
		k, v, ok := strings.Cut(h, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Bounds: times (submit, wait, run, requested and think time) in seconds
// and processor counts above these are input errors, not jobs (an int64
// extreme became a negative run time in milliseconds deep in a run).
const (
	MaxSeconds = 1e9 // 31 years
	MaxProcs   = 1e7
)

// bound is the upper bound of field i, 0 for none.
func bound(i int) int64 {
	switch i {
	case 1, 2, 3, 8, 17:
		return MaxSeconds
	case 4, 7:
		return MaxProcs
	}
	return 0
}

// ParseError locates a bad line or field: file, line, column.
type ParseError = trace.ParseError

// Read parses an SWF log; file names it in errors.
func Read(r io.Reader, file string) (*Log, error) {
	r, err := userfile.Reader(r, file, userfile.Table)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(r)
	// Past userfile.Table's bound on a line, so that a file read through it
	// fails on that bound, which names the line.
	sc.Buffer(make([]byte, 64*1024), 2<<20)
	l := &Log{}
	line := 0
	numbers := map[int64]int{} // job number -> line
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		if s[0] == ';' {
			l.Header = append(l.Header, strings.TrimSpace(s[1:]))
			continue
		}
		f := strings.Fields(s)
		if len(f) != 18 {
			return nil, &ParseError{File: file, Line: line, Err: fmt.Errorf("%d fields, want 18", len(f))}
		}
		var ints [18]int64
		var floats [18]float64
		for i, v := range f {
			switch i {
			case 5, 6, 9: // average CPU time and memory may be fractional
				x, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 && x != Missing {
					return nil, &ParseError{File: file, Line: line, Column: Fields[i], Err: fmt.Errorf("%q is not a finite number >= 0 (or -1)", v)}
				}
				floats[i] = x
			default:
				x, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, &ParseError{File: file, Line: line, Column: Fields[i], Err: fmt.Errorf("%q is not an integer", v)}
				}
				if x < -1 {
					return nil, &ParseError{File: file, Line: line, Column: Fields[i], Err: fmt.Errorf("%d: only -1 may be negative", x)}
				}
				if b := bound(i); b > 0 && x > b {
					return nil, &ParseError{File: file, Line: line, Column: Fields[i], Err: fmt.Errorf("%d is above %d", x, b)}
				}
				ints[i] = x
			}
		}
		j := Job{Number: ints[0], Submit: ints[1], Wait: ints[2], Run: ints[3], AllocProcs: ints[4],
			AvgCPUTime: floats[5], UsedMemory: floats[6], ReqProcs: ints[7], ReqTime: ints[8], ReqMemory: floats[9],
			Status: ints[10], User: ints[11], Group: ints[12], Executable: ints[13], Queue: ints[14],
			Partition: ints[15], PrecedingJob: ints[16], ThinkTime: ints[17], Line: line}
		if prev, dup := numbers[j.Number]; dup && j.Number != Missing {
			return nil, &ParseError{File: file, Line: line, Column: Fields[0], Err: fmt.Errorf("job %d already on line %d", j.Number, prev)}
		}
		numbers[j.Number] = line
		l.Jobs = append(l.Jobs, j)
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{File: file, Line: line + 1, Err: err}
	}
	if len(l.Jobs) == 0 {
		return nil, &ParseError{File: file, Line: line, Err: errors.New("no job records")}
	}
	return l, nil
}

//go:embed data/NASA-iPSC-1993-3.1-cln.swf.gz
var nasa []byte

// ReadFile reads an SWF file from disk, gzip-compressed or not (whatever
// its name), within the bounds of a table (userfile.Table). Errors name
// the file.
func ReadFile(path string) (*Log, error) {
	f, err := userfile.Open(path, userfile.Table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// NASAiPSCName names the embedded log.
const NASAiPSCName = "NASA-iPSC-1993-3.1-cln.swf"

// NASAiPSC returns the embedded NASA Ames iPSC/860 log.
func NASAiPSC() (*Log, error) {
	zr, err := gzip.NewReader(bytes.NewReader(nasa))
	if err != nil {
		return nil, err
	}
	return Read(zr, NASAiPSCName)
}
