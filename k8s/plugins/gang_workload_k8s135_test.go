//go:build k8s135

package plugins

import v1 "k8s.io/api/core/v1"

// gangVariants3 is gang3 named by the Coscheduling label only: 1.35's pods
// have no spec.schedulingGroup (podGroupName reads none there).
func gangVariants3() [][]*v1.Pod { return [][]*v1.Pod{gang3()} }
