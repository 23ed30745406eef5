package gavel

import (
	"bufio"
	"bytes"
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

//go:embed data/artifact_evaluation.trace
var artifactEvaluation []byte

//go:embed data/max_min_fairness.trace
var maxMinFairness []byte

//go:embed data/minimize_makespan.trace
var minimizeMakespan []byte

// ClusterTraces names Gavel's physical-cluster traces that are embedded
// (scheduler/traces/physical_cluster/<name>.trace, the 10-field layout).
var ClusterTraces = []string{"artifact_evaluation", "max_min_fairness", "minimize_makespan"}

// ClusterTrace reads the embedded physical-cluster trace name (one of
// ClusterTraces); errors name it as gavel:<name>.trace.
func ClusterTrace(name string) ([]Job, error) {
	var b []byte
	switch name {
	case "artifact_evaluation":
		b = artifactEvaluation
	case "max_min_fairness":
		b = maxMinFairness
	case "minimize_makespan":
		b = minimizeMakespan
	default:
		return nil, fmt.Errorf("no embedded Gavel trace %q (embedded: %s)", name, strings.Join(ClusterTraces, ", "))
	}
	return ReadTrace("gavel:"+name+".trace", bytes.NewReader(b))
}

// Layout is a Gavel trace's line format, named by its number of
// tab-separated fields.
type Layout int

const (
	// LayoutMSR is the msr traces' format (7 fields): job_type, command,
	// num_steps_arg, needs_data_dir, total_steps, arrival_time,
	// scale_factor.
	LayoutMSR Layout = 7
	// LayoutCluster is the format Gavel's scheduler/utils.py parse_trace
	// reads (10 fields; the physical_cluster traces): job_type, command,
	// working_directory, num_steps_arg, needs_data_dir, total_steps,
	// scale_factor, priority_weight, SLO, arrival_time.
	LayoutCluster Layout = 10
)

// Job is one line of a Gavel trace, in either layout.
type Job struct {
	// Type is Gavel's job type ("ResNet-18 (batch size 64)"): with Scale
	// it is the key of the job's throughputs (Key).
	Type string
	// Steps is total_steps, the training steps the job runs.
	Steps float64
	// Scale is scale_factor, the GPUs the job runs on.
	Scale      int
	ArrivalSec float64
	// PriorityWeight is priority_weight (1 in the msr layout, which has
	// none).
	PriorityWeight float64
	// SLO is Gavel's SLO: the job's deadline as a multiple of its run time
	// (Gavel's scheduler.py: arrival + SLO x duration); 0 when the job has
	// none (the file's -1; the msr layout has none).
	SLO float64
	// Layout is the line's format.
	Layout Layout
	Line   int
}

// Key is the job's throughput key: its type on its GPU count.
func (j Job) Key() Key { return Key{Type: j.Type, Scale: j.Scale} }

// Bounds on a trace's numbers.
const (
	// MaxSteps bounds a job's steps.
	MaxSteps = 1e10
	// MaxScale bounds a job's GPUs.
	MaxScale = 64
	// MaxArrivalSec bounds an arrival time (about 317 years).
	MaxArrivalSec = 1e10
	// MaxPriorityWeight and MaxSLO bound priority_weight and SLO.
	MaxPriorityWeight = 1e6
	MaxSLO            = 1e6
)

// ReadTrace reads a Gavel trace in either layout, told apart by the
// number of tab-separated fields of its first line: 7 (the msr traces:
// job_type, command, num_steps_arg, needs_data_dir, total_steps,
// arrival_time, scale_factor) or 10 (Gavel's parse_trace: job_type,
// command, working_directory, num_steps_arg, needs_data_dir, total_steps,
// scale_factor, priority_weight, SLO, arrival_time). Every line must have
// the first line's layout; blank lines are skipped. needs_data_dir is 0
// or 1; in the 10-field layout total_steps is an integer (Gavel reads it
// with int()), priority_weight a number > 0 and SLO -1 (none) or a number
// > 0. Errors are trace.ParseError with file, line and column.
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
	var layout Layout
	first := 0
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" {
			continue
		}
		f := strings.Split(s, "\t")
		switch {
		case layout == 0 && (len(f) == int(LayoutMSR) || len(f) == int(LayoutCluster)):
			layout, first = Layout(len(f)), line
		case layout == 0:
			return nil, &trace.ParseError{File: name, Line: line, Err: fmt.Errorf("%d tab-separated fields, want 7 (msr layout) or 10 (Gavel's parse_trace layout)", len(f))}
		case len(f) != int(layout):
			return nil, &trace.ParseError{File: name, Line: line, Err: fmt.Errorf("%d tab-separated fields, want %d as on line %d (one layout per file)", len(f), layout, first)}
		}
		j, err := parseJob(f, layout)
		if err != nil {
			var ce *columnError
			if errors.As(err, &ce) {
				return nil, &trace.ParseError{File: name, Line: line, Column: ce.col, Err: ce.err}
			}
			return nil, &trace.ParseError{File: name, Line: line, Err: err}
		}
		j.Line = line
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

