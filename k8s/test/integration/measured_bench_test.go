package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/power/prom/promtest"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// measuredProfile is the deployed 0.2*PWR+0.8*FGD profile with
// PowerBudget (a budget no pod reaches, so that the figure is the cost of
// the check, not of waiting): name it, and give the measured arguments or
// none.
const measuredProfile = `  - schedulerName: wattsched-pwr-fgd-%s
    plugins:
      multiPoint:
        enabled:
          - name: WattschedGPU
          - name: PowerBudget
      bind:
        disabled:
          - name: "*"
        enabled:
          - name: WattschedGPU
      preScore:
        disabled:
          - name: "*"
        enabled:
          - name: PWR
          - name: FGD
      score:
        disabled:
          - name: "*"
        enabled:
          - name: PWR
            weight: 200
          - name: FGD
            weight: 800
    pluginConfig:
      - name: WattschedGPU
        args:
          gpuSelector: fgd
          fgd:
            workload: default
      - name: FGD
        args:
          workload: default
      - name: PowerBudget
        args:
          budgetWatts: 1.0e9
%s`

// BenchmarkThroughputMeasured is BenchmarkThroughput for the measured
// mode: kube-scheduler's default profile against the 0.2*PWR+0.8*FGD
// profile with PowerBudget reading measured power from a real Prometheus
// that scrapes DCGM series (a generated trace) for the 500 nodes every
// second, during every profile's rounds; the same profile alone and with
// an estimated budget separate the costs. The budget: a ratio of
// at least 0.8. Use an even number of rounds (the order alternates):
//
//	cd k8s && go test -run '^$' -bench ThroughputMeasured -benchtime 2x ./test/integration/
func BenchmarkThroughputMeasured(b *testing.B) {
	all, err := alibaba2023.GPUNodes()
	if err != nil {
		b.Fatal(err)
	}
	trace := make([]promtest.Node, benchNodes)
	for i := range trace {
		n := nodeObject(all[2*i])
		trace[i] = promtest.Node{Name: n.Name, Model: all[2*i].GPUModel, GPUs: all[2*i].GPUs, IdleW: 30, FullW: 250, OtherW: 150}
	}
	exp := promtest.NewExporter(b, 1, trace...)
	srv := promtest.Start(b, exp.Target)
	m, err := prom.NewMeter(prom.Config{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	last := trace[len(trace)-1].Name
	promtest.WaitReading(b, m, last)
	deploy, err := os.ReadFile(deployConfig())
	if err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(b.TempDir(), "config.yaml")
	text := string(deploy) + "  - schedulerName: default-scheduler\n" + fmt.Sprintf(measuredProfile, "budget", "") +
		fmt.Sprintf(measuredProfile, "measured", fmt.Sprintf("          measured:\n            url: %s\n            refreshSeconds: 5\n", srv.URL))
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	// Rounds run the four profiles in turn: the default one, 0.2*PWR+
	// 0.8*FGD alone, with the estimated budget, with the measured budget;
	// even rounds in the reverse order, so that a drift over the run
	// (the embedded etcd keeps every round's objects) weighs on each
	// profile alike.
	profiles := []string{"default-scheduler", "wattsched-pwr-fgd", "wattsched-pwr-fgd-budget", "wattsched-pwr-fgd-measured"}
	sec := make([]float64, len(profiles))
	cpu := make([]time.Duration, len(profiles))
	rounds := 0
	for b.Loop() {
		for k := range profiles {
			i := k
			if rounds%2 == 1 {
				i = len(profiles) - 1 - k
			}
			c0 := cpuTime()
			sec[i] += benchPods / throughput(b, cfg, profiles[i])
			cpu[i] += cpuTime() - c0
		}
		rounds++
	}
	// The process's CPU time per round (API server, etcd, scheduler and
	// the test's exporter; not Prometheus, a separate process): on a
	// loaded machine a steadier comparison than wall time.
	for i, p := range profiles {
		b.Logf("%s: %.1f s CPU per round", p, (cpu[i] / time.Duration(rounds)).Seconds())
	}
	rate := func(i int) float64 { return float64(rounds*benchPods) / sec[i] }
	b.ReportMetric(rate(0), "default-pods/s")
	b.ReportMetric(rate(3), "measured-pods/s")
	b.ReportMetric(rate(3)/rate(0), "ratio")
	b.ReportMetric(rate(1)/rate(0), "pwrfgd-ratio")
	b.ReportMetric(rate(2)/rate(0), "budget-ratio")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
