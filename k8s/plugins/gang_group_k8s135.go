//go:build k8s135

package plugins

import v1 "k8s.io/api/core/v1"

// podGroupName is "" on Kubernetes 1.35, whose pods name a Workload
// (spec.workloadRef) rather than a PodGroup.
func podGroupName(*v1.Pod) string { return "" }
