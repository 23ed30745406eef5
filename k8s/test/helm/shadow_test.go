package helm

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/integration/framework"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
	"github.com/wattsched/wattsched/k8s/shadow"
)

// TestRenderShadow: shadow.enabled adds the wattsched-shadow Deployment
// with its own ServiceAccount and a ClusterRole that only reads (get,
// list, watch; no binding, no pod writes; Events only with
// shadow.events); it runs the image `make images` names and reads the
// scheduler's rendered configuration, whose profiles the shadow builds.
// Off by default.
func TestRenderShadow(t *testing.T) {
	files, err := render(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := find(objects(t, files), "Deployment", fullname+"-shadow"); d != nil {
		t.Fatal("the shadow is rendered by default")
	}
	for _, events := range []bool{false, true} {
		files, err := render(map[string]any{"shadow": map[string]any{"enabled": true, "events": events, "reportPeriod": "15m"}})
		if err != nil {
			t.Fatal(err)
		}
		objs := objects(t, files)
		var d appsv1.Deployment
		typed(t, find(objs, "Deployment", fullname+"-shadow"), &d)
		ps := d.Spec.Template.Spec
		if ps.ServiceAccountName != fullname+"-shadow" || find(objs, "ServiceAccount", fullname+"-shadow") == nil {
			t.Errorf("service account %q, want its own", ps.ServiceAccountName)
		}
		c := ps.Containers[0]
		if c.Image != "ghcr.io/wattsched/wattsched-shadow:v0.1.0" {
			t.Errorf("image %s", c.Image)
		}
		for _, a := range []string{"-config=/etc/wattsched/config/scheduler-config.yaml", "-report-period=15m", "-report-dir=/var/lib/wattsched-shadow"} {
			if !slices.Contains(c.Args, a) {
				t.Errorf("args %v: no %s", c.Args, a)
			}
		}
		if slices.Contains(c.Args, "-events") != events {
			t.Errorf("events %v, args %v", events, c.Args)
		}
		// Its pods are the shadow's alone: the scheduler's Deployment and
		// Service select none of them.
		var sched appsv1.Deployment
		typed(t, find(objs, "Deployment", fullname), &sched)
		var svc corev1.Service
		typed(t, find(objs, "Service", fullname+"-metrics"), &svc)
		podLabels := labels.Set(d.Spec.Template.Labels)
		if sel, err := metav1.LabelSelectorAsSelector(sched.Spec.Selector); err != nil || sel.Matches(podLabels) {
			t.Errorf("the scheduler's selector %v matches the shadow's pods %v (%v)", sched.Spec.Selector, podLabels, err)
		}
		if labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
			t.Errorf("the scheduler's Service selects the shadow's pods %v", podLabels)
		}
		var role rbacv1.ClusterRole
		typed(t, find(objs, "ClusterRole", fullname+"-shadow"), &role)
		var b rbacv1.ClusterRoleBinding
		typed(t, find(objs, "ClusterRoleBinding", fullname+"-shadow"), &b)
		if b.RoleRef.Name != role.Name || len(b.Subjects) != 1 || b.Subjects[0].Name != ps.ServiceAccountName {
			t.Errorf("binding %+v", b)
		}
		writesEvents := false
		for _, r := range role.Rules {
			for _, res := range r.Resources {
				if strings.Contains(res, "binding") || strings.Contains(res, "/") {
					t.Errorf("rule %+v: sub-resource or binding", r)
				}
			}
			if slices.Equal(r.APIGroups, []string{"events.k8s.io"}) && slices.Equal(r.Resources, []string{"events"}) {
				writesEvents = true
				continue
			}
			for _, v := range r.Verbs {
				if v != "get" && v != "list" && v != "watch" {
					t.Errorf("rule %+v: verb %s is not a read", r, v)
				}
			}
		}
		if writesEvents != events {
			t.Errorf("events %v, event rule %v", events, writesEvents)
		}
		// The shadow builds every profile of the rendered configuration
		// (the plugins, FGD's workload, the catalog).
		cfg, _ := schedulerConfig(t, objs)
		sh, err := shadow.New(context.Background(), fake.NewClientset(), cfg, shadow.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := sh.Profiles(); len(got) != len(cfg.Profiles) || got[0] != cfg.Profiles[0].SchedulerName {
			t.Errorf("profiles %v", got)
		}
	}
	// The shadow alone: no scheduler replica.
	alone, err := render(map[string]any{"replicaCount": 0, "leaderElection": map[string]any{"enabled": false}, "shadow": map[string]any{"enabled": true}})
	if err != nil {
		t.Fatal(err)
	}
	var sched appsv1.Deployment
	typed(t, find(objects(t, alone), "Deployment", fullname), &sched)
	if *sched.Spec.Replicas != 0 || find(objects(t, alone), "Deployment", fullname+"-shadow") == nil {
		t.Errorf("alone: scheduler replicas %d", *sched.Spec.Replicas)
	}
	if _, err := render(map[string]any{"shadow": map[string]any{"enabled": true, "measured": true}}); err == nil || !strings.Contains(err.Error(), "measuredPower.url") {
		t.Errorf("measured without measuredPower.url: %v", err)
	}
}

// TestShadowRBACOnAPIServer applies the shadow's rendered ServiceAccount,
// ClusterRole and binding on a real API server that authorizes by RBAC,
// and runs the shadow as that ServiceAccount: every informer its profiles
// need syncs (a list the role lacks would keep it from syncing), and a
// bind or a pod write is forbidden.
func TestShadowRBACOnAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	srv := kubeapiservertesting.StartTestServerOrDie(t, nil, []string{
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority,StorageObjectInUseProtection",
		"--authorization-mode=RBAC",
	}, framework.SharedEtcd())
	t.Cleanup(srv.TearDownFn)
	rc := srv.ClientConfig
	admin, err := clientset.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	files, err := render(map[string]any{"shadow": map[string]any{"enabled": true}})
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, files)
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		apply(t, dyn, mapper, find(objs, kind, fullname+"-shadow"))
	}
	if _, err := admin.CoreV1().Nodes().Create(ctx, localkube.NodeObject(cluster.NodeSpec{Name: "t4-0", CPUMilli: 64000, MemMiB: 262144, GPUs: 2, GPUModel: "T4"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := admin.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, fullname+"-shadow", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	as := rest.AnonymousClientConfig(rc)
	as.BearerToken = tok.Status.Token
	cs, err := clientset.NewForConfig(as)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := schedulerConfig(t, objs)
	sctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	sh, err := shadow.New(sctx, cs, cfg, shadow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(sctx); err != nil {
		t.Fatalf("the shadow's informers as its ServiceAccount: %v", err)
	}
	task := job.Task{Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024}}
	p, err := admin.CoreV1().Pods(namespace).Create(ctx, localkube.PodObject(&task, namespace, "p", "default-scheduler"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = cs.CoreV1().Pods(namespace).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: "t4-0"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("bind as the shadow: %v, want forbidden", err)
	}
	if _, err := cs.CoreV1().Pods(namespace).Create(ctx, localkube.PodObject(&task, namespace, "q", "default-scheduler"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("pod create as the shadow: %v, want forbidden", err)
	}
}
