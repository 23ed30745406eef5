// Command kube-scheduler is kube-scheduler 1.34 with wattsched's plugins
// registered (WattschedGPU, PowerBudget, PWR, FGD, BestFit, DotProd,
// GpuPacking, GpuClustering). Enable them in a KubeSchedulerConfiguration
// profile; k8s/deploy has an example.
package main

import (
	"os"
	"sort"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/wattsched/wattsched/k8s/plugins"
)

func main() {
	reg := plugins.Registry()
	names := make([]string, 0, len(reg))
	for n := range reg {
		names = append(names, n)
	}
	sort.Strings(names)
	var opts []app.Option
	for _, n := range names {
		opts = append(opts, app.WithPlugin(n, reg[n]))
	}
	os.Exit(cli.Run(app.NewSchedulerCommand(opts...)))
}
