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
	clientset "k8s.io/client-go/kubernetes"

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
// gets a fresh API server. The ratio of the two is the figure to quote;
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
	// Rounds alternate the two profiles; the figures are over all rounds.
	var defSec, wsSec float64
	rounds := 0
	for b.Loop() {
		defSec += benchPods / throughput(b, cfg, "default-scheduler")
		wsSec += benchPods / throughput(b, cfg, "wattsched-pwr-fgd")
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
	cs, rc := apiServer(b)
	parallel(b, benchNodes, func(i int) error {
		_, err := cs.CoreV1().Nodes().Create(context.Background(), nodeObject(all[2*i]), metav1.CreateOptions{})
		return err
	})
	parallel(b, benchPods, func(i int) error {
		_, err := cs.CoreV1().Pods(ns).Create(context.Background(), podObject(&pods[i], fmt.Sprintf("p%04d", i), schedulerName), metav1.CreateOptions{})
		return err
	})
	start := time.Now()
	stop := startScheduler(b, cs, rc, cfg)
	defer stop()
	for {
		done, bound := resolved(b, cs)
		if done == benchPods {
			el := time.Since(start).Seconds()
			b.Logf("%s: %d pods (%d bound) on %d nodes in %.2f s: %.0f pods/s", schedulerName, benchPods, bound, benchNodes, el, benchPods/el)
			return benchPods / el
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%s: %d of %d pods resolved after 10 minutes", schedulerName, done, benchPods)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// resolved counts the pods bound or marked unschedulable.
func resolved(b *testing.B, cs clientset.Interface) (done, bound int) {
	l, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range l.Items {
		p := &l.Items[i]
		if p.Spec.NodeName != "" {
			done++
			bound++
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				done++
				break
			}
		}
	}
	return done, bound
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
