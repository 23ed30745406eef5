package perf

import (
	"fmt"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// Speed is the one rule by which a job's recorded duration depends on the
// GPU it lands on: a task whose Work was measured on GPU model RefGPU runs
// Work x speed(RefGPU)/speed(placed) on a GPU of another model, the speeds
// being the catalog's relative throughputs for the task's workload class
// (hw.GPUModel.Speed). A task without a reference, or on a node without
// GPUs, keeps its Work.
type Speed struct {
	Catalog *hw.Catalog
}

// Workload is the catalog's workload class of a task: inference for
// job.Inference, training for every other kind (the traces' default).
func Workload(t *job.Task) string {
	if t.Kind == job.Inference {
		return hw.Inference
	}
	return hw.Training
}

// Factor is the multiplier of t's Work on node n: 1 without a reference
// GPU, on a node without GPUs, or on the reference model itself.
func (s Speed) Factor(t *job.Task, n *cluster.Node) (float64, error) {
	if t.RefGPU == "" || n.GPU == nil || t.GPUCount == 0 {
		return 1, nil
	}
	ref, err := s.Catalog.GPU(t.RefGPU)
	if err != nil {
		return 0, fmt.Errorf("task %d (%s): reference_gpu: %w", t.ID, t.Name, err)
	}
	if ref.Name == n.GPU.Name {
		return 1, nil // no figure needed on the model it was measured on
	}
	f, err := s.Catalog.SpeedRatio(ref.Name, n.GPU.Name, Workload(t))
	if err != nil {
		return 0, fmt.Errorf("task %d (%s) on node %s: %w", t.ID, t.Name, n.Name, err)
	}
	return f, nil
}

// Work is t's work on node n (Work x Factor).
func (s Speed) Work(t *job.Task, n *cluster.Node) (float64, error) {
	f, err := s.Factor(t, n)
	return t.Work * f, err
}
