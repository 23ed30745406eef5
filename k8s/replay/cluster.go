package replay

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/kwok/pkg/kwok/controllers"
	kwoklog "sigs.k8s.io/kwok/pkg/log"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
	"github.com/wattsched/wattsched/k8s/plugins"
)

// Namespace holds the replay's pods.
const Namespace = "default"

// StartEtcd starts an embedded etcd on loopback for the API servers of
// this process (localkube.StartEtcd) and returns its stop.
func StartEtcd() (func(), error) { return localkube.StartEtcd() }

// apiServer starts a kube-apiserver as k8s/test/integration does
// (localkube.APIServer, on the etcd of StartEtcd); it stops with tb's
// cleanups.
func apiServer(tb testing.TB) (clientset.Interface, *rest.Config) {
	cs, cfg, _ := localkube.APIServer(tb)
	return cs, cfg
}

// startKwok runs kwok's controllers (sigs.k8s.io/kwok/pkg/kwok/controllers)
// on every node with the replay's stages until ctx ends.
func startKwok(ctx context.Context, cs clientset.Interface) error {
	st, err := stages()
	if err != nil {
		return err
	}
	if os.Getenv("WATTSCHED_K8S_LOGS") == "" {
		ctx = kwoklog.NewContext(ctx, kwoklog.NewLogger(nil, kwoklog.LevelInfo))
	}
	ctr, err := controllers.NewController(controllers.Config{
		Clock:                    clock.RealClock{},
		TypedClient:              cs,
		RESTClient:               cs.CoreV1().RESTClient(),
		ManageAllNodes:           true,
		LocalStages:              st,
		PodPlayStageParallelism:  4,
		NodePlayStageParallelism: 2,
		CIDR:                     "10.0.0.1/16",
		NodeIP:                   "10.0.0.1",
		ID:                       "wattsched-replay",
	})
	if err != nil {
		return fmt.Errorf("kwok: %w", err)
	}
	if err := ctr.Start(ctx); err != nil {
		return fmt.Errorf("kwok: %w", err)
	}
	return nil
}

// startScheduler runs kube-scheduler 1.34 with wattsched's plugins and the
// configuration file in this process until the returned stop is called.
func startScheduler(cs clientset.Interface, rc *rest.Config, configFile string) (func(), error) {
	return localkube.StartScheduler(cs, rc, configFile)
}

// nodeObject is a fake GPU node with s's capacity (localkube.NodeObject),
// managed by kwok.
func nodeObject(s cluster.NodeSpec) *v1.Node {
	n := localkube.NodeObject(s)
	n.Labels["type"] = "kwok"
	n.Annotations = map[string]string{"kwok.x-k8s.io/node": "fake"}
	return n
}

// podObject is task t as a pod for schedulerName (localkube.PodObject)
// that runs for runFor and is not restarted.
func podObject(t *job.Task, name, schedulerName string, runFor time.Duration) *v1.Pod {
	p := localkube.PodObject(t, Namespace, name, schedulerName)
	p.Annotations[AnnRunFor] = runFor.String()
	p.Annotations["replay.wattsched.io/task"] = strconv.Itoa(int(t.ID))
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	if t.Gang != "" {
		p.Labels = map[string]string{plugins.LabelPodGroup: gangLabel(t.Gang)}
	}
	return p
}

// gangLabel is gang name g as a label value: characters other than
// letters, digits, '-', '_' and '.' become '-', and a name that is then
// longer than 63 characters, empty or not starting and ending with a
// letter or digit is shortened to a prefix and its FNV-1a hash, so that
// two gangs never share a label.
func gangLabel(g string) string {
	b := []byte(g)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	s := string(b)
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if s == g && len(s) <= 63 && alnum(s[0]) && alnum(s[len(s)-1]) {
		return s
	}
	h := fnv.New64a()
	h.Write([]byte(g))
	return fmt.Sprintf("g%.40s-%016x", strings.Trim(s, "-_."), h.Sum64())
}
