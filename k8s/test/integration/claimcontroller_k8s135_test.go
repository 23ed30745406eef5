//go:build k8s135

package integration

import (
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/resourceclaim"
)

// newClaimController: Kubernetes 1.35's constructor (claimcontroller_test.go).
func newClaimController(cs clientset.Interface, f informers.SharedInformerFactory) (*resourceclaim.Controller, error) {
	return resourceclaim.NewController(klog.Background(), resourceclaim.Features{}, cs,
		f.Core().V1().Pods(), f.Resource().V1().ResourceClaims(), f.Resource().V1().ResourceClaimTemplates())
}
