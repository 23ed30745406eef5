package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/trace/k8sdump"
)

// TestImportFromLiveCluster reads nodes and pods straight from a real API
// server through a kubeconfig file written from the test server's own
// client configuration, two objects per page so that continue tokens are
// followed.
func TestImportFromLiveCluster(t *testing.T) {
	cs, rc := apiServer(t)
	ctx := context.Background()
	specs := []cluster.NodeSpec{
		{Name: "live-a", CPUMilli: 32000, MemMiB: 65536, GPUs: 4, GPUModel: "T4"},
		{Name: "live-b", CPUMilli: 16000, MemMiB: 32768},
		{Name: "live-c", CPUMilli: 8000, MemMiB: 16384, GPUs: 1, GPUModel: "T4"},
	}
	createNodes(t, cs, specs)
	kc := liveKubeconfig(t, rc)
	kc.PageSize = 2
	b, err := k8sdump.Fetch(ctx, kc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := k8sdump.Read(bytes.NewReader(b), "live")
	if err != nil {
		t.Fatal(err)
	}
	checkImportedNodes(t, d, specs)
	// A wrong token is refused by the server, and the error says so.
	kc.Token, kc.CertPEM, kc.KeyPEM = "not-a-token", nil, nil
	if _, err := k8sdump.Fetch(ctx, kc); err == nil {
		t.Error("a wrong token was not refused")
	} else {
		t.Logf("wrong token: %v", err)
	}
}

// liveKubeconfig writes a kubeconfig file from the test server's own
// client configuration and reads it back.
func liveKubeconfig(t *testing.T, rc *rest.Config) *k8sdump.Kubeconfig {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return name // relative: resolved from the kubeconfig's directory
	}
	clusterYAML := fmt.Sprintf("    server: %s\n", rc.Host)
	switch {
	case len(rc.TLSClientConfig.CAData) > 0:
		clusterYAML += "    certificate-authority-data: " + base64.StdEncoding.EncodeToString(rc.TLSClientConfig.CAData) + "\n"
	case rc.TLSClientConfig.CAFile != "":
		clusterYAML += "    certificate-authority: " + rc.TLSClientConfig.CAFile + "\n"
	case rc.TLSClientConfig.Insecure:
		clusterYAML += "    insecure-skip-tls-verify: true\n"
	}
	user := ""
	if rc.BearerToken != "" {
		user += "    token: " + rc.BearerToken + "\n"
	}
	switch {
	case len(rc.TLSClientConfig.CertData) > 0:
		user += "    client-certificate: " + write("client.crt", rc.TLSClientConfig.CertData) + "\n"
		user += "    client-key: " + write("client.key", rc.TLSClientConfig.KeyData) + "\n"
	case rc.TLSClientConfig.CertFile != "":
		user += "    client-certificate: " + rc.TLSClientConfig.CertFile + "\n    client-key: " + rc.TLSClientConfig.KeyFile + "\n"
	}
	if user == "" {
		t.Fatalf("the test server's client config has no credentials a kubeconfig can carry: %+v", rc)
	}
	kcYAML := "apiVersion: v1\nkind: Config\ncurrent-context: test\nclusters:\n- name: c\n  cluster:\n" + clusterYAML +
		"users:\n- name: u\n  user:\n" + user + "contexts:\n- name: test\n  context: {cluster: c, user: u}\n"
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, []byte(kcYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	kc, err := k8sdump.ReadKubeconfig(kcPath, "")
	if err != nil {
		t.Fatal(err)
	}
	return kc
}
