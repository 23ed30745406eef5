package replay

import (
	"fmt"
	"math"
	"strings"

	"github.com/wattsched/wattsched/experiment/tasks"
	"github.com/wattsched/wattsched/scenario"
)

// plugin is the kube-scheduler score plugin of each core scorer the replay
// can express (k8s/plugins registers them under these names).
var plugin = map[string]string{
	"pwr":           "PWR",
	"fgd":           "FGD",
	"bestfit":       "BestFit",
	"dotprod":       "DotProd",
	"gpupacking":    "GpuPacking",
	"gpuclustering": "GpuClustering",
}

// MaxPods bounds the pods one replay creates (the API server and kwok run
// in this process).
const MaxPods = 20000

// Check refuses, before any API server starts or pod is created, a
// scenario the kwok replay cannot express: the first reason, naming the
// scenario field.
func Check(s *scenario.Scenario, in *tasks.Inputs, factor float64) error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("scenario %s: %s: %s (the kwok replay cannot express it; run it with `wattsched run`)", s.Name, field, fmt.Sprintf(format, a...))
	}
	switch {
	case s.Mode != scenario.Replay:
		return bad("mode", "%q, want replay: pods arrive at their creation times and run for their durations", s.Mode)
	case s.PowerLimit != nil:
		return bad("power_limit", "set: the simulator's power gate holds pods the way PowerBudget does, but its admission order differs; not supported yet")
	case s.PowerDown != nil:
		return bad("power_down", "set: kwok nodes cannot power off")
	case s.Measured != nil:
		return bad("measured", "set: recorded readings feed the simulator's gate only")
	case len(s.Variants) > 0:
		return bad("variants", "set: variants are compare's")
	case s.Catalog != "" || s.Hardware != nil:
		return bad("catalog/hardware", "set: the scheduler plugins use the built-in catalog")
	case s.Trace.ReferenceGPU != "":
		return bad("trace.reference_gpu", "%q: job speed by GPU model changes a pod's duration after it is placed; kwok's delay is fixed at creation", s.Trace.ReferenceGPU)
	case s.Gangs.HeadOfLine():
		return bad("gangs.backfill", "false: kube-scheduler keeps scheduling other pods while a gang waits (backfill)")
	case s.Gangs != nil && s.Gangs.GroupBy != "":
		return bad("gangs.group_by", "%q: the plugins do not pack a gang by node group", s.Gangs.GroupBy)
	case len(s.Policies) == 0:
		return bad("policies", "none")
	case !(factor >= 1 && factor <= 1e7) || math.IsNaN(factor):
		return fmt.Errorf("time factor %v: want 1 .. 1e7 simulated seconds per wall-clock second", factor)
	case len(in.Pods) == 0:
		return bad("trace.pods", "no pods")
	case len(in.Pods) > MaxPods:
		return bad("trace.pods", "%d pods, the kwok replay creates at most %d", len(in.Pods), MaxPods)
	}
	for i, ps := range s.Policies {
		for j, sc := range ps.Scorers {
			f := fmt.Sprintf("policies[%d] (%s).scorers[%d]", i, ps.Name, j)
			if _, ok := plugin[sc.Policy]; !ok {
				return bad(f+".policy", "%q has no kube-scheduler plugin (have %s)", sc.Policy, strings.Join(pluginNames(), ", "))
			}
			if len(sc.Args) > 0 {
				return bad(f+".args", "arguments are not passed to the plugins yet")
			}
			if sc.Weight < 1 || sc.Weight > 1000 {
				return bad(f+".weight", "%d: kube-scheduler plugin weights are 1..1000 here", sc.Weight)
			}
		}
	}
	for i, n := range in.Nodes {
		if n.GPUs > 8 {
			return bad("trace.nodes", "node %d (%s): %d GPUs, the plugins handle at most 8", i, n.Name, n.GPUs)
		}
	}
	return nil
}

func pluginNames() []string {
	return []string{"bestfit", "dotprod", "fgd", "gpuclustering", "gpupacking", "pwr"}
}
