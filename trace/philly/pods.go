package philly

import (
	"fmt"
	"strconv"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/trace"
)

// PodShape is what Pods gives each pod besides its GPUs: the Pollux
// table records GPUs only, so CPU and memory are per GPU (a choice of the
// caller, documented with the scenario that uses it), and NodeGPUs is the
// most GPUs one pod (one machine) takes.
type PodShape struct {
	NodeGPUs       int
	CPUMilliPerGPU int64
	MemMiBPerGPU   int64
}

// Pods turns Philly jobs into pods: a job of at most NodeGPUs GPUs is one
// pod; a larger job is a gang of ceil(GPUs/NodeGPUs) pods, named
// philly-<ID>-<k>, its GPUs spread as evenly as whole GPUs allow (the
// first GPUs mod pods pods take one more), all pods with the job's submit
// time and duration. Pods get IDs in job order. The Pollux table gives a
// job's GPU count, not its per-attempt machine list (that is in the raw
// trace, which is not public in any snapshot), so a multi-machine job
// takes as few machines as its GPUs need.
func Pods(jobs []trace.GPUJob, shape PodShape) ([]job.Task, error) {
	if shape.NodeGPUs < 1 || shape.NodeGPUs > 8 || shape.CPUMilliPerGPU < 0 || shape.MemMiBPerGPU < 0 {
		return nil, fmt.Errorf("philly pods: node GPUs %d (want 1..8), CPU %d milli and memory %d MiB per GPU (want >= 0)",
			shape.NodeGPUs, shape.CPUMilliPerGPU, shape.MemMiBPerGPU)
	}
	var out []job.Task
	for _, j := range jobs {
		if j.GPUs < 1 {
			return nil, fmt.Errorf("philly pods: job %s (line %d): %d GPUs, want at least 1", j.ID, j.Line, j.GPUs)
		}
		n := (j.GPUs + shape.NodeGPUs - 1) / shape.NodeGPUs
		base := "philly-" + j.ID
		for k := range n {
			g := j.GPUs / n
			if k < j.GPUs%n {
				g++
			}
			t := job.Task{ID: job.ID(len(out)), Name: base, Kind: job.Training, Class: -1,
				Submit: job.Time(j.SubmitSec * 1000), Work: j.DurationSec,
				Demand: job.Demand{CPUMilli: int64(g) * shape.CPUMilliPerGPU, MemMiB: int64(g) * shape.MemMiBPerGPU, GPUCount: g, GPUMilli: job.MilliPerGPU}}
			if n > 1 {
				t.Name = base + "-" + strconv.Itoa(k)
				t.Gang, t.GangSize = base, n
			}
			out = append(out, t)
		}
	}
	return out, nil
}
