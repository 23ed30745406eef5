package alibaba2020

import (
	"errors"
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
	if !errors.As(err, &pe) || err.Error() != `task.csv:1: column inst_num: "x" is not a non-negative number` {
		t.Fatalf("error %v", err)
	}
	_, err = ReadJobs(strings.NewReader("a,b,c\n"), "job.csv")
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Fatalf("error %v", err)
	}
}
