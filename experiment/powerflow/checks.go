package powerflow

import (
	"fmt"
	"math"
	"strings"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/perf"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace"
)

// leastJob is the least power any job draws while it runs: one powered
// node (nodes start powered off) with one busy GPU at the least power any
// DNN, batch size and frequency of the library draws on one GPU (busyW),
// and the node's other GPUs idle.
func (env *Env) leastJob() (total, busyW hw.Watts) {
	busyW = hw.Watts(math.Inf(1))
	for _, d := range perf.DNNs {
		for _, b := range d.Batches {
			p := env.Lib.Profile(d.Name, b)
			for fi := range env.Lib.FreqsMHz {
				if _, w := p.Truth(1, fi); hw.Watts(w) < busyW {
					busyW = hw.Watts(w)
				}
			}
		}
	}
	return env.GPU.IdleW*(perf.GPUsPerNode-1) + busyW, busyW
}

// CheckSystem refuses, before any run, a system that could never run a
// job on nodes nodes: its policy's arguments (a frequency the GPU does not
// support names the allowed range), or a power limit below the least power
// any job draws (leastJob): no job could start without the cluster's
// actual power going above the limit, and the run would end with every job
// unfinished.
func (env *Env) CheckSystem(sys scenario.System, nodes int) error {
	_, o, err := env.scheduler(sys, env.truth(nil), nodes, false)
	if err != nil {
		return err
	}
	if least, busy := env.leastJob(); o.PowerLimit > 0 && hw.Watts(o.PowerLimit) < least {
		return fmt.Errorf("power limit %.4g W is below the least power any job draws, %.1f W (one node: %d idle GPUs x %.0f W and one busy GPU at %.1f W): no job can ever run",
			float64(o.PowerLimit), float64(least), perf.GPUsPerNode-1, float64(env.GPU.IdleW), float64(busy))
	}
	return nil
}

// tooLarge lists the jobs that cannot run on a cluster of gpus GPUs: the
// count the job runs on (the request rounded up to a power of two, capped
// at its DNN's largest count: policy.ReqCount) is larger; with asked, also
// the jobs whose trace asks for more GPUs than the cluster has (mode
// elastic refuses those even where the DNN's cap would let them run).
// jobs[i] is gj[i] converted (Env.Jobs).
func tooLarge(gj []trace.GPUJob, jobs []policy.ElasticJob, gpus int, asked bool) []int {
	var out []int
	for i := range jobs {
		if asked && gj[i].GPUs > gpus || policy.ReqCount(&jobs[i]) > gpus {
			out = append(out, i)
		}
	}
	return out
}

// describe names trace job i and the GPUs it asks for and runs on.
func describe(g trace.GPUJob, j *policy.ElasticJob) string {
	return fmt.Sprintf("job %s (line %d) asks for %d GPUs, runs on %d", g.ID, g.Line, g.GPUs, policy.ReqCount(j))
}

// fitJobs drops the jobs that cannot run on a cluster of nodes nodes
// (tooLarge: the count they run on is larger than the cluster)
// and renumbers the rest (IDs 0..n-1, order kept; nothing changes when
// every job fits). The note says how many were dropped and names them
// (each distinct trace job once, with its count; the first five); empty
// when none was.
func fitJobs(gj []trace.GPUJob, jobs []policy.ElasticJob, nodes int) ([]policy.ElasticJob, string) {
	gpus := nodes * perf.GPUsPerNode
	big := tooLarge(gj, jobs, gpus, false)
	if len(big) == 0 {
		return jobs, ""
	}
	drop := make([]bool, len(jobs))
	var names []string
	count := map[string]int{}
	for _, i := range big {
		drop[i] = true
		d := describe(gj[i], &jobs[i])
		if count[d] == 0 {
			names = append(names, d)
		}
		count[d]++
	}
	var keep []policy.ElasticJob
	for i, j := range jobs {
		if !drop[i] {
			j.ID = len(keep)
			keep = append(keep, j)
		}
	}
	var list []string
	for k, n := range names {
		if k == 5 {
			list = append(list, fmt.Sprintf("and %d more", len(names)-k))
			break
		}
		if c := count[n]; c > 1 {
			n += fmt.Sprintf(" (%d draws)", c)
		}
		list = append(list, n)
	}
	return keep, fmt.Sprintf("skipped %d of %d jobs larger than the %d-node cluster (%d GPUs): %s", len(big), len(jobs), nodes, gpus, strings.Join(list, ", "))
}
