package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/wattsched/wattsched/trace/alibaba2023"
)

const (
	benchNodes = 500
	benchPods  = 2000
)

// BenchmarkThroughput measures scheduling throughput (pods/s) of the
// wattsched 0.2*PWR+0.8*FGD profile and of kube-scheduler's default profile
// on the same in-process cluster: 500 openb GPU nodes (every other node of
// the 1,213) and the first 2,000 pods of the openb default pod list, all
// created before the scheduler starts; the clock runs from the scheduler's
// start until every pod is bound or marked unschedulable. Each profile
// gets a fresh API server, stopped after its round. The ratio of the two is the figure to quote;
// -benchtime Nx runs N rounds (each about 20 s) and reports the rates over
// all of them:
//
//	cd k8s && go test -run '^$' -bench Throughput -benchtime 3x ./test/integration/
func BenchmarkThroughput(b *testing.B) {
	dir := b.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	deploy, err := os.ReadFile(deployConfig())
	if err != nil {
		b.Fatal(err)
	}
	// The deployed profiles plus kube-scheduler's default one.
	if err := os.WriteFile(cfg, append(deploy, []byte("  - schedulerName: default-scheduler\n")...), 0o644); err != nil {
		b.Fatal(err)
	}
	// Rounds alternate the two profiles, the first one first in odd
	// rounds and second in even ones; the figures are over all rounds.
	var defSec, wsSec float64
	rounds := 0
	for b.Loop() {
		if rounds%2 == 0 {
			defSec += benchPods / throughput(b, cfg, "default-scheduler")
			wsSec += benchPods / throughput(b, cfg, "wattsched-pwr-fgd")
		} else {
			wsSec += benchPods / throughput(b, cfg, "wattsched-pwr-fgd")
			defSec += benchPods / throughput(b, cfg, "default-scheduler")
		}
		rounds++
	}
	def, ws := float64(rounds*benchPods)/defSec, float64(rounds*benchPods)/wsSec
	b.ReportMetric(def, "default-pods/s")
	b.ReportMetric(ws, "wattsched-pods/s")
	b.ReportMetric(ws/def, "ratio")
}

func throughput(b *testing.B, cfg, schedulerName string) float64 {
	all, err := alibaba2023.GPUNodes()
	if err != nil {
		b.Fatal(err)
	}
	pods, err := alibaba2023.Pods("default")
	if err != nil {
		b.Fatal(err)
	}
	// The API server stops with the round: left running (until the
	// benchmark ends), each round's server slowed the later rounds.
	cs, rc, stopAPI := stoppableAPIServer(b)
	defer stopAPI()
	parallel(b, benchNodes, func(i int) error {
		_, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(all[2*i]), metav1.CreateOptions{})
		return err
	})
	parallel(b, benchPods, func(i int) error {
		_, err := cs.CoreV1().Pods(ns).Create(context.Background(), podObject(&pods[i], fmt.Sprintf("p%04d", i), schedulerName), metav1.CreateOptions{})
		return err
	})
	w := watchResolved(b, cs)
	defer w.stop()
	start := time.Now()
	stop := startScheduler(b, cs, rc, cfg)
	defer stop()
	select {
	case <-w.done:
	case <-time.After(10 * time.Minute):
		d, _ := w.counts()
		b.Fatalf("%s: %d of %d pods resolved after 10 minutes", schedulerName, d, benchPods)
	}
	el := w.at.Sub(start).Seconds()
	_, bound := w.counts()
	b.Logf("%s: %d pods (%d bound) on %d nodes in %.2f s: %.0f pods/s", schedulerName, benchPods, bound, benchNodes, el, benchPods/el)
	return benchPods / el
}

// resolvedWatch follows the namespace's pods through an informer and
// closes done, noting the time in at, once all benchPods are bound or
// marked unschedulable. (A List of the 2,000 pods every 100 ms took a
// share of the 2 cores that the scheduler is measured on.)
type resolvedWatch struct {
	done chan struct{}
	at   time.Time
	stop func()

	mu       sync.Mutex
	resolved map[types.UID]bool // pod -> bound (absent: not resolved)
}

func watchResolved(b *testing.B, cs clientset.Interface) *resolvedWatch {
	w := &resolvedWatch{done: make(chan struct{}), resolved: map[types.UID]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	see := func(obj any) {
		p, ok := obj.(*v1.Pod)
		if !ok {
			return
		}
		bound := p.Spec.NodeName != ""
		unschedulable := false
		for _, c := range p.Status.Conditions {
			unschedulable = unschedulable || (c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse)
		}
		if !bound && !unschedulable {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		_, seen := w.resolved[p.UID]
		w.resolved[p.UID] = bound
		if !seen && len(w.resolved) == benchPods {
			w.at = time.Now()
			close(w.done)
		}
	}
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
	}); err != nil {
		b.Fatal(err)
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return w
}

// counts are the pods resolved and bound so far.
func (w *resolvedWatch) counts() (done, bound int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.resolved {
		if b {
			bound++
		}
	}
	return len(w.resolved), bound
}

func parallel(b *testing.B, n int, f func(i int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
