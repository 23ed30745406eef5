// Package perf runs kube-scheduler's own benchmark harness, scheduler_perf
// (k8s.io/kubernetes/test/integration/scheduler_perf), with the wattsched
// plugins registered out of tree and a workload of GPU-share pods on
// openb-shaped GPU nodes (performance-config.yaml), for kube-scheduler's
// default profile and the wattsched profiles. See docs/performance.md.
package perf

import (
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/etcdmain"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

// TestMain prepares what scheduler_perf expects of its machine, then runs
// the benchmarks:
//
//   - an etcd binary on PATH: the harness starts a fresh etcd per workload
//     (framework.StartEtcd) on a unix socket, which the Debian package's
//     etcd 3.4 rejects. This test binary is that etcd: invoked under the
//     name "etcd" (a link in a temporary directory put first on PATH), it
//     runs etcd 3.6's own main (go.etcd.io/etcd/server/v3/etcdmain), the
//     version the k8s module already embeds in its integration tests;
//   - the workload files, copied into a temporary working directory (the
//     harness resolves their paths against it and writes its result files
//     there unless -data-items-dir says otherwise), with the measured
//     profile's PROMETHEUS_URL replaced by the address of promStandIn.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "etcd" {
		etcdmain.Main(os.Args)
		return
	}
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scheduler_perf setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	work, err := os.MkdirTemp("", "wattsched-perf-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	bin := filepath.Join(work, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return 0, err
	}
	if err := os.Symlink(self, filepath.Join(bin, "etcd")); err != nil {
		return 0, err
	}
	os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: promStandIn(maxNodes), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	url := "http://" + l.Addr().String()

	dir := filepath.Join(work, "workload")
	if err := copyWorkload(".", dir, url); err != nil {
		return 0, err
	}
	if err := os.Chdir(dir); err != nil {
		return 0, err
	}
	if err := perf.InitTests(); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// copyWorkload copies the YAML files under src to dst, replacing
// PROMETHEUS_URL with url.
func copyWorkload(src, dst, url string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, p)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(strings.ReplaceAll(string(b), "PROMETHEUS_URL", url)), 0o644)
	})
}

// maxNodes is the largest workload's node count: the stand-in serves a
// reading for gpu-node-0 .. gpu-node-(maxNodes-1).
const maxNodes = 5000

// promStandIn answers the two instant queries the measured profile's meter
// sends to Prometheus (prom.Meter with the DCGM exporter's defaults): one
// DCGM_FI_DEV_POWER_USAGE series per GPU of every node of
// templates/node-gpu.yaml, and their sample times (the query's time, so
// that no reading is stale). It answers from memory, without the cost of a
// Prometheus server scraping 40,000 series on the machine being measured.
// Connections are not kept alive: an idle client connection left after a
// workload would fail the harness's goroutine leak check.
func promStandIn(nodes int) http.Handler {
	type series struct {
		node string
		gpu  int
		w    float64
	}
	var all []series
	for i := range nodes {
		gpus, w := 8, 160.0 // G2 and V100M32 nodes: 8 GPUs
		if k := i % 10; k >= 5 && k < 9 {
			gpus, w = 2, 45.0 // T4 nodes
		}
		for g := range gpus {
			all = append(all, series{node: fmt.Sprintf("gpu-node-%d", i), gpu: g, w: w + float64((i+g)%7)})
		}
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Connection", "close")
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(rw, r)
			return
		}
		q := r.URL.Query()
		at := q.Get("time")
		if _, err := strconv.ParseFloat(at, 64); err != nil {
			http.Error(rw, `{"status":"error","errorType":"bad_data","error":"time"}`, http.StatusBadRequest)
			return
		}
		stamps := strings.HasPrefix(q.Get("query"), "timestamp(")
		var sb strings.Builder
		sb.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
		for k, s := range all {
			if k > 0 {
				sb.WriteByte(',')
			}
			v := strconv.FormatFloat(s.w, 'f', -1, 64)
			if stamps {
				v = at
			}
			fmt.Fprintf(&sb, `{"metric":{"Hostname":%q,"gpu":"%d"},"value":[%s,"%s"]}`, s.node, s.gpu, at, v)
		}
		sb.WriteString(`]}}`)
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(sb.String()))
	})
}
