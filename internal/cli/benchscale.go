package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/report"
	"github.com/wattsched/wattsched/scenario"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// scaledInputs is in with its node list repeated factor times
// (alibaba2023.RepeatNodes): the pod list stays, and inflation draws tasks
// until the requested GPUs reach the target share of the larger capacity,
// so a cluster factor times as large gets about factor times the tasks.
func scaledInputs(in *tasks.Inputs, factor int) (*tasks.Inputs, error) {
	nodes, err := alibaba2023.RepeatNodes(in.Nodes, factor)
	if err != nil {
		return nil, err
	}
	out := *in
	out.Nodes = nodes
	out.Source = fmt.Sprintf("%s, node list x%d", in.Source, factor)
	return &out, nil
}

// ScalePoint is one inflation run of one policy on one cluster size.
type ScalePoint struct {
	Policy string
	Factor int
	Nodes  int
	Tasks  int
	// CPU is the run's CPU seconds (getrusage, user + system, GOMAXPROCS=1):
	// the least over the repetitions. Wall is the wall time of that run.
	CPU, Wall float64
}

// measureScale runs every policy of s on every factor, reps times,
// interleaved (policy, then factor, then the next repetition) so that a
// load that comes and goes on a shared machine touches every size alike,
// and keeps each run's least CPU time. The process must run with
// GOMAXPROCS=1 for the CPU time to be one core's.
func measureScale(s *scenario.Scenario, in *tasks.Inputs, factors []int, reps int, progress func(string)) ([]ScalePoint, error) {
	ins := make([]*tasks.Inputs, len(factors))
	for i, f := range factors {
		var err error
		if ins[i], err = scaledInputs(in, f); err != nil {
			return nil, err
		}
	}
	env := &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
	pts := make([]ScalePoint, len(s.Policies)*len(factors))
	for r := range reps {
		for pi, p := range s.Policies {
			one := *s
			one.Policies = []scenario.PolicySpec{p}
			one.Seeds = 1
			for fi, f := range factors {
				cpu0, start := cpuSeconds(), time.Now()
				res, err := tasks.RunInflation(env, &one, ins[fi])
				if err != nil {
					return nil, fmt.Errorf("%s on the node list x%d: %w", p.Name, f, err)
				}
				cpu, wall := cpuSeconds()-cpu0, time.Since(start).Seconds()
				pt := &pts[pi*len(factors)+fi]
				if r == 0 || cpu < pt.CPU {
					*pt = ScalePoint{Policy: p.Name, Factor: f, Nodes: len(ins[fi].Nodes), Tasks: res.Runs[0].Tasks, CPU: cpu, Wall: wall}
				}
				if progress != nil {
					progress(fmt.Sprintf("%s x%d: %.2f CPU s", p.Name, f, cpu))
				}
			}
		}
	}
	return pts, nil
}

// writeScaleTable prints the points of measureScale: per policy and
// factor the CPU time, the time per task and the ratio to the first factor.
func writeScaleTable(w io.Writer, pts []ScalePoint, factors []int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\tfactor\tnodes\ttasks\tCPU s\twall s\tµs/task\tCPU vs x%d\ttasks vs x%d\t\n", factors[0], factors[0])
	for i := 0; i < len(pts); i += len(factors) {
		base := pts[i]
		for _, p := range pts[i : i+len(factors)] {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.1f\t%.2fx\t%.2fx\t\n", p.Policy, p.Factor, p.Nodes, p.Tasks, p.CPU, p.Wall,
				p.CPU/float64(p.Tasks)*1e6, p.CPU/base.CPU, float64(p.Tasks)/float64(base.Tasks))
		}
	}
	return tw.Flush()
}

// parseFactors reads a comma-separated list of cluster factors.
func parseFactors(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > alibaba2023.MaxScaleFactor {
			return nil, fmt.Errorf("--scale: %q is not a factor 1..%d", f, alibaba2023.MaxScaleFactor)
		}
		out = append(out, v)
	}
	return out, nil
}

// replayBenchYAML is the scenario of the replay benchmark: the openb
// Default pods at their recorded times under the single scorers.
const replayBenchYAML = `name: bench-replay
mode: replay
trace:
  pods: default
policies:
  - name: FGD
    scorers: [{policy: fgd, weight: 1000}]
  - name: PWR
    scorers: [{policy: pwr, weight: 1000}]
  - name: "0.1*PWR+0.9*FGD"
    scorers: [{policy: pwr, weight: 100}, {policy: fgd, weight: 900}]
  - name: BestFit
    scorers: [{policy: bestfit, weight: 1000}]
  - name: DotProd
    scorers: [{policy: dotprod, weight: 1000}]
  - name: GpuPacking
    scorers: [{policy: gpupacking, weight: 1000}]
  - name: GpuClustering
    scorers: [{policy: gpuclustering, weight: 1000}]
`

// benchReplay replays the openb Default pod list repeated podFactor times
// (every copy at the original times) on the GPU node list repeated
// nodeFactor times, once per policy, and prints CPU and wall time per run
// against the 10 s budget.
func benchReplay(stdout io.Writer, nodeFactor, podFactor int, policies map[string]bool) error {
	s, err := scenario.Parse([]byte(replayBenchYAML), "bench-replay")
	if err != nil {
		return err
	}
	if len(policies) > 0 {
		var ps []scenario.PolicySpec
		for _, p := range s.Policies {
			if policies[p.Name] {
				ps = append(ps, p)
			}
		}
		s.Policies = ps
	}
	in, err := tasks.LoadInputs(s)
	if err != nil {
		return err
	}
	if in, err = scaledInputs(in, nodeFactor); err != nil {
		return err
	}
	if in.Pods, err = alibaba2023.RepeatPods(in.Pods, podFactor); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nreplay of openb_pod_list_default x%d (%d pods, each copy at the recorded times) on the GPU node list x%d (%d nodes), one core\n",
		podFactor, len(in.Pods), nodeFactor, len(in.Nodes))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tpods\tstarted\tCPU s\twall s\tvs 10 s budget\t")
	env := &experiment.Env{Version: Version, Registries: builtin.Registries(), Catalog: hw.Default(), Workers: 1}
	for _, p := range s.Policies {
		one := *s
		one.Policies = []scenario.PolicySpec{p}
		cpu0, start := cpuSeconds(), time.Now()
		runs, err := tasks.RunReplay(env, &one, in)
		if err != nil {
			return err
		}
		cpu, wall := cpuSeconds()-cpu0, time.Since(start).Seconds()
		started := 0
		for _, t := range runs[0].Result.Tasks {
			if t.Start >= 0 {
				started++
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.2fx\t\n", p.Name, len(in.Pods), started, cpu, wall, cpu/10)
	}
	return tw.Flush()
}

// scalePlot draws the CPU time per task of each policy over the node
// count: a flat line is a placement cost that does not grow with the cluster.
func scalePlot(pts []ScalePoint, factors []int) ([]byte, error) {
	lp := report.LinePlot{Title: "CPU time per task over cluster size (one core)", XLabel: "nodes (thousands)", YLabel: "CPU µs per task"}
	for i := 0; i < len(pts); i += len(factors) {
		sr := report.Series{Name: pts[i].Policy}
		for _, p := range pts[i : i+len(factors)] {
			sr.X = append(sr.X, float64(p.Nodes)/1000)
			sr.Y = append(sr.Y, p.CPU/float64(p.Tasks)*1e6)
		}
		lp.Series = append(lp.Series, sr)
	}
	return lp.SVG()
}
