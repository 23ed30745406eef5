package replay

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
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
	"k8s.io/utils/clock"
	"sigs.k8s.io/kwok/pkg/kwok/controllers"
	kwoklog "sigs.k8s.io/kwok/pkg/log"

	"go.etcd.io/etcd/server/v3/embed"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/k8s/plugins"
)

// Namespace holds the replay's pods.
const Namespace = "default"

// StartEtcd starts an embedded etcd on loopback for the API servers of
// this process (the integration framework reads KUBE_INTEGRATION_ETCD_URL)
// and returns its stop.
func StartEtcd() (func(), error) {
	dir, err := os.MkdirTemp("", "wattsched-replay-etcd-")
	if err != nil {
		return nil, err
	}
	var urls [2]*url.URL
	for i := range urls {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		urls[i], _ = url.Parse("http://" + l.Addr().String())
		l.Close()
	}
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "data")
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*urls[0]}, []url.URL{*urls[0]}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*urls[1]}, []url.URL{*urls[1]}
	cfg.InitialCluster = cfg.Name + "=" + urls[1].String()
	cfg.LogLevel = "fatal"
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
	os.Setenv("KUBE_INTEGRATION_ETCD_URL", urls[0].String())
	return func() {
		e.Close()
		os.RemoveAll(dir)
	}, nil
}

// apiServer starts a kube-apiserver as k8s/test/integration does (the
// integration framework, on the etcd of StartEtcd); it stops with tb's
// cleanups.
func apiServer(tb testing.TB) (clientset.Interface, *rest.Config) {
	cs, cfg, tearDown := framework.StartTestServer(context.Background(), tb, framework.TestServerSetup{
		ModifyServerRunOptions: func(o *options.ServerRunOptions) {
			o.Admission.GenericAdmission.DisablePlugins = []string{"ServiceAccount", "TaintNodesByCondition", "Priority", "StorageObjectInUseProtection"}
		},
	})
	tb.Cleanup(tearDown)
	return cs, cfg
}

// startKwok runs kwok's controllers (sigs.k8s.io/kwok/pkg/kwok/controllers)
// on every node with the replay's stages until ctx ends.
func startKwok(ctx context.Context, cs clientset.Interface) error {
	st, err := stages()
	if err != nil {
		return err
	}
	if os.Getenv("WATTSCHED_K8S_LOGS") == "" {
		ctx = kwoklog.NewContext(ctx, kwoklog.NewLogger(nil, kwoklog.LevelInfo))
	}
	ctr, err := controllers.NewController(controllers.Config{
		Clock:                    clock.RealClock{},
		TypedClient:              cs,
		RESTClient:               cs.CoreV1().RESTClient(),
		ManageAllNodes:           true,
		LocalStages:              st,
		PodPlayStageParallelism:  4,
		NodePlayStageParallelism: 2,
		CIDR:                     "10.0.0.1/16",
		NodeIP:                   "10.0.0.1",
		ID:                       "wattsched-replay",
	})
	if err != nil {
		return fmt.Errorf("kwok: %w", err)
	}
	if err := ctr.Start(ctx); err != nil {
		return fmt.Errorf("kwok: %w", err)
	}
	return nil
}

// startScheduler runs kube-scheduler 1.34 with wattsched's plugins and the
// configuration file in this process until the returned stop is called.
func startScheduler(cs clientset.Interface, rc *rest.Config, configFile string) (func(), error) {
	cfg, err := scheduleroptions.LoadConfigFromFile(klog.Background(), configFile)
	if err != nil {
		return nil, fmt.Errorf("scheduler configuration: %w", err)
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

// nodeObject is a fake GPU node with s's capacity (allocatable CPU, memory,
// nvidia.com/gpu, the model as nvidia.com/gpu.product), managed by kwok.
func nodeObject(s cluster.NodeSpec) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(s.CPUMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(s.MemMiB<<20, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(1000, resource.DecimalSI),
	}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: map[string]string{"type": "kwok"},
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
	if s.GPUs > 0 {
		rl[gpushare.ResourceGPU] = *resource.NewQuantity(int64(s.GPUs), resource.DecimalSI)
		n.Labels[gpushare.LabelGPUProduct] = s.GPUModel
	}
	n.Status = v1.NodeStatus{Capacity: rl, Allocatable: rl,
		Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}}
	return n
}

// podObject is task t as a pod for schedulerName that runs for runFor.
func podObject(t *job.Task, name, schedulerName string, runFor time.Duration) *v1.Pod {
	req := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(t.CPUMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(t.MemMiB<<20, resource.BinarySI),
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Annotations: map[string]string{
			AnnRunFor:                  runFor.String(),
			"replay.wattsched.io/task": strconv.Itoa(int(t.ID)),
		}},
		Spec: v1.PodSpec{SchedulerName: schedulerName, RestartPolicy: v1.RestartPolicyNever, Containers: []v1.Container{{
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
