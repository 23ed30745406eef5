package plugins

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

// BenchmarkBudgetPreFilter times PowerBudget's PreFilter (the per-cycle
// power check over every node) at 500 nodes of 8 T4s, with estimates and
// in measured mode with a warm meter: its readings come from a real
// Prometheus scraping 500 nodes x 8 GPUs of DCGM series, refreshed once
// before timing (the plugin refreshes off the scheduling cycle). The
// difference between the two is the measured mode's cost per cycle. The
// server is stopped before timing; the meter answers from memory.
func BenchmarkBudgetPreFilter(b *testing.B) {
	const n = 500
	nodes := make([]*v1.Node, n)
	trace := make([]promtest.Node, n)
	for i := range nodes {
		name := fmt.Sprintf("n%03d", i)
		nodes[i] = gpuNode(name, "T4", 8, 64000)
		trace[i] = promtest.Node{Name: name, Model: "Tesla T4", GPUs: 8, IdleW: 10, FullW: 70, OtherW: 200}
	}
	exp := promtest.NewExporter(b, 1, trace...)
	srv := promtest.Start(b, exp.Target)
	m, err := prom.NewMeter(prom.Config{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	promtest.WaitReading(b, m, "n499")
	// Time without Prometheus scraping 4,000 series in the background.
	srv.Stop()
	for _, mode := range []string{"estimated", "measured"} {
		b.Run(mode, func(b *testing.B) {
			args := BudgetArgs{BudgetWatts: 1e9}
			factory := NewBudget
			if mode == "measured" {
				args.Measured = &MeasuredArgs{Config: prom.Config{URL: srv.URL}}
				factory = func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
					return newBudget(ctx, obj, h, func(MeasuredArgs) (statusMeter, error) { return warmMeter{m}, nil })
				}
			}
			fns := append(gpuPlugin(GPUArgs{}), tf.RegisterPluginAsExtensions(BudgetName, factory, "PreFilter", "Filter"), withArgs(BudgetName, args))
			e := newEnv(b, nodes, nil, fns...)
			p := pod("p", 1000, 500, nil)
			cpu0 := cpuTime()
			n := 0
			for b.Loop() {
				if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), p); !st.IsSuccess() {
					b.Fatal(st)
				}
				n++
			}
			// CPU time per cycle: on a shared, loaded machine wall time
			// mostly measures the other processes.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}

// warmMeter is a refreshed meter without its Refresh method: the plugin
// starts no refresh loop, so the timed cycles read the same readings.
type warmMeter struct{ m *prom.Meter }

func (w warmMeter) Check(node string) (power.Reading, string, bool) { return w.m.Check(node) }
func (w warmMeter) Status(node string) prom.Status                  { return w.m.Status(node) }
func (w warmMeter) Answers() (uint64, time.Time, time.Time)         { return w.m.Answers() }

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBudgetCycle times PowerBudget's whole part of a scheduling
// cycle, PreFilter and Filter on every node, at 500 nodes of 8 T4s that
// already run shared pods (a different mix on each node), with the
// FGD simulator's GPU selector ("bestfit") and with the FGD selector the
// deployed 0.2*PWR+0.8*FGD profile names ("fgd"), with estimates only.
// The budget is never reached, so the figure is the check's cost.
//
//	cd k8s && go test ./plugins -run '^$' -bench BudgetCycle -benchtime 200x -count 3
func BenchmarkBudgetCycle(b *testing.B) {
	const n = 500
	nodes := make([]*v1.Node, n)
	var pods []*v1.Pod
	for i := range nodes {
		name := fmt.Sprintf("n%03d", i)
		nodes[i] = gpuNode(name, "T4", 8, 64000)
		// GPU g of node i holds ((i+g) mod 5) x 200 milli-GPU.
		for g := range 8 {
			if milli := int64((i+g)%5) * 200; milli > 0 {
				pods = append(pods, bound(pod(fmt.Sprintf("%s-%d", name, g), 1000, milli, nil), name, fmt.Sprint(g)))
			}
		}
	}
	for _, sel := range []string{"bestfit", "fgd"} {
		b.Run(sel, func(b *testing.B) {
			args := GPUArgs{GPUSelector: sel}
			if sel == "fgd" {
				args.FGD = WorkloadArgs{Workload: "default"}
			}
			fns := append(gpuPlugin(args), tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
				withArgs(BudgetName, BudgetArgs{BudgetWatts: 1e9}))
			e := newEnv(b, nodes, pods, fns...)
			p := pod("p", 1000, 500, nil)
			cpu0 := cpuTime()
			k := 0
			for b.Loop() {
				state := framework.NewCycleState()
				if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
					b.Fatal(st)
				}
				for _, ni := range e.nodes {
					if st := e.fw.RunFilterPlugins(context.Background(), state, p, ni); !st.IsSuccess() && st.Code() != fwk.Unschedulable {
						b.Fatal(st)
					}
				}
				k++
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(k), "cpu-ns/op")
		})
	}
}

// cycleNodes are n nodes of the scheduler_perf workload's three shapes
// (k8s/test/perf/templates/node-gpu.yaml: per ten nodes five of 8 G2
// GPUs, four of 2 T4s, one of 8 V100M32s) with (i mod 4) pods already
// bound to node i: a 470 milli-GPU share on GPU 0, one whole GPU 1, a 320
// share on GPU 0, so that the nodes are in a dozen different states.
func cycleNodes(n int) ([]*v1.Node, []*v1.Pod) {
	nodes := make([]*v1.Node, n)
	var pods []*v1.Pod
	for i := range nodes {
		name := fmt.Sprintf("gpu-node-%d", i)
		switch k := i % 10; {
		case k < 5:
			nodes[i] = gpuNode(name, "G2", 8, 96000)
		case k < 9:
			nodes[i] = gpuNode(name, "T4", 2, 104000)
		default:
			nodes[i] = gpuNode(name, "V100M32", 8, 96000)
		}
		for k := range i % 4 {
			milli, gpu := []int64{470, 1000, 320}[k], []string{"0", "1", "0"}[k]
			pods = append(pods, bound(pod(fmt.Sprintf("%s-%d", name, k), 4000, milli, nil), name, gpu))
		}
	}
	return nodes, pods
}

// BenchmarkCycle times the wattsched plugins' part of one scheduling cycle
// as kube-scheduler runs it for a pod (PreFilter, Filter on every node,
// PreScore and Score on the feasible ones, NormalizeScore), with the
// profile of k8s/test/perf/config/pwr-fgd.yaml (0.2*PWR + 0.8*FGD, FGD's
// GPU selector) and with PowerBudget added (estimates; the budget is
// never reached), at 500 and 5,000 nodes; the pods cycle through a 470
// milli-GPU share, one whole GPU and a CPU-only pod. Filter runs on one
// goroutine here (the scheduler spreads it over 16): cpu-ns/op is the
// process CPU time per cycle, allocs/op the allocations.
//
//	cd k8s && go test ./plugins -run '^$' -bench Cycle -benchmem -benchtime 100x
func BenchmarkCycle(b *testing.B) {
	for _, n := range []int{500, 5000} {
		nodes, bound := cycleNodes(n)
		for _, prof := range []string{"pwr-fgd", "pwr-fgd-budget"} {
			b.Run(fmt.Sprintf("%s/%dNodes", prof, n), func(b *testing.B) {
				fns := append(gpuPlugin(GPUArgs{GPUSelector: "fgd", FGD: WorkloadArgs{Workload: "default"}}),
					tf.RegisterPluginAsExtensionsWithWeight(PWRName, 200, NewPWR, "PreScore", "Score"),
					tf.RegisterPluginAsExtensionsWithWeight(FGDName, 800, NewFGD, "PreScore", "Score"),
					withArgs(FGDName, WorkloadArgs{Workload: "default"}))
				if prof == "pwr-fgd-budget" {
					fns = append(fns, tf.RegisterPluginAsExtensions(BudgetName, NewBudget, "PreFilter", "Filter"),
						withArgs(BudgetName, BudgetArgs{BudgetWatts: 1e9}))
				}
				// The bound pods are in the snapshot only: the plugins read
				// them from there (creating them in the fake clientset took
				// minutes at 5,000 nodes).
				e := envWith(b, fake.NewClientset(), nodes, bound, fns...)
				timeCycles(b, e.fw, e.nodes, false)
			})
		}
	}
}

// timeCycles times whole scheduling cycles of fw over nodes (PreFilter,
// Filter on every node, PreScore, Score and NormalizeScore on the
// feasible ones) for a 470 milli-GPU share, one whole GPU and a CPU-only
// pod in turn, after one untimed cycle of each; cpu-ns/op is the process
// CPU time per cycle. With parallel, Filter runs on the framework's
// parallelizer as kube-scheduler runs it (16 goroutines); else on one.
func timeCycles(b *testing.B, fw framework.Framework, nodes []fwk.NodeInfo, parallel bool) {
	pods := []*v1.Pod{pod("share", 4000, 470, nil), pod("whole", 4000, 1000, nil), pod("cpu", 4000, 0, nil)}
	ctx := context.Background()
	feasible := make([]fwk.NodeInfo, 0, len(nodes))
	passed := make([]bool, len(nodes))
	cycle := func(p *v1.Pod) {
		state := framework.NewCycleState()
		if _, st, _ := fw.RunPreFilterPlugins(ctx, state, p); !st.IsSuccess() {
			b.Fatal(st)
		}
		filter := func(i int) { passed[i] = fw.RunFilterPlugins(ctx, state, p, nodes[i]).IsSuccess() }
		if parallel {
			fw.Parallelizer().Until(ctx, len(nodes), filter, "Filter")
		} else {
			for i := range nodes {
				filter(i)
			}
		}
		feasible = feasible[:0]
		for i, ni := range nodes {
			if passed[i] {
				feasible = append(feasible, ni)
			}
		}
		if st := fw.RunPreScorePlugins(ctx, state, p, feasible); !st.IsSuccess() && !st.IsSkip() {
			b.Fatal(st)
		}
		if _, st := fw.RunScorePlugins(ctx, state, p, feasible); !st.IsSuccess() {
			b.Fatal(st)
		}
	}
	// Untimed: the first cycles build every node's state.
	for _, p := range pods {
		cycle(p)
	}
	goruntime.GC()
	cpu0 := cpuTime()
	k := 0
	b.ReportAllocs()
	for b.Loop() {
		cycle(pods[k%len(pods)])
		k++
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(k), "cpu-ns/op")
}

// BenchmarkProfileCycle times one scheduling cycle of each whole profile
// of the scheduler_perf benchmark (k8s/test/perf/config: kube-scheduler's
// default plugins; PWR+FGD; with PowerBudget), every plugin of the profile
// included, built as kube-scheduler builds it (the configuration file
// decoded and defaulted, the in-tree registry plus wattsched's), on the
// nodes and pods of BenchmarkCycle: the work per pod that differs
// between the profiles, without the API server, etcd and the binding
// that scheduler_perf also times. Filter runs on the framework's
// parallelizer, as in kube-scheduler.
//
//	cd k8s && go test ./plugins -run '^$' -bench ProfileCycle -benchtime 100x
func BenchmarkProfileCycle(b *testing.B) {
	registry := intree.NewInTreeRegistry()
	if err := registry.Merge(Registry()); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{500, 5000} {
		nodes, bound := cycleNodes(n)
		for _, prof := range []string{"default", "pwr-fgd", "pwr-fgd-budget"} {
			b.Run(fmt.Sprintf("%s/%dNodes", prof, n), func(b *testing.B) {
				data, err := os.ReadFile(filepath.Join("..", "test", "perf", "config", prof+".yaml"))
				if err != nil {
					b.Fatal(err)
				}
				obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				cfg := obj.(*schedulerapi.KubeSchedulerConfiguration)
				snap := cache.NewSnapshot(bound, nodes)
				cs := fake.NewClientset()
				fw, err := frameworkruntime.NewFramework(context.Background(), registry, &cfg.Profiles[0],
					frameworkruntime.WithSnapshotSharedLister(snap), frameworkruntime.WithClientSet(cs),
					frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(cs, 0)),
					frameworkruntime.WithEventRecorder(events.NewFakeRecorder(100)))
				if err != nil {
					b.Fatal(err)
				}
				infos, err := snap.NodeInfos().List()
				if err != nil {
					b.Fatal(err)
				}
				timeCycles(b, fw, infos, true)
			})
		}
	}
}
