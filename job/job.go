// Package job describes the work a cluster runs: tasks with their resource
// demand (CPU, memory, a fraction of one GPU or whole GPUs, an optional GPU
// model constraint), their arrival and the work they carry.
package job

import (
	"fmt"
	"strings"
)

// MilliPerGPU is the number of milli-GPU in one GPU.
const MilliPerGPU = 1000

// Time is simulated time, or a span of it, in milliseconds: the one time
// type of every engine, policy and trace in wattsched.
type Time int64

// Seconds converts t to seconds.
func (t Time) Seconds() float64 { return float64(t) / 1000 }

// ID identifies a task within one run.
type ID int

// Kind is what a task does.
type Kind string

// Task kinds.
const (
	Training  Kind = "training"
	Inference Kind = "inference"
	HPC       Kind = "hpc"
	Service   Kind = "service"
)

// Demand is what one task asks of one node.
type Demand struct {
	CPUMilli int64 // milli-vCPU
	MemMiB   int64
	GPUCount int   // 0 (CPU only), 1 (shared or whole) or more whole GPUs
	GPUMilli int64 // per-GPU milli: in (0,1000) for a shared GPU, 1000 for whole GPUs, 0 without GPUs
	// GPUSpec lists the GPU models the task accepts; empty accepts any.
	GPUSpec []string
	// MIGProfile, when set, asks for one MIG GPU instance of this profile
	// (hw/mig.yaml: "3g.40gb") instead of a share of a time-sliced GPU:
	// GPUCount is then 1 and GPUMilli the instance's share of its GPU's
	// compute slices (what capacity totals count; hw.MIGProfileFor gives
	// it). One instance per task: a CUDA process sees a single MIG device,
	// so a pod with several instances is several processes, several tasks.
	MIGProfile string
}

// MIG reports whether the task asks for a MIG GPU instance.
func (d Demand) MIG() bool { return d.MIGProfile != "" }

// Shared reports whether the task asks for a fraction of one GPU (a share
// of a time-sliced GPU or a MIG instance).
func (d Demand) Shared() bool { return d.GPUCount == 1 && d.GPUMilli < MilliPerGPU }

// TotalGPUMilli is the milli-GPU the task takes in all.
func (d Demand) TotalGPUMilli() int64 { return int64(d.GPUCount) * d.GPUMilli }

// AcceptsGPU reports whether a node with GPU model m satisfies the GPU model constraint.
func (d Demand) AcceptsGPU(m string) bool {
	if len(d.GPUSpec) == 0 {
		return true
	}
	if m == "" {
		return false
	}
	for _, s := range d.GPUSpec {
		if s == m {
			return true
		}
	}
	return false
}

// SpecString is the GPU constraint joined with "|" as in the openb traces.
func (d Demand) SpecString() string { return strings.Join(d.GPUSpec, "|") }

// Validate checks the GPU-sharing rule of the FGD/PWR papers: a task asks
// for no GPU, a fraction of exactly one GPU, or 1..8 whole GPUs; a MIG task
// for one instance. Whether a GPU model has the MIG profile is checked
// where the models are known (hw.MIGProfileFor).
func (d Demand) Validate() error {
	switch {
	case d.CPUMilli < 0:
		return fmt.Errorf("cpu_milli %d: negative", d.CPUMilli)
	case d.MemMiB < 0:
		return fmt.Errorf("memory_mib %d: negative", d.MemMiB)
	case d.GPUCount < 0 || d.GPUCount > 8:
		return fmt.Errorf("num_gpu %d: want 0..8", d.GPUCount)
	case d.GPUCount == 0 && d.GPUMilli != 0:
		return fmt.Errorf("gpu_milli %d with num_gpu 0: want 0", d.GPUMilli)
	case d.GPUCount > 0 && (d.GPUMilli <= 0 || d.GPUMilli > MilliPerGPU):
		return fmt.Errorf("gpu_milli %d: want 1..1000 when num_gpu > 0", d.GPUMilli)
	case d.GPUCount > 1 && d.GPUMilli != MilliPerGPU:
		return fmt.Errorf("gpu_milli %d with num_gpu %d: a task cannot share several GPUs", d.GPUMilli, d.GPUCount)
	case d.MIG() && d.GPUCount != 1:
		return fmt.Errorf("mig_profile %s with num_gpu %d: a task asks for one MIG instance (num_gpu 1)", d.MIGProfile, d.GPUCount)
	case d.MIG() && strings.TrimSpace(d.MIGProfile) != d.MIGProfile:
		return fmt.Errorf("mig_profile %q: spaces around the profile name", d.MIGProfile)
	}
	return nil
}

// Task is one unit of work submitted to the cluster.
type Task struct {
	ID   ID
	Name string
	Kind Kind
	Demand
	// Class indexes the task's distinct demand within its workload (tasks
	// with equal Demand share a Class); -1 when unknown. Placers use it to
	// cache scores.
	Class int
	// Submit is the arrival time.
	Submit Time
	// Work is the amount of work in rate-seconds: a task running at rate 1
	// finishes after Work seconds (zero: it ends as it starts). In inflation
	// experiments tasks never end, whatever their work.
	Work float64
	// RefGPU is the GPU model (catalog name or alias) Work was measured
	// on; empty when unknown, and Work then holds on every model. On a
	// GPU of another model the task does Work x speed(RefGPU)/speed(that
	// model) rate-seconds of work (perf.Speed), its Kind choosing the
	// training or inference figure.
	RefGPU string
	// Gang names the gang job the task is one pod of ("": a job of its
	// own). The pods of a gang start together, all or none, and end
	// together (sim/gang.go).
	Gang string
	// GangSize is the number of pods of the gang (0 without Gang).
	GangSize int
}

// Classify assigns Class to tasks by distinct Demand, in first-seen order,
// and returns the number of classes.
func Classify(tasks []Task) int {
	idx := map[string]int{}
	for i := range tasks {
		k := tasks[i].Demand.key()
		c, ok := idx[k]
		if !ok {
			c = len(idx)
			idx[k] = c
		}
		tasks[i].Class = c
	}
	return len(idx)
}

func (d Demand) key() string {
	return fmt.Sprintf("%d/%d/%d/%d/%s/%s", d.CPUMilli, d.MemMiB, d.GPUCount, d.GPUMilli, d.SpecString(), d.MIGProfile)
}
