package tasks

import (
	"fmt"
	"strings"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// sharesAsMIG turns the GPU-share pods that accept GPU model model into
// requests for one MIG instance of it (trace.shares_as_mig, a stand-in):
// the smallest profile with at least the share's compute
// (hw.MIGGeometry.SmallestProfileFor), the pod's GPU share then the
// instance's. It says what it did, per profile, for the results' source.
func sharesAsMIG(pods []job.Task, model string) (string, error) {
	geo, ok := hw.MIGFor(model)
	if !ok {
		if m, err := hw.Default().GPU(model); err == nil {
			geo, ok = hw.MIGFor(m.Name)
		}
	}
	if !ok {
		return "", fmt.Errorf("GPU model %s has no MIG geometry (hw/mig.yaml)", model)
	}
	count := map[string]int{}
	n := 0
	for i := range pods {
		p := &pods[i]
		if !p.Shared() || p.MIG() || !p.AcceptsGPU(model) {
			continue
		}
		prof, ok := geo.SmallestProfileFor(p.GPUMilli)
		if !ok {
			continue
		}
		_, milli, err := hw.MIGProfileFor(hw.Default(), p.GPUSpec, prof.Name)
		if len(p.GPUSpec) == 0 {
			_, milli, err = hw.MIGProfileFor(hw.Default(), []string{model}, prof.Name)
		}
		if err != nil {
			return "", fmt.Errorf("pod %s: %w", p.Name, err)
		}
		p.MIGProfile, p.GPUMilli = prof.Name, milli
		count[prof.Name]++
		n++
	}
	var parts []string
	for _, pr := range geo.Profiles {
		if count[pr.Name] > 0 {
			parts = append(parts, fmt.Sprintf("%d x %s", count[pr.Name], pr.Name))
		}
	}
	return fmt.Sprintf("stand-in: %d GPU-share pods as %s MIG instances, each the smallest profile with at least its compute share (%s)",
		n, geo.Name, strings.Join(parts, ", ")), nil
}
