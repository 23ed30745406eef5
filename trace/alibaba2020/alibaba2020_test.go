package alibaba2020

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/trace"
)

func read(t *testing.T) ([]Job, []Task) {
	t.Helper()
	jf, err := os.Open("testdata/pai_job_table.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer jf.Close()
	jobs, err := ReadJobs(jf, "pai_job_table.csv")
	if err != nil {
		t.Fatal(err)
	}
	tf, err := os.Open("testdata/pai_task_table.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	tasks, err := ReadTasks(tf, "pai_task_table.csv")
	if err != nil {
		t.Fatal(err)
	}
	return jobs, tasks
}

func TestGPUJobs(t *testing.T) {
	jobs, tasks := read(t)
	got := GPUJobs(jobs, tasks)
	// The fixture (rows written from the documented columns): job 6f7c
	// starts first (4000 s, 1 instance x 50% GPU -> 1 GPU, 600 s); 4b3e
	// starts at 5000 s with 4 workers x 100% (4 GPUs, 3600 s; its ps task
	// has no GPU). Dropped: a Failed job, one without end_time, one whose
	// tasks plan no GPU.
	want := []trace.GPUJob{
		{ID: "6f7c3e2b1a0d9c8b7a6f5e4d", SubmitSec: 0, DurationSec: 600, GPUs: 1, Line: 2},
		{ID: "4b3e1dcd2a8a8ae1fa0f2a9f", SubmitSec: 1000, DurationSec: 3600, GPUs: 4, Line: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("GPUJobs (-want +got):\n%s", d)
	}
}

func TestErrors(t *testing.T) {
	_, err := ReadTasks(strings.NewReader("a,b,x,Terminated,1,2,3,4,100,V100\n"), "task.csv")
	var pe *trace.ParseError
	if !errors.As(err, &pe) || err.Error() != `task.csv:1: column inst_num: "x" is not a number in [0, 100000] (empty: unknown)` {
		t.Fatalf("error %v", err)
	}
	// Non-finite, negative and out-of-range numbers are errors naming the
	// column (an end_time of Inf or 1e15 used to run, then panic or grow
	// without bound); empty fields are unknown.
	for _, c := range []struct{ table, row, col string }{
		{"job", "j,i,u,Terminated,0,Inf", "end_time"},
		{"job", "j,i,u,Terminated,NaN,5", "start_time"},
		{"job", "j,i,u,Terminated,0,1e15", "end_time"},
		{"job", "j,i,u,Terminated,-1,5", "start_time"},
		{"job", "j,i,u,Terminated,0,40000000", "end_time"},
		{"task", "a,b,1,Terminated,1,2,3,4,1e12,V100", "plan_gpu"},
		{"task", "a,b,-Inf,Terminated,1,2,3,4,100,V100", "inst_num"},
		// A job that ends before it starts was dropped silently.
		{"job", "j,i,u,Terminated,5,4", "end_time"},
		{"job", "j\x01,i,u,Terminated,0,5", "job_name"},
		{"task", "\x02,b,1,Terminated,1,2,3,4,100,V100", "job_name"},
	} {
		var err error
		if c.table == "job" {
			_, err = ReadJobs(strings.NewReader(c.row+"\n"), "t.csv")
		} else {
			_, err = ReadTasks(strings.NewReader(c.row+"\n"), "t.csv")
		}
		if !errors.As(err, &pe) || pe.Column != c.col || pe.Line != 1 {
			t.Errorf("%s %q: error %v, want column %s", c.table, c.row, err, c.col)
		}
	}
	if js, err := ReadJobs(strings.NewReader("j,i,u,Running,5,\n"), "t.csv"); err != nil || len(js) != 1 {
		t.Errorf("empty end_time (unknown): %v %v", js, err)
	}
	if _, err := ReadJobs(strings.NewReader("j,i,u,Terminated,0,5\nj,i,u,Failed,1,2\n"), "t.csv"); err == nil || err.Error() != `t.csv:2: column job_name: job "j" already on line 1` {
		t.Errorf("duplicate job: error %v", err)
	}
	_, err = ReadJobs(strings.NewReader("a,b,c\n"), "job.csv")
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Fatalf("error %v", err)
	}
}

// Whatever the input, a job or task that parses has unknown (NaN) or
// in-range numbers, and a failure is a ParseError.
func FuzzReadTables(f *testing.F) {
	f.Add("j,i,u,Terminated,0,3600\n", "j,t,1,Terminated,0,3600,400,10,100,V100\n")
	f.Fuzz(func(t *testing.T, jobs, tasks string) {
		js, err := ReadJobs(strings.NewReader(jobs), "j.csv")
		var pe *trace.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("job error %v is not a ParseError", err)
		}
		for _, j := range js {
			for _, v := range []float64{j.Start, j.End} {
				if !math.IsNaN(v) && !(v >= 0 && v <= MaxTimeSec) {
					t.Fatalf("time %v out of range", v)
				}
			}
		}
		ts, err := ReadTasks(strings.NewReader(tasks), "t.csv")
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("task error %v is not a ParseError", err)
		}
		for _, g := range GPUJobs(js, ts) {
			if !(g.DurationSec >= 0 && g.DurationSec <= MaxDurationSec) || g.GPUs < 1 {
				t.Fatalf("GPU job %+v out of range", g)
			}
		}
	})
}
