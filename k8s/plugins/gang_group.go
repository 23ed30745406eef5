//go:build !k8s135

package plugins

import v1 "k8s.io/api/core/v1"

// podGroupName is the Workload API's name of pod's group
// (spec.schedulingGroup.podGroupName, Kubernetes 1.36 and later), or "".
func podGroupName(p *v1.Pod) string {
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName
	}
	return ""
}
