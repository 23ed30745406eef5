package shadow

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
	"github.com/wattsched/wattsched/k8s/replay"
)

// TestShadowBinary builds k8s/cmd/wattsched-shadow and runs it as a user
// would, against a real API server with no scheduler: the test binds a
// one-GPU pod itself (as a cluster's scheduler would) to the G2 node. The
// binary must count it on /metrics (the profile would have placed it on
// the T4 node), write a report naming it with both nodes and the reason,
// and write nothing to the API server (no Events without -events).
func TestShadowBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the shadow binary")
	}
	cs, rc, _ := localkube.APIServer(t)
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(dir, "wattsched-shadow")
	build := exec.Command("go", "build", "-o", bin, "./cmd/wattsched-shadow")
	build.Dir = filepath.Join(filepath.Dir(file), "..")
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
	s, _, err := replay.Load(filepath.Join("testdata", "shadow.yaml"), 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(cfg, []byte(replay.SchedulerConfig(s, false)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []cluster.NodeSpec{
		{Name: "g2-0", CPUMilli: 96000, MemMiB: 786432, GPUs: 8, GPUModel: "G2"},
		{Name: "t4-0", CPUMilli: 64000, MemMiB: 262144, GPUs: 2, GPUModel: "T4"},
	} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, localkube.NodeObject(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	port, err := localkube.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	reports := filepath.Join(dir, "reports")
	cctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(cctx, bin, "-kubeconfig", kubeconfig, "-config", cfg, "-report-dir", reports,
		"-report-period", "1s", "-metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", port))
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("shadow output:\n%s", logs.String())
		}
	}()
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	scrape := func() string {
		resp, err := http.Get(metricsURL)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// Up and watching: its first report (after its informers synced) sets
	// the ledger gauges.
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(scrape(), "wattsched_shadow_cost_usd"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no report metrics after 60 s")
		}
	}
	task := job.Task{Demand: job.Demand{CPUMilli: 2000, MemMiB: 4096, GPUCount: 1, GPUMilli: 1000}}
	p := localkube.PodObject(&task, "default", "one-gpu", v1.DefaultSchedulerName)
	if p, err = cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("default").Bind(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
		Target: v1.ObjectReference{Kind: "Node", Name: "g2-0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`wattsched_shadow_placements_total\{gpu_model="G2",outcome="(same_node|other_kind)",pod_namespace="default",profile="wattsched-replay-0"\} 1\n`)
	var placements, outcome string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		m := scrape()
		if g := want.FindStringSubmatch(m); g != nil {
			outcome = g[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s on /metrics:\n%s", want, grep(m, "wattsched_shadow"))
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		dirs, _ := filepath.Glob(filepath.Join(reports, "shadow-*", "placements.csv"))
		for _, d := range dirs {
			b, _ := os.ReadFile(d)
			if strings.Contains(string(b), "one-gpu") {
				placements = string(b)
			}
		}
		if placements != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report naming the pod in %s", reports)
		}
	}
	rows, err := csv.NewReader(strings.NewReader(placements)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The profile puts the pod on the T4 (PWR's least power increase: a
	// T4 draws far less than a G2 GPU), elsewhere than the bind: not among
	// its best nodes on the real snapshot, the "plugin" reason.
	row := rows[len(rows)-1]
	if row[0] != "default" || row[1] != "one-gpu" || row[4] != "g2-0" || outcome != "other_kind" || row[7] != "t4-0" || row[9] != replay.ReasonPlugin {
		t.Errorf("placements.csv row %q, metric outcome %s: want default/one-gpu on g2-0, the profile on t4-0 (other_kind, plugin)", row, outcome)
	}
	t.Logf("outcome %s: the profile's node %s, reason %q", outcome, row[7], row[9])
	evs, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.ReportingController == "wattsched-shadow" {
			t.Errorf("an Event without -events: %s %s", e.Reason, e.Note)
		}
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
