// Command wattsched-nvml-agent serves a node's GPU power, energy,
// utilisation and SM clock, read through NVML, in the DCGM exporter's
// names on /metrics (port 9400, the DCGM exporter's), for Prometheus to
// scrape and wattsched's measured-power mode and calibration to read. It
// needs the NVIDIA driver (libnvidia-ml.so.1) on the node.
//
//	wattsched-nvml-agent [--listen :9400] [--hostname NAME] [--nvml-library PATH]
//	wattsched-nvml-agent --version
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wattsched/wattsched/nvmlagent"
)

// version and revision are wattsched's, set at link time by the Makefile
// (-X main.version=... -X main.revision=...).
var (
	version  = "devel"
	revision = ""
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr, nvml.New); err != nil {
		fmt.Fprintln(os.Stderr, "wattsched-nvml-agent:", err)
		os.Exit(1)
	}
}

// openNVML makes the NVML library the agent reads: nvml.New, which loads
// the driver's libnvidia-ml.so.1; tests give a fake at this boundary.
type openNVML func(opts ...nvml.LibraryOption) nvml.Interface

func run(args []string, stdout, stderr io.Writer, open openNVML) error {
	fs := flag.NewFlagSet("wattsched-nvml-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", ":9400", "address to serve /metrics on")
	hostname := fs.String("hostname", "", "value of the Hostname label: the Kubernetes node name (default $NODE_NAME, else the host's name)")
	library := fs.String("nvml-library", "", "path of libnvidia-ml.so.1 (default: the dynamic loader's search)")
	showVersion := fs.Bool("version", false, "print wattsched's version, the revision and go-nvml's version, and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *showVersion {
		_, err := fmt.Fprintln(stdout, versionLine())
		return err
	}
	host := *hostname
	if host == "" {
		host = os.Getenv("NODE_NAME")
	}
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("hostname: %w (give --hostname)", err)
		}
		host = h
	}
	var opts []nvml.LibraryOption
	if *library != "" {
		opts = append(opts, nvml.WithLibraryPath(*library))
	}
	lib := open(opts...)
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML init: %s (is the NVIDIA driver installed, and libnvidia-ml.so.1 visible to the container?)", lib.ErrorString(ret))
	}
	defer lib.Shutdown()
	c, err := nvmlagent.New(lib, host)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	fmt.Fprintf(stderr, "wattsched-nvml-agent: %d GPUs of %s on %s/metrics\n", c.GPUs(), host, *listen)
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

// versionLine: "wattsched VERSION wattsched-nvml-agent (revision R,
// github.com/NVIDIA/go-nvml vX, goX)", without NVML (--version works on a
// machine with no driver).
func versionLine() string {
	var extra []string
	if revision != "" {
		extra = append(extra, "revision "+revision)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/NVIDIA/go-nvml" {
				extra = append(extra, d.Path+" "+d.Version)
			}
		}
		extra = append(extra, bi.GoVersion)
	}
	line := "wattsched " + version + " wattsched-nvml-agent"
	if len(extra) > 0 {
		line += " (" + strings.Join(extra, ", ") + ")"
	}
	return line
}
