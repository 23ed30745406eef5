// Command wattsched-shadow runs wattsched's scheduling profiles in shadow
// mode beside a cluster's own scheduler: it watches pods and nodes, and
// for every pod the cluster's scheduler binds it records where each
// profile of a KubeSchedulerConfiguration (the file wattsched's
// kube-scheduler would run) would have placed it, binding nothing. It
// keeps a counterfactual ledger of energy, cost and carbon (the
// simulator's replay accounting), exports it as Prometheus metrics and
// writes a report (CSV and HTML) every -report-period into -report-dir.
// It needs read access only (get, list, watch); -events adds one Event
// per pod a profile would place elsewhere.
//
//	wattsched-shadow -config scheduler-config.yaml -report-dir /var/lib/wattsched-shadow [-kubeconfig FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/wattsched/wattsched/k8s/shadow"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/scenario"
)

// version and revision are wattsched's, set at link time by the Makefile
// (-X main.version=... -X main.revision=...).
var (
	version  = "devel"
	revision = ""
)

// versionLine: "wattsched VERSION wattsched-shadow (revision R,
// k8s.io/kubernetes vX.Y.Z, goX)", as kube-scheduler's first line.
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
	line := "wattsched " + version + " wattsched-shadow"
	if len(extra) > 0 {
		line += " (" + strings.Join(extra, ", ") + ")"
	}
	return line
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

type flags struct {
	kubeconfig, config, reportDir, metricsAddr string
	period                                     time.Duration
	events, showVersion                        bool
	seed                                       uint64
	grid                                       scenario.GridSpec
	promURL, exporter                          string
	refresh                                    time.Duration
}

func parse(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("wattsched-shadow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster configuration)")
	fs.StringVar(&f.config, "config", "", "KubeSchedulerConfiguration whose profiles run in shadow mode (required)")
	fs.StringVar(&f.reportDir, "report-dir", "", "directory the periodic reports are written into, one shadow-<UTC time> directory each (required)")
	fs.DurationVar(&f.period, "report-period", time.Hour, "how often a report is written (and the ledger metrics refreshed)")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":10262", "address of the plain-HTTP /metrics and /healthz endpoint (empty: none)")
	fs.BoolVar(&f.events, "events", false, "emit an Event on each pod a profile would place elsewhere (the only API writes)")
	fs.Uint64Var(&f.seed, "seed", 42, "seed of the tie-break between equally best nodes (cluster.TieRank; a scenario's first_seed)")
	fs.StringVar(&f.grid.Region, "grid-region", "", "embedded grid region for prices and carbon (default US-NY-NYIS)")
	fs.StringVar(&f.grid.Start, "grid-start", "", `hour of the price and carbon series the shadow's start maps to, "YYYY-MM-DD hh:mm:ss" (default the series' first)`)
	fs.StringVar(&f.grid.Price, "grid-price", "", "price CSV (docs/formats.md) replacing the region's")
	fs.StringVar(&f.grid.Carbon, "grid-carbon", "", "carbon intensity CSV replacing the region's")
	fs.Float64Var(&f.grid.PUE, "pue", 0, "power usage effectiveness applied to cost and carbon (1..3; default 1)")
	fs.StringVar(&f.promURL, "prometheus-url", "", "Prometheus server with DCGM or Kepler power series: measured energy of what really ran (empty: none)")
	fs.StringVar(&f.exporter, "exporter", "dcgm", "measured power's exporter: dcgm or kepler")
	fs.DurationVar(&f.refresh, "measured-refresh", 15*time.Second, "how often measured power is read")
	fs.BoolVar(&f.showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.showVersion {
		return f, nil
	}
	switch {
	case fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	case f.config == "":
		return nil, errors.New("-config is required")
	case f.reportDir == "":
		return nil, errors.New("-report-dir is required")
	case f.period < time.Second:
		return nil, fmt.Errorf("-report-period %v: want at least 1s", f.period)
	case f.promURL != "" && f.refresh < time.Second:
		return nil, fmt.Errorf("-measured-refresh %v: want at least 1s", f.refresh)
	}
	return f, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parse(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "wattsched-shadow:", err)
		}
		return 2
	}
	if f.showVersion {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "wattsched-shadow:", err)
		return 1
	}
	logf := func(format string, a ...any) { klog.Infof(format, a...) }
	// Refused before anything starts: the configuration, the grid, the meter.
	cfg, err := scheduleroptions.LoadConfigFromFile(klog.Background(), f.config)
	if err != nil {
		return fail(fmt.Errorf("scheduler configuration %s: %w", f.config, err))
	}
	grid := &f.grid
	if _, err := (&scenario.Scenario{Grid: grid}).Account(); err != nil {
		return fail(fmt.Errorf("grid: %w", err))
	}
	var meter *prom.Meter
	if f.promURL != "" {
		pc := prom.Config{URL: f.promURL, Exporter: prom.Exporter(f.exporter)}.Defaults()
		if err := pc.Validate(); err != nil {
			return fail(fmt.Errorf("measured power: %w", err))
		}
		if meter, err = prom.NewMeter(pc); err != nil {
			return fail(fmt.Errorf("measured power: %w", err))
		}
	}
	var rc *rest.Config
	if f.kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	} else {
		rc, err = rest.InClusterConfig()
	}
	if err != nil {
		return fail(fmt.Errorf("kubeconfig: %w", err))
	}
	rc.UserAgent = "wattsched-shadow/" + version
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fail(err)
	}
	sh, err := shadow.New(ctx, cs, cfg, shadow.Options{Seed: f.seed, Events: f.events, Log: logf})
	if err != nil {
		return fail(err)
	}
	if f.metricsAddr != "" {
		l, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			return fail(fmt.Errorf("metrics: %w", err))
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", legacyregistry.Handler())
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(l) }()
		defer srv.Close()
	}
	if err := sh.Start(ctx); err != nil {
		return fail(err)
	}
	if meter != nil {
		sh.WithMeter(ctx, meter, f.refresh)
	}
	logf("wattsched-shadow %s: profiles %v, reports every %v into %s", version, sh.Profiles(), f.period, f.reportDir)
	sh.Run(ctx, f.reportDir, f.period, grid)
	return 0
}
