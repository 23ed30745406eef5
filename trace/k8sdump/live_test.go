package k8sdump

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	head := "clusters:\n- name: c\n  cluster: {server: 'https://10.0.0.1:6443', insecure-skip-tls-verify: true}\n" +
		"contexts:\n- name: x\n  context: {cluster: c, user: u}\n- name: y\n  context: {cluster: c, user: v}\n"
	for _, tc := range []struct {
		name, yaml, context, wantErr string
		check                        func(*Kubeconfig) bool
	}{
		{name: "token file, relative", yaml: head + "current-context: x\nusers:\n- name: u\n  user: {tokenFile: token}\n",
			check: func(k *Kubeconfig) bool { return k.Token == "abc" && k.Server == "https://10.0.0.1:6443" && k.Insecure }},
		{name: "named context", yaml: head + "users:\n- name: v\n  user: {username: a, password: b}\n", context: "y",
			check: func(k *Kubeconfig) bool { return k.Username == "a" && k.Password == "b" }},
		{name: "no current context", yaml: head + "users: []\n", wantErr: "no current-context"},
		{name: "unknown context", yaml: head + "users: []\n", context: "z", wantErr: `no context "z" (contexts: x, y)`},
		{name: "exec plugin", yaml: head + "current-context: x\nusers:\n- name: u\n  user:\n    exec: {command: aws}\n", wantErr: "users[0].user uses a credential plugin"},
		{name: "bad base64", yaml: head + "current-context: x\nusers:\n- name: u\n  user: {client-certificate-data: '%%%', client-key-data: 'AA=='}\n", wantErr: "users[0].user.client-certificate-data: not base64"},
		{name: "cert without key", yaml: head + "current-context: x\nusers:\n- name: u\n  user: {client-certificate-data: 'AA=='}\n", wantErr: "needs its key"},
		{name: "missing file", yaml: head + "current-context: x\nusers:\n- name: u\n  user: {client-certificate: nope.crt, client-key: nope.key}\n", wantErr: "users[0].user.client-certificate"},
		{name: "server not a URL", yaml: strings.Replace(head, "https://10.0.0.1:6443", "10.0.0.1", 1) + "current-context: x\nusers: []\n", wantErr: "clusters[0].cluster.server"},
		{name: "unknown user", yaml: head + "current-context: x\nusers: []\n", wantErr: `names user "u"`},
		{name: "not yaml", yaml: "clusters: [", wantErr: "kubeconfig"},
		{name: "token file wins", yaml: head + "current-context: x\nusers:\n- name: u\n  user: {token: old, tokenFile: token}\n",
			check: func(k *Kubeconfig) bool { return k.Token == "abc" }},
		{name: "exec null", yaml: head + "current-context: x\nusers:\n- name: u\n  user: {token: t, exec: null}\n",
			check: func(k *Kubeconfig) bool { return k.Token == "t" }},
		{name: "two auth methods", yaml: head + "current-context: x\nusers:\n- name: u\n  user: {token: t, username: a, password: b}\n", wantErr: "one authentication method"},
		{name: "ca and insecure", yaml: strings.Replace(head, "insecure-skip-tls-verify: true", "insecure-skip-tls-verify: true, certificate-authority-data: 'AA=='", 1) + "current-context: x\nusers: []\n", wantErr: "insecure-skip-tls-verify together"},
		{name: "server name and proxy", yaml: strings.Replace(head, "insecure-skip-tls-verify: true", "tls-server-name: api.internal, proxy-url: 'http://proxy:3128'", 1) + "current-context: x\nusers:\n- name: u\n  user: {token: t}\n",
			check: func(k *Kubeconfig) bool {
				return k.ServerName == "api.internal" && k.Proxy != nil && k.Proxy.Host == "proxy:3128"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "kubeconfig")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			k, err := ReadKubeconfig(p, tc.context)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(k) {
				t.Errorf("got %+v", k)
			}
		})
	}
}
