// Package gavel reads Gavel's measured throughput tables (isolated and
// space-shared pairs of DL training jobs per worker type, the data the
// EaCO paper's simulations were built on) and Gavel's job traces, and
// embeds the V100 single-GPU throughputs and one Philly-derived trace
// (data/README.md; Narayanan et al., OSDI'20, MIT license).
package gavel

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/wattsched/wattsched/internal/userfile"
	"github.com/wattsched/wattsched/trace"
)

//go:embed data/v100_scale1.json
var v100JSON []byte

//go:embed data/msr-ed69ec.trace
var msrTrace []byte

// EmbeddedThroughputs is the name the embedded throughput file is read
// under (in errors and outputs).
const EmbeddedThroughputs = "gavel:v100_scale1.json"

// EmbeddedTrace names the embedded trace.
const EmbeddedTrace = "gavel:msr-ed69ec.trace"

// Key is one job configuration: a job type on Scale GPUs.
type Key struct {
	Type  string
	Scale int
}

func (k Key) String() string { return fmt.Sprintf("('%s', %d)", k.Type, k.Scale) }

// Pair is the measured throughput (steps/s) of job A and job B when they
// space-share one GPU set.
type Pair struct {
	A, B         Key
	RateA, RateB float64
}

// Throughputs is one worker type's table: isolated rates and measured
// co-located pairs (each unordered pair once, A <= B by key order).
type Throughputs struct {
	Worker string
	// Keys are the configurations, sorted by type then scale.
	Keys     []Key
	Isolated map[Key]float64
	Pairs    []Pair
	pairIdx  map[[2]Key]int
}

// Pair returns the measured rates of a and b co-located (rate of a first).
func (t *Throughputs) Pair(a, b Key) (ra, rb float64, ok bool) {
	if i, ok := t.pairIdx[[2]Key{a, b}]; ok {
		return t.Pairs[i].RateA, t.Pairs[i].RateB, true
	}
	if i, ok := t.pairIdx[[2]Key{b, a}]; ok {
		return t.Pairs[i].RateB, t.Pairs[i].RateA, true
	}
	return 0, 0, false
}

// NewThroughputs builds a table from another data set's measurements in
// Gavel's shape: isolated rates per key and measured pairs, kept in the
// order given. Every pair's keys need a positive isolated rate, rates must
// be numbers >= 0, and each unordered pair may appear once.
func NewThroughputs(worker string, isolated map[Key]float64, pairs []Pair) (*Throughputs, error) {
	t := &Throughputs{Worker: worker, Isolated: map[Key]float64{}, pairIdx: map[[2]Key]int{}}
	for k, v := range isolated {
		if !validRate(v) || v == 0 {
			return nil, fmt.Errorf("%s: isolated rate of %v is %v, want a positive number", worker, k, v)
		}
		t.Isolated[k] = v
		t.Keys = append(t.Keys, k)
	}
	slices.SortFunc(t.Keys, cmpKey)
	for i, p := range pairs {
		for _, k := range []Key{p.A, p.B} {
			if _, ok := t.Isolated[k]; !ok {
				return nil, fmt.Errorf("%s: pair %d: %v has no isolated rate", worker, i, k)
			}
		}
		if !validRate(p.RateA) || !validRate(p.RateB) {
			return nil, fmt.Errorf("%s: pair %d (%v, %v): rates %v, %v are not numbers >= 0", worker, i, p.A, p.B, p.RateA, p.RateB)
		}
		_, dup := t.pairIdx[[2]Key{p.A, p.B}]
		_, dup2 := t.pairIdx[[2]Key{p.B, p.A}]
		if dup || dup2 {
			return nil, fmt.Errorf("%s: pair %d (%v, %v) appears twice", worker, i, p.A, p.B)
		}
		t.pairIdx[[2]Key{p.A, p.B}] = len(t.Pairs)
		t.Pairs = append(t.Pairs, p)
	}
	return t, nil
}

// ParseKey parses Gavel's rendering of a Python tuple: ('Type', 1).
func ParseKey(s string) (Key, error) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "('") || !strings.HasSuffix(t, ")") {
		return Key{}, fmt.Errorf("key %q is not ('job type', scale)", s)
	}
	body := t[2 : len(t)-1]
	i := strings.LastIndex(body, "',")
	if i < 0 {
		return Key{}, fmt.Errorf("key %q is not ('job type', scale)", s)
	}
	typ := body[:i]
	sc, err := strconv.Atoi(strings.TrimSpace(body[i+2:]))
	if err != nil || sc < 1 || sc > 64 {
		return Key{}, fmt.Errorf("key %q: scale factor is not an integer in 1..64", s)
	}
	if typ == "" || strings.ContainsAny(typ, "'\n") {
		return Key{}, fmt.Errorf("key %q: bad job type", s)
	}
	return Key{Type: typ, Scale: sc}, nil
}

func validRate(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 && v < 1e9 }

