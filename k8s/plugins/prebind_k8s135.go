//go:build k8s135

package plugins

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
)

// The PreBindPreFlight adapters of Kubernetes 1.35, where
// PreBindPlugin.PreBindPreFlight returns a status only (1.36 and later:
// prebind.go).

// PreBindPreFlight implements fwk.PreBindPlugin: nothing to do unless
// explain is on.
func (p *Score) PreBindPreFlight(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	return p.preBindPreFlight(ctx, state, pod, nodeName)
}

// PreBindPreFlight implements fwk.PreBindPlugin.
func (g *GPU) PreBindPreFlight(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	return g.preBindPreFlight(ctx, state, pod, nodeName)
}
