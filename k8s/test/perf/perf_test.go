package perf

import (
	"testing"

	perf "k8s.io/kubernetes/test/integration/scheduler_perf"

	"github.com/wattsched/wattsched/k8s/plugins"
)

func init() {
	// The harness reports scheduler_plugin_execution_duration_seconds for
	// the plugins named here (kube-scheduler's own by default).
	perf.PluginNames = append(perf.PluginNames, plugins.GPUName, plugins.BudgetName, plugins.PWRName, plugins.FGDName)
}

// BenchmarkPerfScheduling runs performance-config.yaml's workloads with
// the wattsched plugins registered out of tree. The harness runs the
// workloads labelled "performance" by default (500 and 5,000 nodes, every
// profile); -perf-scheduling-label-filter picks others, e.g. 500Nodes or
// smoke (5 nodes, seconds per profile):
//
//	cd k8s && go test ./test/perf -run '^$' -bench PerfScheduling -benchtime 1ns -timeout 2h \
//	    -args -perf-scheduling-label-filter=performance
func BenchmarkPerfScheduling(b *testing.B) {
	perf.RunBenchmarkPerfScheduling(b, "performance-config.yaml", "wattsched", plugins.Registry())
}
