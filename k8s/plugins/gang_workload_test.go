//go:build !k8s135

package plugins

import v1 "k8s.io/api/core/v1"

// gangVariants3 is gang3 named by the Coscheduling label and by the
// Workload API's spec.schedulingGroup (1.36+).
func gangVariants3() [][]*v1.Pod {
	ps := gang3()
	for _, p := range ps {
		p.Labels = nil
		name := "g"
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	}
	return [][]*v1.Pod{gang3(), ps}
}
