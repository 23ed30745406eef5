// Package localkube starts the pieces of a Kubernetes control plane in this
// process for the k8s module's tests and the kwok replay: an embedded etcd
// on loopback, kube-apiservers on it (k8s.io/kubernetes/test/integration/framework),
// kube-scheduler with wattsched's plugins, and the node and pod objects
// built from the cluster model. It is written once here so that
// k8s/test/integration, k8s/test/helm and k8s/replay start the same thing.
package localkube

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
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

// LogsEnv, when set non-empty, keeps the API server's, scheduler's and
// etcd's logs; otherwise QuietLogs and StartEtcd silence them.
const LogsEnv = "WATTSCHED_K8S_LOGS"

// QuietLogs discards klog's output unless LogsEnv is set: the API server
// and scheduler log at length, and failures say what went wrong.
func QuietLogs() {
	if os.Getenv(LogsEnv) != "" {
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// FreePort is a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartEtcd starts an embedded etcd on loopback for the API servers of
// this process, sets KUBE_INTEGRATION_ETCD_URL to it (the integration
// framework reads it; the whole process uses this etcd) and returns its
// stop.
func StartEtcd() (func(), error) {
	dir, err := os.MkdirTemp("", "wattsched-etcd-")
	if err != nil {
		return nil, err
	}
	var urls [2]*url.URL // client, peer
	for i := range urls {
		port, err := FreePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		urls[i], _ = url.Parse(fmt.Sprintf("http://127.0.0.1:%d", port))
	}
	client, peer := urls[0], urls[1]
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.LogLevel = "fatal"
	if os.Getenv(LogsEnv) != "" {
		cfg.LogLevel = "warn"
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("embedded etcd not ready after 60 s")
	}
	os.Setenv("KUBE_INTEGRATION_ETCD_URL", client.String())
	return func() {
		e.Close()
		os.RemoveAll(dir)
	}, nil
}

// MainWithEtcd is a TestMain body: quiet logs, one embedded etcd for every
// test of the package (none when skip is true), the tests, exit.
func MainWithEtcd(m *testing.M, skip bool) {
	QuietLogs()
	stop := func() {}
	if !skip {
		var err error
		if stop, err = StartEtcd(); err != nil {
			fmt.Fprintln(os.Stderr, "embedded etcd:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// APIServer starts a kube-apiserver on the etcd of StartEtcd (a fresh key
// prefix) and returns its client, its configuration and a stop the caller
// may call before tb ends (it runs once; tb's cleanup calls it otherwise).
func APIServer(tb testing.TB) (clientset.Interface, *rest.Config, func()) {
	tb.Helper()
	cs, cfg, tearDown := framework.StartTestServer(context.Background(), tb, framework.TestServerSetup{
		ModifyServerRunOptions: func(o *options.ServerRunOptions) {
			// No service accounts to mount, no taints added to new nodes.
			o.Admission.GenericAdmission.DisablePlugins = []string{"ServiceAccount", "TaintNodesByCondition", "Priority", "StorageObjectInUseProtection"}
		},
	})
	var once sync.Once
	stop := func() { once.Do(tearDown) }
	tb.Cleanup(stop)
	return cs, cfg, stop
}

// StartScheduler runs kube-scheduler with wattsched's plugins and the
// configuration file in this process until the returned stop is called
// (it runs once).
func StartScheduler(cs clientset.Interface, rc *rest.Config, configFile string) (func(), error) {
	cfg, err := scheduleroptions.LoadConfigFromFile(klog.Background(), configFile)
	if err != nil {
		return nil, fmt.Errorf("scheduler configuration %s: %w", configFile, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory := informerFactory(cs)
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
		return nil, fmt.Errorf("creating the scheduler: %w", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("scheduler handlers: %w", err)
	}
	done := make(chan struct{})
	go func() {
		sched.Run(ctx)
		close(done)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			bc.Shutdown()
			factory.Shutdown()
		})
	}, nil
}

// NodeObject is a Kubernetes node with the capacity of s: allocatable CPU,
// memory and nvidia.com/gpu, the GPU model as GPU feature discovery's
// nvidia.com/gpu.product label, and a Ready condition.
func NodeObject(s cluster.NodeSpec) *v1.Node {
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

// PodObject is task t as pod name in namespace for schedulerName: CPU and
// memory requests, whole GPUs as nvidia.com/gpu, a shared GPU as
// wattsched.io/gpu-milli, the model constraint as wattsched.io/gpu-models,
// an inference task's kind as wattsched.io/workload and its reference GPU
// as wattsched.io/reference-gpu.
func PodObject(t *job.Task, namespace, name, schedulerName string) *v1.Pod {
	req := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(t.CPUMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(t.MemMiB<<20, resource.BinarySI),
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: map[string]string{}},
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
	if t.Kind == job.Inference {
		p.Annotations[gpushare.AnnWorkload] = string(job.Inference)
	}
	if t.RefGPU != "" {
		p.Annotations[gpushare.AnnReferenceGPU] = t.RefGPU
	}
	return p
}
