// Package alibaba2020 reads the Alibaba PAI GPU trace 2020
// (cluster-trace-gpu-v2020; Weng et al., "MLaaS in the Wild", NSDI'22, CC BY
// 4.0): the job table and the task table, joined into GPU jobs. The tables
// have no header row; their column order is the upstream
// data/pai_{job,task}_table.header.
package alibaba2020

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

// JobColumns and TaskColumns are the upstream headers.
var (
	JobColumns  = []string{"job_name", "inst_id", "user", "status", "start_time", "end_time"}
	TaskColumns = []string{"job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu", "plan_mem", "plan_gpu", "gpu_type"}
)

// Job is a job-table row. Times are Unix seconds (NaN when empty).
type Job struct {
	Name, User, Status string
	Start, End         float64
	Line               int
}

// Task is a task-table row. PlanGPU is in percent of one GPU (100 = one
// GPU, NaN when empty); InstNum the task's instances.
type Task struct {
	Job, Name, Status, GPUType string
	InstNum, PlanGPU           float64
	// PlanCPU is in percent of one core (100 = one vCPU), PlanMem in GB;
	// NaN when empty.
	PlanCPU, PlanMem float64
	Line             int
}

// eachRow calls each for every record of a headerless table with cols
// columns; errors carry file and line.
func eachRow(r io.Reader, name string, cols []string, each func(rec []string, line int) error) error {
	r, err := userfile.Reader(r, name, userfile.Table)
	if err != nil {
		return err
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &trace.ParseError{File: name, Line: line, Err: err}
		}
		if len(rec) != len(cols) {
			return &trace.ParseError{File: name, Line: line, Err: fmt.Errorf("%d fields, want %d (%v)", len(rec), len(cols), cols)}
		}
		if err := each(rec, line); err != nil {
			return err
		}
	}
}

// Bounds on the tables' numbers: times in seconds since the trace's epoch,
// a job's run time at most one year, a task's instances and its GPU plan
// (percent of one GPU) at most what a 2020 cluster could hold.
const (
	MaxTimeSec     = 1e10
	MaxDurationSec = 365 * 24 * 3600
	MaxInstances   = 1e5
	MaxPlanCPU     = 1e6 // percent of a core: 10,000 vCPU
	MaxPlanMemGB   = 1e6
	MaxPlanGPU     = 100 * 128
)

// float parses a field: empty is unknown (NaN); a number must be finite and
// in [0, max].
func float(s string, max float64) (float64, error) {
	if s == "" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0 && v <= max) {
		return 0, fmt.Errorf("%q is not a number in [0, %g] (empty: unknown)", s, max)
	}
	return v, nil
}

// ReadJobs parses a job table: a job name is unique, a job that ends
// before it starts is an error (both were silently dropped jobs).
func ReadJobs(r io.Reader, name string) ([]Job, error) {
	var out []Job
	seen := map[string]int{}
	err := eachRow(r, name, JobColumns, func(rec []string, line int) error {
		j := Job{Name: rec[0], User: rec[2], Status: rec[3], Line: line}
		if err := trace.CheckName(j.Name); err != nil {
			return &trace.ParseError{File: name, Line: line, Column: "job_name", Err: err}
		}
		if prev, dup := seen[j.Name]; dup {
			return &trace.ParseError{File: name, Line: line, Column: "job_name", Err: fmt.Errorf("job %q already on line %d", j.Name, prev)}
		}
		seen[j.Name] = line
		for i, p := range []*float64{&j.Start, &j.End} {
			var err error
			if *p, err = float(rec[4+i], MaxTimeSec); err != nil {
				return &trace.ParseError{File: name, Line: line, Column: JobColumns[4+i], Err: err}
			}
		}
		if j.End < j.Start {
			return &trace.ParseError{File: name, Line: line, Column: "end_time", Err: fmt.Errorf("%s is before start_time %s", rec[5], rec[4])}
		}
		if d := j.End - j.Start; d > MaxDurationSec {
			return &trace.ParseError{File: name, Line: line, Column: "end_time", Err: fmt.Errorf("the job runs %.0f s, more than a year (%d s)", d, MaxDurationSec)}
		}
		out = append(out, j)
		return nil
	})
	return out, err
}

// ReadTasks parses a task table.
func ReadTasks(r io.Reader, name string) ([]Task, error) {
	var out []Task
	err := eachRow(r, name, TaskColumns, func(rec []string, line int) error {
		t := Task{Job: rec[0], Name: rec[1], Status: rec[3], GPUType: rec[9], Line: line}
		if err := trace.CheckName(t.Job); err != nil {
			return &trace.ParseError{File: name, Line: line, Column: "job_name", Err: err}
		}
		for _, c := range []struct {
			p   *float64
			col int
			max float64
		}{{&t.InstNum, 2, MaxInstances}, {&t.PlanCPU, 6, MaxPlanCPU}, {&t.PlanMem, 7, MaxPlanMemGB}, {&t.PlanGPU, 8, MaxPlanGPU}} {
			var err error
			if *c.p, err = float(rec[c.col], c.max); err != nil {
				return &trace.ParseError{File: name, Line: line, Column: TaskColumns[c.col], Err: err}
			}
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// GPUJobs joins the tables: every job whose status is Terminated, with
// both times and at least one GPU, becomes a GPU job submitted at its
// start_time (seconds from the earliest such job), running end-start
// seconds on the GPUs its tasks plan (sum of inst_num x plan_gpu/100,
// rounded up). Jobs come out in submission order (ties by name).
func GPUJobs(jobs []Job, tasks []Task) []trace.GPUJob {
	gpus := map[string]float64{}
	for _, t := range tasks {
		if !math.IsNaN(t.PlanGPU) && !math.IsNaN(t.InstNum) {
			gpus[t.Job] += t.InstNum * t.PlanGPU / 100
		}
	}
	var out []trace.GPUJob
	t0 := math.Inf(1)
	for _, j := range jobs {
		g := int(math.Ceil(gpus[j.Name] - 1e-9))
		if j.Status != "Terminated" || math.IsNaN(j.Start) || math.IsNaN(j.End) || j.End < j.Start || g < 1 {
			continue
		}
		t0 = math.Min(t0, j.Start)
		out = append(out, trace.GPUJob{ID: j.Name, SubmitSec: j.Start, DurationSec: j.End - j.Start, GPUs: g, Line: j.Line})
	}
	for i := range out {
		out[i].SubmitSec -= t0
	}
	slices.SortStableFunc(out, func(a, b trace.GPUJob) int {
		if a.SubmitSec != b.SubmitSec {
			if a.SubmitSec < b.SubmitSec {
				return -1
			}
			return 1
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}
