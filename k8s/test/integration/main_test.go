// Package integration runs wattsched's scheduler plugins inside a real
// kube-scheduler against a real kube-apiserver (in-process, from
// k8s.io/kubernetes/test/integration/framework) backed by an embedded etcd
// on loopback, and checks them against the core simulator.
package integration

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/klog/v2"
)

// TestMain starts one embedded etcd for every test; each test starts its
// own API server on a fresh key prefix.
func TestMain(m *testing.M) {
	// The API server and scheduler log at length; test failures say what
	// went wrong. WATTSCHED_K8S_LOGS=1 keeps the logs.
	if os.Getenv("WATTSCHED_K8S_LOGS") == "" {
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}
	stop, err := startEtcd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded etcd:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd() (func(), error) {
	dir, err := os.MkdirTemp("", "wattsched-etcd-")
	if err != nil {
		return nil, err
	}
	cp, err := freePort()
	if err != nil {
		return nil, err
	}
	pp, err := freePort()
	if err != nil {
		return nil, err
	}
	client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", cp))
	peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pp))
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()
	cfg.LogLevel = "fatal"
	if os.Getenv("WATTSCHED_K8S_LOGS") != "" {
		cfg.LogLevel = "warn"
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("not ready after 60 s")
	}
	// TestMain has no *testing.T: the whole test process uses this etcd
	// (test/integration/framework reads the variable).
	os.Setenv("KUBE_INTEGRATION_ETCD_URL", client.String())
	return func() {
		e.Close()
		os.RemoveAll(dir)
	}, nil
}