// ReadThroughputs reads worker type worker's table from a Gavel
// throughput file (name is used in errors, which give the JSON path and
// the field: `file: $.v100["('A', 1)"]["('B', 1)"][1]: ...`).
func ReadThroughputs(name string, data []byte, worker string) (*Throughputs, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: $: %w", name, err)
	}
	raw, ok := top[worker]
	if !ok {
		return nil, fmt.Errorf("%s: $.%s: worker type missing", name, worker)
	}
	var rows map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("%s: $.%s: %w", name, worker, err)
	}
	t := &Throughputs{Worker: worker, Isolated: map[Key]float64{}, pairIdx: map[[2]Key]int{}}
	names := make([]string, 0, len(rows))
	for k := range rows {
		names = append(names, k)
	}
	slices.Sort(names)
	keyOf := map[string]Key{}
	for _, n := range names {
		path := fmt.Sprintf("$.%s[%q]", worker, n)
		k, err := ParseKey(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, path, err)
		}
		keyOf[n] = k
		iso, ok := rows[n]["null"]
		if !ok {
			return nil, fmt.Errorf("%s: %s.null: isolated throughput missing", name, path)
		}
		var v float64
		if err := json.Unmarshal(iso, &v); err != nil || !validRate(v) || v == 0 {
			return nil, fmt.Errorf("%s: %s.null: isolated throughput is not a positive number of steps/s", name, path)
		}
		t.Isolated[k] = v
		t.Keys = append(t.Keys, k)
	}
	slices.SortFunc(t.Keys, cmpKey)
	for _, n := range names {
		a := keyOf[n]
		others := make([]string, 0, len(rows[n]))
		for o := range rows[n] {
			if o != "null" {
				others = append(others, o)
			}
		}
		slices.Sort(others)
		for _, o := range others {
			path := fmt.Sprintf("$.%s[%q][%q]", worker, n, o)
			b, err := ParseKey(o)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, path, err)
			}
			if _, ok := t.Isolated[b]; !ok {
				return nil, fmt.Errorf("%s: %s: co-tenant has no isolated throughput in this worker type", name, path)
			}
			var v []float64
			if err := json.Unmarshal(rows[n][o], &v); err != nil || len(v) != 2 {
				return nil, fmt.Errorf("%s: %s: want [this job's steps/s, other job's steps/s]", name, path)
			}
			for i, x := range v {
				if !validRate(x) {
					return nil, fmt.Errorf("%s: %s[%d]: throughput is not a number of steps/s >= 0", name, path, i)
				}
			}
			if cmpKey(a, b) > 0 {
				continue // the row of the smaller key holds the pair
			}
			if _, dup := t.pairIdx[[2]Key{a, b}]; dup {
				continue
			}
			t.pairIdx[[2]Key{a, b}] = len(t.Pairs)
			t.Pairs = append(t.Pairs, Pair{A: a, B: b, RateA: v[0], RateB: v[1]})
		}
	}
	return t, nil
}

func cmpKey(a, b Key) int {
	if c := strings.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return a.Scale - b.Scale
}

// V100 is the embedded V100 single-GPU table.
func V100() (*Throughputs, error) { return ReadThroughputs(EmbeddedThroughputs, v100JSON, "v100") }

// Job is one line of a Gavel trace (the 7-field format of the msr traces).
type Job struct {
	Type       string
	Steps      float64
	Scale      int
	ArrivalSec float64
	Line       int
}

// MaxSteps bounds a job's steps.
const MaxSteps = 1e10

// ReadTrace reads a Gavel msr-format trace (tab-separated: job_type,
// command, num_steps_arg, needs_data_dir, total_steps, arrival_time,
// scale_factor); errors are trace.ParseError with file, line and column.
func ReadTrace(name string, r io.Reader) ([]Job, error) {
	r, err := userfile.Reader(r, name, userfile.Table)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(r)
	// Past userfile.Table's bound on a line, so that a file read through it
	// fails on that bound, which names the line.
	sc.Buffer(make([]byte, 64*1024), 2<<20)
	var out []Job
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		f := strings.Split(s, "\t")
		if len(f) != 7 {
			return nil, &trace.ParseError{File: name, Line: line, Err: fmt.Errorf("%d tab-separated fields, want 7", len(f))}
		}
		bad := func(col string, err error) error {
			return &trace.ParseError{File: name, Line: line, Column: col, Err: err}
		}
		j := Job{Type: strings.TrimSpace(f[0]), Line: line}
		if j.Type == "" {
			return nil, bad("job_type", errors.New("empty"))
		}
		st, err := strconv.ParseFloat(f[4], 64)
		if err != nil || !(st >= 1 && st <= MaxSteps) {
			return nil, bad("total_steps", fmt.Errorf("%q is not a step count in 1..%g", f[4], float64(MaxSteps)))
		}
		j.Steps = st
		at, err := strconv.ParseFloat(f[5], 64)
		if err != nil || !(at >= 0 && at < 1e10) {
			return nil, bad("arrival_time", fmt.Errorf("%q is not seconds >= 0", f[5]))
		}
		j.ArrivalSec = at
		scl, err := strconv.Atoi(strings.TrimSpace(f[6]))
		if err != nil || scl < 1 || scl > 64 {
			return nil, bad("scale_factor", fmt.Errorf("%q is not a GPU count in 1..64", f[6]))
		}
		j.Scale = scl
		out = append(out, j)
	}
	if err := sc.Err(); err != nil {
		return nil, &trace.ParseError{File: name, Line: line + 1, Err: err}
	}
	if len(out) == 0 {
		return nil, &trace.ParseError{File: name, Line: line, Err: errors.New("no jobs")}
	}
	return out, nil
}

// MSR is the embedded trace.
func MSR() ([]Job, error) { return ReadTrace(EmbeddedTrace, bytes.NewReader(msrTrace)) }
