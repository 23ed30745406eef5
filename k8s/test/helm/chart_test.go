// Package helm tests the Helm chart charts/wattsched-scheduler with Helm's
// Go SDK: lint, rendering with the default and the non-default values
// (ci/budget-values.yaml), the schema's rejections, and, against a real
// API server, every rendered object applied server-side, the
// kube-scheduler binary run with the rendered configuration and flags,
// and leader election between two replicas.
package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	scheduleroptions "k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"sigs.k8s.io/yaml"

	"github.com/wattsched/wattsched/trace/k8sdump"
)

const (
	release   = "wattsched-scheduler"
	namespace = "wattsched"
	// fullname is the objects' prefix for this release name
	// (the release name contains the chart's name).
	fullname = "wattsched-scheduler"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func chartDir() string { return filepath.Join(repoRoot(), "charts", "wattsched-scheduler") }

// ciValues reads the chart's non-default values file.
func ciValues(t testing.TB) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValuesFile(filepath.Join(chartDir(), "ci", "budget-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return v.AsMap()
}

// render renders the chart as `helm template --kube-version` does for a
// cluster of the Kubernetes version these tests are built against (values
// coalesced with the chart's, checked against values.schema.json): file
// name -> text.
func render(vals map[string]any) (map[string]string, error) {
	ch, err := loader.Load(chartDir())
	if err != nil {
		return nil, err
	}
	return renderChart(ch, vals)
}

func renderChart(ch *chart.Chart, vals map[string]any) (map[string]string, error) {
	return renderChartAt(ch, vals, builtKubeVersion())
}

// renderChartAt renders for a cluster whose API server reports
// kubeVersion (.Capabilities.KubeVersion, as helm install reads it from
// the server: the version as given, and a minor such as "37+" where the
// version has a provider's suffix, as GKE and EKS report).
func renderChartAt(ch *chart.Chart, vals map[string]any, kubeVersion string) (map[string]string, error) {
	cvals, err := chartutil.CoalesceValues(ch, vals)
	if err != nil {
		return nil, err
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return nil, err
	}
	kv.Version = "v" + strings.TrimPrefix(kubeVersion, "v")
	if strings.Contains(kubeVersion, "-") {
		kv.Minor += "+"
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	rv, err := chartutil.ToRenderValues(ch, cvals, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// builtKubeVersion: the k8s.io/kubernetes version this test binary is
// built with (k8s/go.mod's, or an older minor's module file), so that the
// chart is rendered for the API server of that version the tests start.
// It is in the path of the module's source files the binary records
// (.../k8s.io/kubernetes@v1.37.2/...).
func builtKubeVersion() string {
	file, _ := runtime.FuncForPC(reflect.ValueOf(scheduleroptions.LoadConfigFromFile).Pointer()).FileLine(0)
	m := regexp.MustCompile(`k8s\.io/kubernetes@(v1\.[0-9]+\.[0-9]+)/`).FindStringSubmatch(filepath.ToSlash(file))
	if m == nil {
		panic("no k8s.io/kubernetes version in " + file)
	}
	return m[1]
}

// builtMinor: "1.37" for v1.37.2.
func builtMinor() string {
	return regexp.MustCompile(`^v(1\.[0-9]+)\.`).FindStringSubmatch(builtKubeVersion())[1]
}

// objects are the rendered manifests' objects, in file then document order.
func objects(t testing.TB, files map[string]string) []*unstructured.Unstructured {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, ".yaml") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []*unstructured.Unstructured
	for _, n := range names {
		for i, doc := range strings.Split(files[n], "\n---") {
			var m map[string]any
			if err := yaml.UnmarshalStrict([]byte(doc), &m); err != nil {
				t.Fatalf("%s document %d: %v\n%s", n, i+1, err, doc)
			}
			if len(m) == 0 {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
	return out
}

// find returns the rendered object of kind and name (nil if none).
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// typed decodes a rendered built-in object strictly into its Go type.
func typed(t testing.TB, o *unstructured.Unstructured, into any) {
	t.Helper()
	if o == nil {
		t.Fatalf("no such object rendered (want a %T)", into)
	}
	b, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	s := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{Strict: true})
	obj, _, err := s.Decode(b, nil, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
	b, _ = json.Marshal(obj)
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

// schedulerConfig loads the rendered KubeSchedulerConfiguration as
// kube-scheduler does (decoding, defaulting and validation), with FGD's
// workload file and the catalog where the pod would mount them.
func schedulerConfig(t testing.TB, objs []*unstructured.Unstructured) (*schedconfig.KubeSchedulerConfiguration, string) {
	t.Helper()
	cm := find(objs, "ConfigMap", fullname+"-config")
	if cm == nil {
		t.Fatal("no ConfigMap " + fullname + "-config")
	}
	text, _, _ := unstructured.NestedString(cm.Object, "data", "scheduler-config.yaml")
	f := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := scheduleroptions.LoadConfigFromFile(klog.Background(), f)
	if err != nil {
		t.Fatalf("kube-scheduler cannot load the rendered configuration: %v\n%s", err, text)
	}
	return cfg, text
}

// profilePlugins lists, for the profile, the enabled plugins at the
// extension point (as "Name" or "Name:weight" for score).
func profilePlugins(t testing.TB, cfg *schedconfig.KubeSchedulerConfiguration, name, point string) []string {
	t.Helper()
	for _, p := range cfg.Profiles {
		if p.SchedulerName != name {
			continue
		}
		var set schedconfig.PluginSet
		switch point {
		case "preFilter":
			set = p.Plugins.PreFilter
		case "filter":
			set = p.Plugins.Filter
		case "score":
			set = p.Plugins.Score
		case "bind":
			set = p.Plugins.Bind
		case "reserve":
			set = p.Plugins.Reserve
		default:
			t.Fatalf("extension point %s", point)
		}
		var out []string
		for _, pl := range set.Enabled {
			if point == "score" {
				out = append(out, fmt.Sprintf("%s:%d", pl.Name, pl.Weight))
			} else {
				out = append(out, pl.Name)
			}
		}
		return out
	}
	t.Fatalf("no profile %s", name)
	return nil
}

func pluginArgs(t testing.TB, cfg *schedconfig.KubeSchedulerConfiguration, profile, plugin string) map[string]any {
	t.Helper()
	for _, p := range cfg.Profiles {
		if p.SchedulerName != profile {
			continue
		}
		for _, pc := range p.PluginConfig {
			if pc.Name != plugin {
				continue
			}
			b, err := json.Marshal(pc.Args)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	return nil
}

func TestLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{"default values": nil, "ci/budget-values.yaml": ciValues(t)} {
		l := lint.AllWithKubeVersion(chartDir(), vals, namespace, mustKubeVersion(t, builtKubeVersion()))
		for _, m := range l.Messages {
			t.Logf("%s: %s", name, m)
			if m.Severity > support.InfoSev {
				t.Errorf("%s: helm lint: %s", name, m)
			}
		}
	}
	// The linter reports bad values as an error too.
	l := lint.AllWithKubeVersion(chartDir(), map[string]any{"replicaCount": -1}, namespace, mustKubeVersion(t, builtKubeVersion()))
	if l.HighestSeverity != support.ErrorSev {
		t.Errorf("lint of replicaCount -1: highest severity %d, want error; %v", l.HighestSeverity, l.Messages)
	}
}

func mustKubeVersion(t testing.TB, v string) *chartutil.KubeVersion {
	t.Helper()
	kv, err := chartutil.ParseKubeVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// The default installation: two replicas with leader election on a Lease
// of the release namespace, the three scoring profiles, RBAC for the
// Lease, a metrics Service and the dashboard; no budget, no CRD objects,
// no agent.
func TestRenderDefaults(t *testing.T) {
	files, err := render(nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, files)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetLabels()["app.kubernetes.io/instance"] != release {
			t.Errorf("%s %s: no instance label", o.GetKind(), o.GetName())
		}
	}
	want := map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 3, "Role": 1, "RoleBinding": 2,
		"ConfigMap": 2, "Deployment": 1, "Service": 1, "PodDisruptionBudget": 1}
	if !maps.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	var d appsv1.Deployment
	typed(t, find(objs, "Deployment", fullname), &d)
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d, want 2", *d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if want := "ghcr.io/wattsched/kube-scheduler:v0.1.0-k8s" + builtMinor(); c.Image != want {
		t.Errorf("image %s: want %s (the chart's appVersion and the cluster's minor)", c.Image, want)
	}
	// The chart runs the image the plain manifests name (k8s/deploy, whose
	// tags a test ties to the wattsched version) on the newest minor's
	// cluster: a release that moves one moves both.
	manifest, err := os.ReadFile(filepath.Join("..", "..", "deploy", "scheduler.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	minors := moduleMinors(t)
	newest := minors[len(minors)-1]
	if m := regexp.MustCompile(`(?m)^\s*image:\s*(\S+)`).FindSubmatch(manifest); m == nil || string(m[1]) != "ghcr.io/wattsched/kube-scheduler:v0.1.0-k8s"+newest[0] {
		t.Errorf("k8s/deploy/scheduler.yaml names %q, want the chart's image for Kubernetes %s", m, newest[1])
	}
	if !slices.Contains(c.Args, "--config=/etc/wattsched/config/scheduler-config.yaml") || slices.Contains(c.Args, "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics") {
		t.Errorf("args %v", c.Args)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the scheduler's root filesystem is writable")
	}
	// Managed clusters: no PriorityClass by default (system-cluster-critical
	// outside kube-system is refused there), and /metrics only on the
	// secure port, authenticated and authorized by delegation.
	if pc := d.Spec.Template.Spec.PriorityClassName; pc != "" {
		t.Errorf("priorityClassName %q by default, want none", pc)
	}
	securePort := false
	for _, a := range c.Args {
		switch {
		case a == "--secure-port=10259":
			securePort = true
		case strings.HasPrefix(a, "--authorization-always-allow-paths"), strings.HasPrefix(a, "--authentication-skip-lookup"),
			strings.HasPrefix(a, "--port="), strings.HasPrefix(a, "--bind-address=") && a != "--bind-address=0.0.0.0":
			t.Errorf("default args have %s: metrics served beyond the authenticated secure port", a)
		}
	}
	if !securePort {
		t.Errorf("args %v: no --secure-port=10259", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 10259 {
		t.Errorf("container ports %+v, want the secure port 10259 only", c.Ports)
	}
	var svc corev1.Service
	typed(t, find(objs, "Service", fullname+"-metrics"), &svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 10259 {
		t.Errorf("metrics Service ports %+v, want 10259 only", svc.Spec.Ports)
	}
	// Delegated authentication and authorization: kube-scheduler's own
	// role (tokenreviews, subjectaccessreviews) and the client-CA reader.
	var sched rbacv1.ClusterRoleBinding
	typed(t, find(objs, "ClusterRoleBinding", fullname+"-as-kube-scheduler"), &sched)
	var authn rbacv1.RoleBinding
	typed(t, find(objs, "RoleBinding", fullname+"-authentication-reader"), &authn)
	if sched.RoleRef.Name != "system:kube-scheduler" || authn.RoleRef.Name != "extension-apiserver-authentication-reader" || authn.Namespace != "kube-system" {
		t.Errorf("delegation RBAC: %+v, %+v", sched.RoleRef, authn)
	}
	cfg, text := schedulerConfig(t, objs)
	le := cfg.LeaderElection
	if !le.LeaderElect || le.ResourceLock != "leases" || le.ResourceNamespace != namespace || le.ResourceName != fullname {
		t.Errorf("leader election %+v: want a Lease %s/%s", le, namespace, fullname)
	}
	if cfg.PercentageOfNodesToScore == nil || *cfg.PercentageOfNodesToScore != 100 {
		t.Errorf("percentageOfNodesToScore %v", cfg.PercentageOfNodesToScore)
	}
	var names []string
	for _, p := range cfg.Profiles {
		names = append(names, p.SchedulerName)
		if got := profilePlugins(t, cfg, p.SchedulerName, "bind"); !slices.Equal(got, []string{"WattschedGPU"}) {
			t.Errorf("%s binds with %v", p.SchedulerName, got)
		}
		if slices.Contains(profilePlugins(t, cfg, p.SchedulerName, "preFilter"), "PowerBudget") {
			t.Errorf("%s has PowerBudget by default", p.SchedulerName)
		}
	}
	if !slices.Equal(names, []string{"wattsched-pwr-fgd", "wattsched-pwr", "wattsched-fgd"}) {
		t.Errorf("profiles %v", names)
	}
	// The simulator's weighted sum: 0.2*PWR + 0.8*FGD and nothing else; the
	// GPUs picked by the higher-weighted FGD.
	for profile, want := range map[string][]string{
		"wattsched-pwr-fgd": {"PWR:200", "FGD:800"}, "wattsched-pwr": {"PWR:1"}, "wattsched-fgd": {"FGD:1"}} {
		if got := profilePlugins(t, cfg, profile, "score"); !slices.Equal(got, want) {
			t.Errorf("%s scores %v, want %v", profile, got, want)
		}
	}
	for profile, sel := range map[string]string{"wattsched-pwr-fgd": "fgd", "wattsched-pwr": "pwr", "wattsched-fgd": "fgd"} {
		a := pluginArgs(t, cfg, profile, "WattschedGPU")
		if a["gpuSelector"] != sel {
			t.Errorf("%s: gpuSelector %v, want %s", profile, a["gpuSelector"], sel)
		}
	}
	if a := pluginArgs(t, cfg, "wattsched-fgd", "FGD"); a["workload"] != "default" {
		t.Errorf("FGD args %v: want the embedded default workload", a)
	}
	if strings.Contains(text, "workloadFile") {
		t.Error("workloadFile without a workload ConfigMap")
	}
	// The Lease: created, then read and renewed by name only.
	var role rbacv1.Role
	typed(t, find(objs, "Role", fullname+"-leader-election"), &role)
	leases := false
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "leases") && slices.Contains(r.Verbs, "update") {
			leases = slices.Equal(r.ResourceNames, []string{fullname})
		}
	}
	if !leases || role.Namespace != namespace {
		t.Errorf("leader-election Role %+v: want update on Lease %s/%s", role, namespace, fullname)
	}
	dash := find(objs, "ConfigMap", fullname+"-dashboard")
	if dash == nil || dash.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap %v", dash)
	}
	if !strings.Contains(files["wattsched-scheduler/templates/NOTES.txt"], "stay Pending") {
		t.Error("NOTES.txt does not say what happens to pending pods while no replica runs")
	}
}

// The non-default values: the budget in estimated and measured mode, FGD's
// workload from a ConfigMap holding what `wattsched import k8s` writes,
// the monitoring objects and the NVML agent.
func TestRenderBudget(t *testing.T) {
	vals := ciValues(t)
	files, err := render(vals)
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, files)
	cfg, _ := schedulerConfig(t, objs)
	for _, profile := range []string{"wattsched-pwr-fgd-budget", "wattsched-pwr-measured"} {
		for _, point := range []string{"preFilter", "filter", "reserve"} {
			if !slices.Contains(profilePlugins(t, cfg, profile, point), "PowerBudget") {
				t.Errorf("%s: no PowerBudget at %s", profile, point)
			}
		}
	}
	if slices.Contains(profilePlugins(t, cfg, "wattsched-pwr-fgd", "filter"), "PowerBudget") {
		t.Error("PowerBudget in a profile without powerBudget")
	}
	// The chart's own PriorityClass, used by the replicas; /metrics for
	// the listed ServiceAccount, no one else.
	var pc schedulingv1.PriorityClass
	typed(t, find(objs, "PriorityClass", fullname), &pc)
	var d appsv1.Deployment
	typed(t, find(objs, "Deployment", fullname), &d)
	if pc.Value != 1000000 || pc.GlobalDefault || d.Spec.Template.Spec.PriorityClassName != fullname {
		t.Errorf("PriorityClass %s value %d global %v; the replicas' %q", pc.Name, pc.Value, pc.GlobalDefault, d.Spec.Template.Spec.PriorityClassName)
	}
	if slices.ContainsFunc(d.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--authorization-always-allow-paths") }) {
		t.Error("ci values serve /metrics without authentication")
	}
	var reader rbacv1.ClusterRole
	typed(t, find(objs, "ClusterRole", fullname+"-metrics-reader"), &reader)
	var readers rbacv1.ClusterRoleBinding
	typed(t, find(objs, "ClusterRoleBinding", fullname+"-metrics-reader"), &readers)
	if len(reader.Rules) != 1 || !slices.Equal(reader.Rules[0].NonResourceURLs, []string{"/metrics"}) || !slices.Equal(reader.Rules[0].Verbs, []string{"get"}) ||
		len(readers.Subjects) != 1 || readers.Subjects[0].Name != "prometheus" || readers.Subjects[0].Namespace != "monitoring" {
		t.Errorf("metrics reader %+v bound to %+v", reader.Rules, readers.Subjects)
	}
	est := pluginArgs(t, cfg, "wattsched-pwr-fgd-budget", "PowerBudget")
	if est["budgetWatts"] != 9624.0 || est["measured"] != nil {
		t.Errorf("estimated PowerBudget args %v", est)
	}
	meas := pluginArgs(t, cfg, "wattsched-pwr-measured", "PowerBudget")
	m, _ := meas["measured"].(map[string]any)
	if meas["budgetWatts"] != 9624.0 || m["url"] != "http://prometheus-operated.monitoring:9090" || m["exporter"] != "dcgm" || m["refreshSeconds"] != 5.0 {
		t.Errorf("measured PowerBudget args %v", meas)
	}
	if got := profilePlugins(t, cfg, "wattsched-pwr-measured", "score"); !slices.Equal(got, []string{"PWR:1"}) {
		t.Errorf("wattsched-pwr-measured scores %v", got)
	}

	// FGD's workload: the ConfigMap holds exactly the pods.csv that
	// `wattsched import k8s` writes for the dump, mounted where the
	// arguments point.
	f, err := os.Open(filepath.Join(repoRoot(), "trace", "k8sdump", "testdata", "cluster.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dump, err := k8sdump.Read(f, "cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	imported := dump.Files("cluster.json", nil)["pods.csv"]
	wl := find(objs, "ConfigMap", fullname+"-fgd-workload")
	if wl == nil {
		t.Fatal("no workload ConfigMap")
	}
	if got, _, _ := unstructured.NestedString(wl.Object, "data", "pods.csv"); got != string(imported) {
		t.Errorf("workload ConfigMap:\n%s\nwant the import's pods.csv:\n%s", got, imported)
	}
	for _, profile := range []string{"wattsched-pwr-fgd", "wattsched-pwr-fgd-budget"} {
		if a := pluginArgs(t, cfg, profile, "FGD"); a["workloadFile"] != "/etc/wattsched/workload/pods.csv" || a["workload"] != nil {
			t.Errorf("%s FGD args %v", profile, a)
		}
		gpu := pluginArgs(t, cfg, profile, "WattschedGPU")
		if fgd, _ := gpu["fgd"].(map[string]any); gpu["gpuSelector"] != "fgd" || fgd["workloadFile"] != "/etc/wattsched/workload/pods.csv" {
			t.Errorf("%s WattschedGPU args %v", profile, gpu)
		}
	}
	mounted := false
	for _, vm := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		mounted = mounted || (vm.Name == "fgd-workload" && vm.MountPath == "/etc/wattsched/workload")
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "fgd-workload" && (v.ConfigMap == nil || v.ConfigMap.Name != fullname+"-fgd-workload") {
			t.Errorf("volume %+v", v)
		}
	}
	if !mounted {
		t.Error("the workload ConfigMap is not mounted")
	}

	// Monitoring: the ServiceMonitor scrapes the Service's port, the
	// PrometheusRule carries k8s/deploy's alerts, the PodMonitor the agents.
	sm := find(objs, "ServiceMonitor", fullname)
	svc := find(objs, "Service", fullname+"-metrics")
	if sm == nil || svc == nil {
		t.Fatal("no ServiceMonitor or Service")
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(eps) != 1 || eps[0].(map[string]any)["port"] != ports[0].(map[string]any)["name"] || eps[0].(map[string]any)["scheme"] != "https" {
		t.Errorf("ServiceMonitor endpoints %v for Service ports %v", eps, ports)
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v", sm.GetLabels())
	}
	rule := find(objs, "PrometheusRule", fullname)
	if rule == nil {
		t.Fatal("no PrometheusRule")
	}
	deployRules, err := os.ReadFile(filepath.Join(repoRoot(), "k8s", "deploy", "wattsched-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(deployRules, &want); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedFieldCopy(rule.Object, "spec"); !jsonEqual(got, want) {
		t.Errorf("PrometheusRule spec %v\nwant k8s/deploy/wattsched-alerts.yaml %v", got, want)
	}
	if find(objs, "PodMonitor", fullname+"-nvml-agent") == nil {
		t.Error("no PodMonitor for the agent")
	}
	var ds appsv1.DaemonSet
	typed(t, find(objs, "DaemonSet", fullname+"-nvml-agent"), &ds)
	c := ds.Spec.Template.Spec.Containers[0]
	named := false
	for _, e := range c.Env {
		named = named || (e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName")
	}
	if !named || len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9400 {
		t.Errorf("agent container %+v: want NODE_NAME from spec.nodeName and port 9400", c)
	}
	for name := range c.Resources.Requests {
		if strings.Contains(string(name), "gpu") {
			t.Errorf("the agent requests %s", name)
		}
	}
	if _, ok := ds.Spec.Template.Annotations["prometheus.io/scrape"]; ok {
		t.Error("scrape annotations beside a PodMonitor: scraped twice")
	}
	// Leader election with the values' short lease.
	if le := cfg.LeaderElection; le.LeaseDuration.Duration.Seconds() != 6 || le.RetryPeriod.Duration.Seconds() != 1 {
		t.Errorf("leader election %+v", le)
	}
	var svcTyped v1.Service
	typed(t, svc, &svcTyped)
}

// The chart's alerts are k8s/deploy's, byte for byte.
func TestAlertsMatchDeploy(t *testing.T) {
	a, err := os.ReadFile(filepath.Join(chartDir(), "files", "wattsched-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot(), "k8s", "deploy", "wattsched-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("charts/wattsched-scheduler/files/wattsched-alerts.yaml differs from k8s/deploy/wattsched-alerts.yaml: copy it over")
	}
}

// Values that make no sense fail with the field named, before anything
// is rendered.
func TestSchemaRejects(t *testing.T) {
	budget := func(w any, mode string) map[string]any {
		return map[string]any{"profiles": []any{map[string]any{"schedulerName": "b", "scoring": "pwr", "powerBudget": map[string]any{"budgetWatts": w, "mode": mode}}}}
	}
	for _, c := range []struct {
		name string
		vals map[string]any
		want string
	}{
		{"negative budget", budget(-100, "estimated"), "/profiles/0/powerBudget/budgetWatts"},
		{"zero budget", budget(0, "estimated"), "/profiles/0/powerBudget/budgetWatts"},
		{"budget as text", budget("lots", "estimated"), "/profiles/0/powerBudget/budgetWatts"},
		{"unknown budget mode", budget(1000, "guessed"), "/profiles/0/powerBudget/mode"},
		{"unknown scoring", map[string]any{"profiles": []any{map[string]any{"schedulerName": "x", "scoring": "greedy"}}}, "/profiles/0/scoring"},
		{"unknown profile field", map[string]any{"profiles": []any{map[string]any{"schedulerName": "x", "scoring": "pwr", "weight": 3}}}, "/profiles/0"},
		{"pwrWeight above 1", map[string]any{"profiles": []any{map[string]any{"schedulerName": "x", "scoring": "pwr-fgd", "pwrWeight": 1.5}}}, "/profiles/0/pwrWeight"},
		{"default-scheduler's name", map[string]any{"profiles": []any{map[string]any{"schedulerName": "default-scheduler", "scoring": "pwr"}}}, "/profiles/0/schedulerName"},
		{"no profiles", map[string]any{"profiles": []any{}}, "/profiles"},
		{"zero replicas with leader election", map[string]any{"replicaCount": 0}, "/replicaCount"},
		{"two replicas without leader election", map[string]any{"leaderElection": map[string]any{"enabled": false}}, "/replicaCount"},
		{"the default scheduler's lease", map[string]any{"leaderElection": map[string]any{"resourceName": "kube-scheduler"}}, "/leaderElection/resourceName"},
		{"lease duration without unit", map[string]any{"leaderElection": map[string]any{"leaseDuration": "15"}}, "/leaderElection/leaseDuration"},
		{"misspelt top-level key", map[string]any{"replicas": 3}, "replicas"},
		{"unknown exporter", map[string]any{"measuredPower": map[string]any{"exporter": "nvidia-smi"}}, "/measuredPower/exporter"},
		{"negative refresh", map[string]any{"measuredPower": map[string]any{"refreshSeconds": -5}}, "/measuredPower/refreshSeconds"},
		{"percentage over 100", map[string]any{"scheduler": map[string]any{"percentageOfNodesToScore": 150}}, "/scheduler/percentageOfNodesToScore"},
		// Checks across fields, in the templates.
		{"measured mode without Prometheus", budget(1000, "measured"), "measuredPower.url: required by profiles[0] (b)"},
		{"profile name twice", map[string]any{"profiles": []any{
			map[string]any{"schedulerName": "x", "scoring": "pwr"}, map[string]any{"schedulerName": "x", "scoring": "fgd"}}}, `profiles[1].schedulerName: "x" is used twice`},
		{"PriorityClass value of a system class", map[string]any{"priorityClass": map[string]any{"create": true, "value": 2000000000}}, "/priorityClass/value"},
		{"PriorityClass value as text", map[string]any{"priorityClass": map[string]any{"create": true, "value": "high"}}, "/priorityClass/value"},
		{"unknown PriorityClass field", map[string]any{"priorityClass": map[string]any{"name": "x"}}, "/priorityClass"},
		{"metrics reader without namespace", map[string]any{"metrics": map[string]any{"readers": []any{map[string]any{"name": "prometheus"}}}}, "/metrics/readers/0"},
		{"ServiceMonitor without the Service", map[string]any{"metrics": map[string]any{"service": map[string]any{"enabled": false}, "serviceMonitor": map[string]any{"enabled": true}}}, "metrics.serviceMonitor.enabled: needs metrics.service.enabled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(c.vals)
			if err == nil {
				t.Fatalf("values %v rendered", c.vals)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %q", err, c.want)
			}
			t.Log(err)
		})
	}
	// The schema is what rejects: without it the same values render.
	ch, err := loader.Load(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	ch.Schema = nil
	if _, err := renderChart(ch, map[string]any{"replicaCount": 0, "profiles": []any{map[string]any{"schedulerName": "b", "scoring": "pwr", "powerBudget": map[string]any{"budgetWatts": -1}}}}); err != nil {
		t.Fatalf("without the schema: %v", err)
	}
}

// metricNames are the wattsched_ series a PromQL expression reads.
var metricName = regexp.MustCompile(`wattsched_[a-z_]+`)

// dashboardExprs are the dashboard's PromQL expressions.
func dashboardExprs(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir(), "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	if d.UID == "" || len(out) == 0 {
		t.Fatal("dashboard.json: no uid or no queries")
	}
	return out
}

// The dashboard's queries are valid PromQL (promtool checks them as
// recording rules) and show what the issue asks for.
func TestDashboardQueries(t *testing.T) {
	exprs := dashboardExprs(t)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		q, _ := json.Marshal(e)
		fmt.Fprintf(&rules, "      - record: dashboard:query%d\n        expr: %s\n", i, q)
	}
	f := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found on PATH: install it with `make prometheus` (apt-get install -y prometheus)")
	}
	if out, err := exec.Command(bin, "check", "rules", f).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	all := strings.Join(exprs, "\n")
	for _, want := range []string{
		"wattsched_estimated_cluster_power_watts",                    // predicted
		"wattsched_measured_node_power_watts",                        // measured
		"wattsched_power_budget_watts",                               // the budget
		"wattsched_power_headroom_watts",                             // headroom
		`wattsched_power_budget_decisions_total{decision="waiting"}`, // admissions waiting
		"wattsched_inconsistent_pods_total",                          // inconsistent pods
		"wattsched_modelled_node_power_watts",                        // modelled power without a budget
		"wattsched_pods_placed_total",                                // pods placed per plugin
		"wattsched_chosen_node_score",                                // chosen-node score
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the dashboard does not query %s", want)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// A profile's powerBudget.domains reaches PowerBudget's arguments as
// given; the schema rejects a level without a positive limit, naming it.
func TestRenderBudgetDomains(t *testing.T) {
	domains := map[string]any{"levels": []any{
		map[string]any{"name": "rack", "labelKey": "wattsched.io/rack", "limitWatts": 17000.0, "limits": map[string]any{"r07": 22000.0}},
		map[string]any{"name": "zone", "labelKey": "topology.kubernetes.io/zone", "limitWatts": 200000.0}}}
	vals := func(d map[string]any) map[string]any {
		return map[string]any{"profiles": []any{map[string]any{"schedulerName": "b", "scoring": "pwr",
			"powerBudget": map[string]any{"budgetWatts": 240000, "domains": d}}}}
	}
	files, err := render(vals(domains))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := schedulerConfig(t, objects(t, files))
	if got := pluginArgs(t, cfg, "b", "PowerBudget")["domains"]; !jsonEqual(got, domains) {
		t.Errorf("PowerBudget domains %v, want %v", got, domains)
	}
	bad := map[string]any{"levels": []any{map[string]any{"name": "rack", "labelKey": "wattsched.io/rack", "limitWatts": 0}}}
	if _, err := render(vals(bad)); err == nil || !strings.Contains(err.Error(), "/profiles/0/powerBudget/domains/levels/0/limitWatts") {
		t.Errorf("limitWatts 0: %v, want an error naming it", err)
	}
}

// moduleMinors: per Kubernetes minor the k8s module supports, oldest
// first, the minor and the k8s.io/kubernetes version its module file pins
// (k8s/go.k8s1NN.mod for the older minors, k8s/go.mod for the newest).
func moduleMinors(t testing.TB) [][2]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(), "k8s", "go.k8s1*.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, f := range append(files, filepath.Join(repoRoot(), "k8s", "go.mod")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes\s+(v(1\.([0-9]+))\.\S+)`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s pins no k8s.io/kubernetes", f)
		}
		out = append(out, [2]string{string(m[2]), string(m[1])})
	}
	sort.Slice(out, func(i, j int) bool {
		return len(out[i][0]) < len(out[j][0]) || len(out[i][0]) == len(out[j][0]) && out[i][0] < out[j][0]
	})
	return out
}

// The chart runs the kube-scheduler image of the cluster's minor, for each
// minor the k8s module supports (the Makefile builds the same list), and
// refuses a cluster of any other minor with a message naming the
// supported ones; Chart.yaml's kubeVersion admits exactly those minors.
func TestImagePerKubernetesMinor(t *testing.T) {
	ch, err := loader.Load(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	minors := moduleMinors(t)
	var names []string
	for _, m := range minors {
		names = append(names, m[0])
	}
	// The Makefile builds (and CI tests) the same minors.
	mk, err := os.ReadFile(filepath.Join(repoRoot(), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	newest := regexp.MustCompile(`(?m)^K8S_NEWEST := (\S+)$`).FindSubmatch(mk)
	older := regexp.MustCompile(`(?m)^K8S_OLDER := (.*)$`).FindSubmatch(mk)
	if newest == nil || older == nil || strings.Join(append(strings.Fields(string(older[1])), string(newest[1])), " ") != strings.Join(names, " ") {
		t.Errorf("Makefile K8S_OLDER/K8S_NEWEST %q %q, the module files' minors %v", older, newest, names)
	}
	image := func(t *testing.T, files map[string]string) string {
		t.Helper()
		var d appsv1.Deployment
		typed(t, find(objects(t, files), "Deployment", fullname), &d)
		return d.Spec.Template.Spec.Containers[0].Image
	}
	for _, m := range minors {
		// The version the module pins, and a managed cluster's spelling
		// of the same minor (GKE reports minor "NN+" and a suffixed version).
		for _, v := range []string{m[1], m[1] + "-gke.1200"} {
			t.Run(v, func(t *testing.T) {
				files, err := renderChartAt(ch, nil, v)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := image(t, files), "ghcr.io/wattsched/kube-scheduler:v0.1.0-k8s"+m[0]; got != want {
					t.Errorf("image %s, want %s", got, want)
				}
				if !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, v) {
					t.Errorf("Chart.yaml's kubeVersion %q refuses %s", ch.Metadata.KubeVersion, v)
				}
			})
		}
	}
	// image.tag, where set, is used as it is.
	files, err := renderChartAt(ch, map[string]any{"image": map[string]any{"tag": "dev"}}, minors[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if got := image(t, files); got != "ghcr.io/wattsched/kube-scheduler:dev" {
		t.Errorf("image.tag dev: image %s", got)
	}
	// The minor below the oldest and the one above the newest.
	below, above := minorBeside(t, minors[0][0], -1), minorBeside(t, minors[len(minors)-1][0], +1)
	for _, v := range []string{"v" + below + ".13", "v" + above + ".0", "v" + above + ".1-eks.3"} {
		t.Run(v, func(t *testing.T) {
			_, err := renderChartAt(ch, nil, v)
			want := "Kubernetes " + v + " is not supported: this chart runs kube-scheduler " + strings.Join(names, ", ")
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("render for %s: error %v, want %q", v, err, want)
			}
			if chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, v) {
				t.Errorf("Chart.yaml's kubeVersion %q admits %s", ch.Metadata.KubeVersion, v)
			}
		})
	}
}

// minorBeside: "1.34" for ("1.35", -1).
func minorBeside(t testing.TB, minor string, d int) string {
	t.Helper()
	var major, n int
	if _, err := fmt.Sscanf(minor, "%d.%d", &major, &n); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d.%d", major, n+d)
}
