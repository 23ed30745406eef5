//go:build !k8s135 && !k8s136

package integration

import (
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/resourceclaim"
)

// newClaimController is kube-controller-manager's ResourceClaim controller
// over f's informers. Its constructor's parameters differ between
// Kubernetes minors (1.34 and 1.35 take Features, 1.36 adds the PodGroup
// informer, 1.37 drops Features): one file per minor, this one 1.37's.
func newClaimController(cs clientset.Interface, f informers.SharedInformerFactory) (*resourceclaim.Controller, error) {
	return resourceclaim.NewController(klog.Background(), cs, f.Core().V1().Pods(), f.Scheduling().V1beta1().PodGroups(),
		f.Resource().V1().ResourceClaims(), f.Resource().V1().ResourceClaimTemplates())
}
