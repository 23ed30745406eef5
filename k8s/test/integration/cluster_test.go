package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
)

const ns = "default"

// apiServer starts a kube-apiserver for the test and returns its client.
func apiServer(t testing.TB) (clientset.Interface, *rest.Config) {
	t.Helper()
	cs, cfg, _ := localkube.APIServer(t)
	return cs, cfg
}

// stoppableAPIServer is apiServer with a stop the caller may call before
// the test ends (it runs once; the cleanup calls it otherwise).
func stoppableAPIServer(t testing.TB) (clientset.Interface, *rest.Config, func()) {
	t.Helper()
	return localkube.APIServer(t)
}

// deployConfig is the example configuration shipped in k8s/deploy.
func deployConfig() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "deploy", "scheduler-config.yaml")
}

// startScheduler runs a kube-scheduler with wattsched's plugins and the
// given configuration file until the returned stop is called (or the test
// ends).
func startScheduler(t testing.TB, cs clientset.Interface, rc *rest.Config, configFile string) (stop func()) {
	t.Helper()
	stop, err := localkube.StartScheduler(cs, rc, configFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stop
}

// nodeObject is localkube.NodeObject.
func nodeObject(s cluster.NodeSpec) *v1.Node { return localkube.NodeObject(s) }

// podObject is task t as a pod in ns (localkube.PodObject).
func podObject(t *job.Task, name, schedulerName string) *v1.Pod {
	return localkube.PodObject(t, ns, name, schedulerName)
}

// outcome is where a pod ended: bound to Node, or unschedulable with Message.
type outcome struct {
	Node    string
	GPUs    string
	Message string
}

// waitScheduled polls until pod is bound or marked unschedulable.
func waitScheduled(cs clientset.Interface, name string, timeout time.Duration) (outcome, error) {
	deadline := time.Now().Add(timeout)
	for {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return outcome{}, err
		}
		if p.Spec.NodeName != "" {
			return outcome{Node: p.Spec.NodeName, GPUs: p.Annotations[gpushare.AnnGPUIndex]}, nil
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
				return outcome{Message: c.Message}, nil
			}
		}
		if time.Now().After(deadline) {
			return outcome{}, fmt.Errorf("pod %s neither bound nor unschedulable after %v", name, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
