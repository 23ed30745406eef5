//go:build k8s135 || k8s136

package localkube

import (
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
)

// informerFactory is kube-scheduler's informer factory of Kubernetes 1.35
// and 1.36 (no informer name; 1.37 and later: informers.go).
func informerFactory(cs clientset.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(cs, 0)
}