type columnError struct {
	col string
	err error
}

func (e *columnError) Error() string { return e.col + ": " + e.err.Error() }

// parseJob reads one line's fields in layout l.
func parseJob(f []string, l Layout) (Job, error) {
	bad := func(col, format string, a ...any) error {
		return &columnError{col: col, err: fmt.Errorf(format, a...)}
	}
	// Field positions: the two layouts differ after needs_data_dir.
	type pos struct{ steps, scale, arrival, dataDir, weight, slo int }
	p := pos{dataDir: 3, steps: 4, arrival: 5, scale: 6, weight: -1, slo: -1}
	if l == LayoutCluster {
		p = pos{dataDir: 4, steps: 5, scale: 6, weight: 7, slo: 8, arrival: 9}
	}
	j := Job{Type: strings.TrimSpace(f[0]), Layout: l, PriorityWeight: 1}
	if j.Type == "" {
		return j, bad("job_type", "empty")
	}
	if d := strings.TrimSpace(f[p.dataDir]); d != "0" && d != "1" {
		return j, bad("needs_data_dir", "%q is not 0 or 1", f[p.dataDir])
	}
	st, err := strconv.ParseFloat(strings.TrimSpace(f[p.steps]), 64)
	if err != nil || !(st >= 1 && st <= MaxSteps) {
		return j, bad("total_steps", "%q is not a step count in 1..%g", f[p.steps], float64(MaxSteps))
	}
	if l == LayoutCluster && st != math.Trunc(st) {
		return j, bad("total_steps", "%q is not an integer (Gavel's parse_trace reads it with int())", f[p.steps])
	}
	j.Steps = st
	at, err := strconv.ParseFloat(strings.TrimSpace(f[p.arrival]), 64)
	if err != nil || !(at >= 0 && at < MaxArrivalSec) {
		return j, bad("arrival_time", "%q is not seconds >= 0 (below %g)", f[p.arrival], float64(MaxArrivalSec))
	}
	j.ArrivalSec = at
	scl, err := strconv.Atoi(strings.TrimSpace(f[p.scale]))
	if err != nil || scl < 1 || scl > MaxScale {
		return j, bad("scale_factor", "%q is not a GPU count in 1..%d", f[p.scale], MaxScale)
	}
	j.Scale = scl
	if l != LayoutCluster {
		return j, nil
	}
	w, err := strconv.ParseFloat(strings.TrimSpace(f[p.weight]), 64)
	if err != nil || !(w > 0 && w <= MaxPriorityWeight) {
		return j, bad("priority_weight", "%q is not a number in (0, %g]", f[p.weight], float64(MaxPriorityWeight))
	}
	j.PriorityWeight = w
	slo, err := strconv.ParseFloat(strings.TrimSpace(f[p.slo]), 64)
	switch {
	case err == nil && slo == -1:
	case err == nil && slo > 0 && slo <= MaxSLO:
		j.SLO = slo
	default:
		return j, bad("SLO", "%q is not -1 (none) or a multiple of the run time in (0, %g]", f[p.slo], float64(MaxSLO))
	}
	return j, nil
}
