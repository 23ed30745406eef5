//go:build !k8s135

package plugins

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// The PreBindPreFlight adapters of Kubernetes 1.36 and later, where
// PreBindPlugin.PreBindPreFlight returns a PreBindPreFlightResult beside
// the status (1.35's is prebind_k8s135.go). The result is nil: the zero
// values, so PreBind runs sequentially (AllowParallel false), as it did
// before the field existed.

// PreBindPreFlight implements fwk.PreBindPlugin: nothing to do unless
// explain is on.
func (p *Score) PreBindPreFlight(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return nil, p.preBindPreFlight(ctx, state, pod, nodeName)
}

// PreBindPreFlight implements fwk.PreBindPlugin.
func (g *GPU) PreBindPreFlight(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	return nil, g.preBindPreFlight(ctx, state, pod, nodeName)
}
