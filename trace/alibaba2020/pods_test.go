package alibaba2020

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestTables(t *testing.T) ([]Job, []Task) {
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

// Pods: a job of several instances is a gang of them (4 GPU workers and
// a CPU-only parameter server: 5 pods); a job of one instance is a pod of
// its own, a 50% plan a share of 500 milli-GPU.
func TestPods(t *testing.T) {
	jobs, tasks := readTestTables(t)
	pods, err := Pods(jobs, tasks)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Gang string
		Size, GPUs int
		Milli, CPU int64
		MemMiB     int64
		SubmitMS   int64
		Work       float64
	}
	byName := map[string]row{}
	for _, p := range pods {
		byName[p.Name] = row{p.Name, p.Gang, p.GangSize, p.GPUCount, p.GPUMilli, p.CPUMilli, p.MemMiB, int64(p.Submit), p.Work}
	}
	// Job 4b3e...: start 5000, the earliest kept job starts at 4000, so
	// submit 1000 s; end 8600: 3600 s. plan_cpu 600 = 6000 milli,
	// plan_mem 29.296875 GB = 30000 MiB.
	g := "4b3e1dcd2a8a8ae1fa0f2a9f"
	want := map[string]row{
		g + "-ps-0":                             {g + "-ps-0", g, 5, 0, 0, 6000, 30000, 1000000, 3600},
		g + "-worker-0":                         {g + "-worker-0", g, 5, 1, 1000, 6000, 30000, 1000000, 3600},
		g + "-worker-3":                         {g + "-worker-3", g, 5, 1, 1000, 6000, 30000, 1000000, 3600},
		"6f7c3e2b1a0d9c8b7a6f5e4d-tensorflow-0": {"6f7c3e2b1a0d9c8b7a6f5e4d-tensorflow-0", "", 0, 1, 500, 6000, 30000, 0, 600},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, byName[name]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	gang := 0
	for _, p := range pods {
		if p.Gang == g {
			gang++
		}
	}
	if gang != 5 {
		t.Errorf("gang %s has %d pods, want 4 workers + 1 ps", g, gang)
	}
}

func TestPodsTooManyGPUs(t *testing.T) {
	jobs := []Job{{Name: "j", Status: "Terminated", Start: 0, End: 10, Line: 1}}
	tasks := []Task{{Job: "j", Name: "w", InstNum: 2, PlanGPU: 1600, Line: 7}}
	_, err := Pods(jobs, tasks)
	if err == nil || !strings.Contains(err.Error(), "task table line 7: job j task w: each instance plans 16 GPUs, more than any node has") {
		t.Fatalf("error %v, want one naming the instance", err)
	}
}
