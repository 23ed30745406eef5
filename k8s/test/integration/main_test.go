// Package integration runs wattsched's scheduler plugins inside a real
// kube-scheduler against a real kube-apiserver (in-process, from
// k8s.io/kubernetes/test/integration/framework) backed by an embedded etcd
// on loopback, and checks them against the core simulator.
package integration

import (
	"testing"

	"github.com/wattsched/wattsched/k8s/internal/localkube"
)

// TestMain starts one embedded etcd for every test; each test starts its
// own API server on a fresh key prefix. WATTSCHED_K8S_LOGS=1 keeps the
// API server's and scheduler's logs.
func TestMain(m *testing.M) { localkube.MainWithEtcd(m, false) }
