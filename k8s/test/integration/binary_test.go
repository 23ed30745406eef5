package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// TestSchedulerBinary builds k8s/cmd/kube-scheduler and runs it, as a
// user would, with k8s/deploy/scheduler-config.yaml against the test API
// server: a shared-GPU pod for each profile is bound with its GPU recorded.
func TestSchedulerBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the scheduler binary")
	}
	cs, rc := apiServer(t)
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	module := filepath.Join(filepath.Dir(file), "..", "..")
	bin := filepath.Join(dir, "kube-scheduler")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kube-scheduler")
	build.Dir = module
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
		"kind: KubeSchedulerConfiguration\nclientConnection:\n  kubeconfig: "+kubeconfig+"\n", 1)
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(),
		nodeObject(cluster.NodeSpec{Name: "a10", CPUMilli: 32000, MemMiB: 65536, GPUs: 2, GPUModel: "NVIDIA-A10"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--config", cfg, "--secure-port", "0", "-v", "0")
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
	task := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 400}}
	for i, profile := range []string{"wattsched-pwr", "wattsched-fgd", "wattsched-pwr-fgd"} {
		name := "shared-" + profile
		if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), podObject(&task, name, profile), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		out, err := waitScheduled(cs, name, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// 400 + 400 fit one GPU; the third goes to the other (best fit,
		// PWR and FGD all keep filling the used GPU first).
		want := map[int]string{0: "0", 1: "0", 2: "1"}[i]
		if out.Node != "a10" || out.GPUs != want {
			t.Fatalf("%s: node %q GPUs %q (%s), want a10 GPU %s", profile, out.Node, out.GPUs, out.Message, want)
		}
	}
}
