package helm

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

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
