// Command kube-scheduler is kube-scheduler 1.34 with wattsched's plugins
// registered (WattschedGPU, PowerBudget, PWR, FGD, BestFit, DotProd,
// GpuPacking, GpuClustering). Enable them in a KubeSchedulerConfiguration
// profile; k8s/deploy has an example.
//
// `kube-scheduler --version` prints two lines: wattsched's version (set by
// `make kube-scheduler` with -ldflags -X main.version=...), its revision and
// the k8s.io/kubernetes module it was built from; then kube-scheduler's own
// "Kubernetes vX.Y.Z", whose variables in k8s.io/component-base/version the
// Makefile sets from k8s/go.mod (a plain go build leaves them at
// v0.0.0-master).
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/wattsched/wattsched/k8s/plugins"
)

// version and revision are wattsched's, set at link time by the Makefile
// (-X main.version=... -X main.revision=...).
var (
	version  = "devel"
	revision = ""
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
	cmd := app.NewSchedulerCommand(opts...)
	// --version (and --version=raw): wattsched's line first, then
	// kube-scheduler prints its own and exits.
	cmd.RunE = before(cmd.RunE, func() {
		if f := cmd.Flags().Lookup("version"); f != nil && (f.Value.String() == "true" || f.Value.String() == "raw") {
			fmt.Fprintln(os.Stdout, versionLine())
		}
	})
	os.Exit(cli.Run(cmd))
}

// before runs f, then run. (Generic over the command type so that this
// module need not require cobra directly.)
func before[C any](run func(C, []string) error, f func()) func(C, []string) error {
	return func(c C, args []string) error {
		f()
		return run(c, args)
	}
}

// versionLine: "wattsched VERSION kube-scheduler (revision R, k8s.io/kubernetes
// vX.Y.Z, goX)"; the module version comes from the binary's build
// information.
func versionLine() string {
	extra := []string{}
	if revision != "" {
		extra = append(extra, "revision "+revision)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				extra = append(extra, d.Path+" "+d.Version)
			}
		}
		extra = append(extra, bi.GoVersion)
	}
	line := "wattsched " + version + " kube-scheduler"
	if len(extra) > 0 {
		line += " (" + strings.Join(extra, ", ") + ")"
	}
	return line
}
