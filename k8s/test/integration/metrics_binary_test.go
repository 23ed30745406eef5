package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
	"github.com/wattsched/wattsched/power/prom"
	"github.com/wattsched/wattsched/power/prom/promtest"
)

// TestSchedulerBinaryMetrics runs the kube-scheduler binary with a
// profile whose PowerBudget reads measured power from a real Prometheus
// (scraping DCGM series replayed for node a10: two GPUs at 200 W each),
// binds a pod with it, and reads the scheduler's own /metrics endpoint
// (its secure port, self-signed certificate, /metrics allowed without
// authorization): the wattsched_ series are there with the measured
// figures.
func TestSchedulerBinaryMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the scheduler binary")
	}
	exp := promtest.NewExporter(t, 1, promtest.Node{Name: "a10", Model: "NVIDIA A10", GPUs: 2, IdleW: 200, FullW: 200, OtherW: 100})
	srv := promtest.Start(t, exp.Target)
	m, err := prom.NewMeter(prom.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if _, err := m.Refresh(context.Background()); err == nil && m.Status("a10").OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no measured power for a10 in Prometheus: %+v", m.Status("a10"))
		}
	}

	cs, rc := apiServer(t)
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(dir, "kube-scheduler")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kube-scheduler")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile, CertificateAuthorityData: rc.CAData, InsecureSkipTLSVerify: rc.Insecure}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken, TokenFile: rc.BearerTokenFile,
		ClientCertificate: rc.CertFile, ClientCertificateData: rc.CertData, ClientKey: rc.KeyFile, ClientKeyData: rc.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	deploy, err := os.ReadFile(deployConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	text := strings.Replace(string(deploy), "kind: KubeSchedulerConfiguration\n",
		"kind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: "+kubeconfig+"\n", 1) +
		fmt.Sprintf(measuredProfile, "measured", fmt.Sprintf("          measured:\n            url: %s\n            refreshSeconds: 1\n", srv.URL))
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(),
		nodeObject(cluster.NodeSpec{Name: "a10", CPUMilli: 32000, MemMiB: 65536, GPUs: 2, GPUModel: "NVIDIA-A10"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := localkube.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", cfg, "-v", "2", "--bind-address", "127.0.0.1", "--secure-port", port,
		"--cert-dir", filepath.Join(dir, "certs"), "--authorization-always-allow-paths", "/metrics,/healthz", "--authentication-skip-lookup")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("scheduler output:\n%s", logs.String())
		}
	}()
	// Let the plugin's first refresh land before the pod arrives.
	time.Sleep(3 * time.Second)
	task := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 400}}
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), podObject(&task, "measured", "wattsched-pwr-fgd-measured"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := waitScheduled(cs, "measured", 60*time.Second); err != nil || out.Node != "a10" {
		t.Fatalf("pod: %+v, %v", out, err)
	}
	got := scrape(t, "https://127.0.0.1:"+port+"/metrics")
	for series, want := range map[string]func(float64) bool{
		`wattsched_measured_node_power_watts{node="a10"}`:                       func(v float64) bool { return v == 400 },
		`wattsched_power_budget_watts`:                                          func(v float64) bool { return v == 1e9 },
		`wattsched_power_budget_decisions_total{decision="admitted",reason=""}`: func(v float64) bool { return v >= 1 },
		`wattsched_gate_cluster_power_watts`:                                    func(v float64) bool { return v > 400 },
		`wattsched_measured_power_fallback{node="a10"}`:                         nil, // never fell back after the first refresh: may be absent
	} {
		v, ok := got[series]
		switch {
		case want == nil:
			if ok && v != 0 {
				t.Errorf("%s = %v, want 0 or absent", series, v)
			}
		case !ok:
			t.Errorf("%s missing from the scheduler's /metrics", series)
		case !want(v):
			t.Errorf("%s = %v", series, v)
		default:
			t.Logf("scheduler /metrics: %s %v", series, v)
		}
	}
}

// scrape reads a Prometheus text endpoint into series -> value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		resp, err = c.Get(url)
		if err == nil && resp.StatusCode == http.StatusOK {
			break
		}
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("%s", resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "wattsched_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}
