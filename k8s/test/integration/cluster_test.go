package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/profile"
	"k8s.io/kubernetes/test/integration/framework"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/k8s/plugins"
)

const ns = "default"

// apiServer starts a kube-apiserver for the test and returns its client.
func apiServer(t testing.TB) (clientset.Interface, *rest.Config) {
	t.Helper()
	cs, cfg, _ := stoppableAPIServer(t)
	return cs, cfg
}

// stoppableAPIServer is apiServer with a stop the caller may call before
// the test ends (it runs once; the cleanup calls it otherwise).
func stoppableAPIServer(t testing.TB) (clientset.Interface, *rest.Config, func()) {
	t.Helper()
	cs, cfg, tearDown := framework.StartTestServer(context.Background(), t, framework.TestServerSetup{
		ModifyServerRunOptions: func(o *options.ServerRunOptions) {
			// No service accounts to mount, no taints added to new nodes.
			o.Admission.GenericAdmission.DisablePlugins = []string{"ServiceAccount", "TaintNodesByCondition", "Priority", "StorageObjectInUseProtection"}
		},
	})
	var once sync.Once
	stop := func() { once.Do(tearDown) }
	t.Cleanup(stop)
	return cs, cfg, stop
}

// deployConfig is the example configuration shipped in k8s/deploy.
func deployConfig() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "deploy", "scheduler-config.yaml")
}

// startScheduler runs a kube-scheduler with wattsched's plugins and the
// given configuration file until the returned stop is called.
func startScheduler(t testing.TB, cs clientset.Interface, rc *rest.Config, configFile string) (stop func()) {
	t.Helper()
	cfg, err := scheduleroptions.LoadConfigFromFile(klog.Background(), configFile)
	if err != nil {
		t.Fatalf("loading %s: %v", configFile, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory := scheduler.NewInformerFactory(cs, 0)
	bc := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	bc.StartRecordingToSink(ctx.Done())
	sched, err := scheduler.New(ctx, cs, factory, nil, profile.NewRecorderFactory(bc),
		scheduler.WithKubeConfig(rc),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithFrameworkOutOfTreeRegistry(plugins.Registry()),
	)
	if err != nil {
		cancel()
		t.Fatalf("creating the scheduler: %v", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		cancel()
		t.Fatalf("scheduler handlers: %v", err)
	}
	done := make(chan struct{})
	go func() {
		sched.Run(ctx)
		close(done)
	}()
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
		bc.Shutdown()
		factory.Shutdown()
	}
	t.Cleanup(stop)
	return stop
}

// nodeObject is a Kubernetes node with the capacity of s: allocatable CPU,
// memory and nvidia.com/gpu, the GPU model as GPU feature discovery's
// nvidia.com/gpu.product label, and a Ready condition.
func nodeObject(s cluster.NodeSpec) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(s.CPUMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(s.MemMiB<<20, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(1000, resource.DecimalSI),
	}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: map[string]string{}}}
	if s.GPUs > 0 {
		rl[gpushare.ResourceGPU] = *resource.NewQuantity(int64(s.GPUs), resource.DecimalSI)
		n.Labels[gpushare.LabelGPUProduct] = s.GPUModel
	}
	n.Status = v1.NodeStatus{Capacity: rl, Allocatable: rl,
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}
	return n
}

// podObject is task t as a pod for schedulerName: CPU and memory requests,
// whole GPUs as nvidia.com/gpu, a shared GPU as wattsched.io/gpu-milli,
// the model constraint as wattsched.io/gpu-models.
func podObject(t *job.Task, name, schedulerName string) *v1.Pod {
	req := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(t.CPUMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(t.MemMiB<<20, resource.BinarySI),
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{}},
		Spec: v1.PodSpec{SchedulerName: schedulerName, Containers: []v1.Container{{
			Name: "task", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: req, Limits: v1.ResourceList{}},
		}}},
	}
	switch {
	case t.Shared():
		p.Annotations[gpushare.AnnGPUMilli] = strconv.FormatInt(t.GPUMilli, 10)
	case t.GPUCount > 0:
		q := *resource.NewQuantity(int64(t.GPUCount), resource.DecimalSI)
		p.Spec.Containers[0].Resources.Requests[gpushare.ResourceGPU] = q
		p.Spec.Containers[0].Resources.Limits[gpushare.ResourceGPU] = q
	}
	if len(t.GPUSpec) > 0 {
		p.Annotations[gpushare.AnnGPUModels] = t.SpecString()
	}
	return p
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
