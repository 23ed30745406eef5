package plugins

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
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
				factory = func(ctx context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
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
