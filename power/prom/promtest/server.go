// Package promtest runs a real Prometheus server for tests, and an HTTP
// endpoint that serves the NVIDIA DCGM exporter's and Kepler's exposition
// format replayed from a generated power trace (the exporters themselves
// need GPUs and RAPL; serving their exact format stands in for them).
package promtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wattsched/wattsched/power/prom"
)

// InstallHint is how to get the Prometheus server on the test machine.
const InstallHint = "install the Prometheus server: `make prometheus` (runs `apt-get install -y prometheus`, Debian's 2.42 package)"

// Server is a running Prometheus server.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:PORT).
	URL string

	stop func()
}

// Stop stops the server now (it is stopped at the end of the test anyway).
func (s *Server) Stop() { s.stop() }

// Start runs prometheus on a free loopback port with a temporary storage
// directory, scraping targets (host:port) every second, and stops it when
// the test ends. The job keeps the scraped labels (honor_labels: true), as
// Kepler's scrape jobs must for its instance label to name the node. A machine without the server fails the test with the
// install command: it never skips.
func Start(t testing.TB, targets ...string) *Server {
	t.Helper()
	return StartWithRules(t, nil, targets...)
}

// StartWithRules is Start with rule files (alerting and recording rules)
// loaded and evaluated every second.
func StartWithRules(t testing.TB, ruleFiles []string, targets ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("prometheus server not found on PATH: %s", InstallHint)
	}
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: exporter\n    honor_labels: true\n    static_configs:\n      - targets: [")
	for i, tg := range targets {
		if i > 0 {
			cfg.WriteString(", ")
		}
		fmt.Fprintf(&cfg, "%q", tg)
	}
	cfg.WriteString("]\n")
	if len(ruleFiles) > 0 {
		cfg.WriteString("rule_files:\n")
		for _, f := range ruleFiles {
			fmt.Fprintf(&cfg, "  - %q\n", f)
		}
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	var log bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", log.String())
		}
	})
	s := &Server{URL: "http://" + addr, stop: stop}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-done:
			done <- err
			once.Do(func() {})
			t.Fatalf("prometheus exited before ready: %v\n%s", err, log.String())
		default:
		}
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30 s: %v\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
	return addr
}

// WaitReading refreshes m until node has a usable reading (Prometheus has
// scraped its series), and fails the test after a minute.
func WaitReading(t testing.TB, m *prom.Meter, node string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := m.Refresh(context.Background()); err == nil && m.Status(node).OK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no measured power for %s after 60 s: %+v", node, m.Status(node))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
