//go:build !k8s135 && !k8s136

package localkube

import (
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
)

// informerFactory is kube-scheduler's informer factory. From Kubernetes
// 1.37 on it takes the informers' name (nil: unnamed, as kube-scheduler's
// own integration tests pass); 1.35 and 1.36: informers_k8s135.go.
func informerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0, nil)
}
