package alibaba2020

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/wattsched/wattsched/job"
)

// MaxPodGPUs is the most GPUs one instance (pod) may plan: one node's.
const MaxPodGPUs = 8

// Pods joins the tables into pods for the replay engine: every job that
// GPUJobs keeps (Terminated, both times, at least one planned GPU) gives
// one pod per instance of each of its tasks (inst_num of them), with the
// task's plan_cpu (percent of a core: x10 milli-vCPU), plan_mem (GB:
// x1024 MiB) and plan_gpu (percent of one GPU: below 100 a share of one
// GPU, from 100 on whole GPUs, rounded up). A job of more than one
// instance is a gang named after the job (its tasks' instances start
// together: PS and workers, or the workers of an all-reduce), its pods
// <job>-<task>-<k>, tasks by name. Submit and duration are the job's
// start_time (seconds from the earliest kept job) and end-start. Pods
// come out by submission, ties by job name, with IDs in that order. An
// instance planning more than MaxPodGPUs GPUs is an error naming it.
func Pods(jobs []Job, tasks []Task) ([]job.Task, error) {
	byJob := map[string][]Task{}
	for _, t := range tasks {
		byJob[t.Job] = append(byJob[t.Job], t)
	}
	kept := map[string]bool{}
	var order []string
	sub := map[string][2]float64{}
	for _, g := range GPUJobs(jobs, tasks) {
		kept[g.ID] = true
		order = append(order, g.ID)
		sub[g.ID] = [2]float64{g.SubmitSec, g.DurationSec}
	}
	var out []job.Task
	for _, name := range order {
		ts := slices.Clone(byJob[name])
		slices.SortStableFunc(ts, func(a, b Task) int { return cmp.Compare(a.Name, b.Name) })
		var pods []job.Task
		for _, t := range ts {
			if math.IsNaN(t.InstNum) || t.InstNum < 1 {
				continue
			}
			d := job.Demand{}
			if !math.IsNaN(t.PlanGPU) && t.PlanGPU > 0 {
				if t.PlanGPU < 100 {
					d.GPUCount, d.GPUMilli = 1, int64(math.Ceil(t.PlanGPU*10-1e-9))
				} else {
					d.GPUCount, d.GPUMilli = int(math.Ceil(t.PlanGPU/100-1e-9)), job.MilliPerGPU
				}
			}
			if d.GPUCount > MaxPodGPUs {
				return nil, fmt.Errorf("task table line %d: job %s task %s: each instance plans %g GPUs, more than any node has (%d at most)", t.Line, t.Job, t.Name, t.PlanGPU/100, MaxPodGPUs)
			}
			if !math.IsNaN(t.PlanCPU) {
				d.CPUMilli = int64(math.Round(t.PlanCPU * 10))
			}
			if !math.IsNaN(t.PlanMem) {
				d.MemMiB = int64(math.Round(t.PlanMem * 1024))
			}
			for k := range int(t.InstNum) {
				pods = append(pods, job.Task{Name: fmt.Sprintf("%s-%s-%d", t.Job, t.Name, k), Kind: job.Training, Class: -1, Demand: d,
					Submit: job.Time(math.Round(sub[name][0] * 1000)), Work: sub[name][1]})
			}
		}
		if len(pods) > 1 {
			for i := range pods {
				pods[i].Gang, pods[i].GangSize = name, len(pods)
			}
		}
		for _, p := range pods {
			p.ID = job.ID(len(out))
			out = append(out, p)
		}
	}
	return out, nil
}
