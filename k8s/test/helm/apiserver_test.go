package helm

import (
	"bufio"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/integration/framework"
	"sigs.k8s.io/yaml"

	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/k8s/internal/localkube"
)

// TestMain starts one embedded etcd for the API server of
// TestChartOnAPIServer (the same setup as k8s/test/integration).
func TestMain(m *testing.M) {
	flag.Parse()
	localkube.MainWithEtcd(m, testing.Short())
}

// TestChartOnAPIServer installs the chart's objects on one real API
// server and runs the scheduler as the Deployment would:
//
//   - apply: the monitoring CRDs, then every object rendered with the
//     default values and then with ci/budget-values.yaml, server-side with
//     strict field validation;
//   - scheduler: the kube-scheduler binary with the rendered configuration,
//     ConfigMaps and flags binds a GPU-share pod, holds a pod over the
//     power budget until power frees up, and serves every series the
//     dashboard and the alerts read;
//   - leader election: a second replica waits while the first leads; the
//     first is killed; pods created meanwhile stay Pending until the
//     second takes the Lease, then are bound.
func TestChartOnAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server and builds the scheduler binary")
	}
	// Build while the API server starts.
	bin := filepath.Join(t.TempDir(), "kube-scheduler")
	built := make(chan error, 1)
	go func() {
		build := exec.Command("go", "build", "-o", bin, "./cmd/kube-scheduler")
		build.Dir = filepath.Join(repoRoot(), "k8s")
		if out, err := build.CombinedOutput(); err != nil {
			built <- fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built <- nil
	}()
	// The full server chain (with the CustomResourceDefinition server),
	// on the embedded etcd.
	srv := kubeapiservertesting.StartTestServerOrDie(t, nil, []string{
		// No service accounts to mount, no taints added to new nodes.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition,Priority,StorageObjectInUseProtection",
		// The chart's RBAC is what the scheduler may do.
		"--authorization-mode=RBAC",
	}, framework.SharedEtcd())
	t.Cleanup(srv.TearDownFn)
	rc := srv.ClientConfig
	cs, err := clientset.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}

	// The test's values: ci/budget-values.yaml with a budget the test's
	// node reaches with one GPU pod, and a Prometheus that does not answer
	// (the measured profile then counts its estimates).
	vals := ciValues(t)
	profiles := vals["profiles"].([]any)
	profiles[1].(map[string]any)["powerBudget"].(map[string]any)["budgetWatts"] = 250
	vals["measuredPower"].(map[string]any)["url"] = "http://127.0.0.1:9"
	// A GPU model of the operator's own (the bring-your-own-hardware
	// format `wattsched calibrate` writes), for node byo.
	vals["extraCatalog"] = "gpus:\n  - {name: Test-GPU-42, idle_w: 20, tdp_w: 100, memory_gib: 16, source: \"test\"}\n"
	files, err := render(vals)
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, files)

	ok := t.Run("apply", func(t *testing.T) {
		applyAll(t, cs, rc, objs)
	})
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.FailNow()
	}
	// The replicas run as the chart's ServiceAccount, with a token the
	// API server issues for it (in the cluster: the projected token).
	tok, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), fullname,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := writeKubeconfig(t, rc, tok.Status.Token, dir)
	var leader *replica
	parent := t
	ok = t.Run("scheduler", func(t *testing.T) {
		leader = startReplica(t, parent, bin, objs, kubeconfig, filepath.Join(dir, "a"), true)
		leader.waitLeading(t, cs)
		scheduleThroughChart(t, cs, leader)
	})
	if !ok {
		t.FailNow()
	}
	t.Run("leader election", func(t *testing.T) {
		leaderElection(t, cs, bin, objs, kubeconfig, filepath.Join(dir, "b"), leader)
	})
}

// applyAll installs the CRDs, then every rendered object of the default
// values and of vals, as `kubectl apply --server-side` does.
func applyAll(t *testing.T, cs clientset.Interface, rc *rest.Config, objs []*unstructured.Unstructured) {
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	crds, err := os.ReadFile(filepath.Join("testdata", "monitoring-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crdObjs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(crds), "\n---") {
		var m map[string]any
		if err := yaml.UnmarshalStrict([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		crdObjs = append(crdObjs, &unstructured.Unstructured{Object: m})
	}
	for _, o := range crdObjs {
		apply(t, dyn, mapper, o)
	}
	// Wait until the API server serves the new kinds.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		mapper.Reset()
		served := 0
		for _, k := range []string{"ServiceMonitor", "PodMonitor", "PrometheusRule"} {
			if _, err := mapper.RESTMapping(schemaGK("monitoring.coreos.com", k), "v1"); err == nil {
				served++
			}
		}
		if served == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the monitoring CRDs are not served after 60 s")
		}
	}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defaults, err := render(nil)
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]int{}
	for _, set := range [][]*unstructured.Unstructured{objects(t, defaults), objs} {
		for _, o := range set {
			got := apply(t, dyn, mapper, o)
			applied[o.GetKind()]++
			if got.GetUID() == "" || got.GetName() != o.GetName() {
				t.Errorf("%s %s: applied as %v", o.GetKind(), o.GetName(), got)
			}
		}
	}
	kinds := make([]string, 0, len(applied))
	for k, n := range applied {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	t.Logf("applied: %s", strings.Join(kinds, ", "))
	// The objects are there, e.g. the dashboard with its label and the
	// Deployment with its replicas.
	d, err := cs.AppsV1().Deployments(namespace).Get(context.Background(), fullname, metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 2 {
		t.Fatalf("Deployment: %v %v", d, err)
	}
	// A field the CRD does not know is refused (strict field validation):
	// the apply above would have failed on a misspelt field.
	bad := find(objs, "ServiceMonitor", fullname).DeepCopy()
	_ = unstructured.SetNestedField(bad.Object, "30s", "spec", "scrapeEvery")
	if _, err := applyErr(dyn, mapper, bad); err == nil || !strings.Contains(err.Error(), "scrapeEvery") {
		t.Errorf("a ServiceMonitor with an unknown field: %v, want it refused", err)
	}
}

func schemaGK(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }

func apply(t *testing.T, dyn dynamic.Interface, mapper meta.RESTMapper, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := applyErr(dyn, mapper, o)
	if err != nil {
		t.Fatalf("apply %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
	return got
}

func applyErr(dyn dynamic.Interface, mapper meta.RESTMapper, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := o.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	data, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		r = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
	}
	force := true
	return r.Patch(context.Background(), o.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "wattsched-chart-test", Force: &force, FieldValidation: "Strict"})
}

// writeKubeconfig is a kubeconfig for the API server of rc with token.
func writeKubeconfig(t *testing.T, rc *rest.Config, token, dir string) string {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthority: rc.CAFile, CertificateAuthorityData: rc.CAData,
		InsecureSkipTLSVerify: rc.Insecure, TLSServerName: rc.ServerName}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	f := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, f); err != nil {
		t.Fatal(err)
	}
	return f
}

// replica is one kube-scheduler process of the Deployment.
type replica struct {
	cmd     *exec.Cmd
	port    int // the secure port; 0: none
	logs    *syncBuffer
	done    chan struct{}
	leaseID string
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startReplica runs the scheduler binary as the rendered Deployment's
// container: its command and flags, and its ConfigMap volumes written to
// dir at the paths the container mounts them (the paths in the
// configuration and flags are moved there). The test adds the kubeconfig
// (in the cluster: the ServiceAccount) for the connection and for the
// delegated authentication and authorization of /metrics, a free secure
// port on loopback instead of 10259, and nothing else.
func startReplica(t, owner *testing.T, bin string, objs []*unstructured.Unstructured, kubeconfig, dir string, serve bool) *replica {
	t.Helper()
	dep := find(objs, "Deployment", fullname)
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	c := containers[0].(map[string]any)
	volumes, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "volumes")
	mounts, _ := c["volumeMounts"].([]any)
	moved := map[string]string{} // mount path -> local directory
	for _, mv := range mounts {
		mount := mv.(map[string]any)
		name, path := mount["name"].(string), mount["mountPath"].(string)
		local := filepath.Join(dir, name)
		if err := os.MkdirAll(local, 0o755); err != nil {
			t.Fatal(err)
		}
		moved[path] = local
		for _, vv := range volumes {
			vol := vv.(map[string]any)
			if vol["name"] != name {
				continue
			}
			cmName, _, _ := unstructured.NestedString(vol, "configMap", "name")
			cm := find(objs, "ConfigMap", cmName)
			if cm == nil {
				t.Fatalf("volume %s: no ConfigMap %s rendered", name, cmName)
			}
			data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
			for k, v := range data {
				if err := os.WriteFile(filepath.Join(local, k), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	relocate := func(s string) string {
		for from, to := range moved {
			s = strings.ReplaceAll(s, from+"/", to+"/")
		}
		return s
	}
	// The configuration: its mounted paths moved, and the kubeconfig.
	cfgFile := filepath.Join(moved["/etc/wattsched/config"], "scheduler-config.yaml")
	text, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(relocate(string(text))), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &replica{logs: &syncBuffer{}, done: make(chan struct{})}
	var args []string
	for _, a := range c["args"].([]any) {
		s := relocate(a.(string))
		if strings.HasPrefix(s, "--secure-port=") {
			if !serve {
				s = "--secure-port=0"
			} else {
				p, err := localkube.FreePort()
				if err != nil {
					t.Fatal(err)
				}
				r.port = p
				s = "--secure-port=" + strconv.Itoa(p)
			}
		}
		args = append(args, s)
	}
	if cmd := c["command"].([]any); len(cmd) != 1 || cmd[0] != "/kube-scheduler" {
		t.Fatalf("the container runs %v, want /kube-scheduler (the image's binary)", cmd)
	}
	// In the cluster, kube-scheduler delegates the authentication and
	// authorization of /metrics to the API server through its in-cluster
	// ServiceAccount; out of the cluster it needs the kubeconfig named.
	args = append(args, "--bind-address=127.0.0.1", "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig)
	r.cmd = exec.Command(bin, args...)
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.done)
	}()
	// The process outlives the subtest that starts it: owner stops it.
	owner.Cleanup(func() {
		r.kill()
		// The chart's RBAC must cover everything the scheduler does: a
		// refusal it tolerates (a lookup, an event) is a failure too.
		for _, line := range strings.Split(r.logs.String(), "\n") {
			if strings.Contains(line, "is forbidden") {
				owner.Errorf("the scheduler was refused by the API server's RBAC: %s", line)
				break
			}
		}
		if owner.Failed() {
			owner.Logf("scheduler %v output:\n%s", args, r.logs.String())
		}
	})
	return r
}

func (r *replica) kill() {
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
		<-r.done
	}
}

func (r *replica) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// waitLeading waits until the Lease names a holder while only r runs,
// and records it as r's identity.
func (r *replica) waitLeading(t *testing.T, cs clientset.Interface) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if l := lease(cs); l != nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			r.leaseID = *l.Spec.HolderIdentity
			return
		}
		if r.exited() || time.Now().After(deadline) {
			t.Fatalf("the replica took no Lease %s/%s (exited: %v)", namespace, fullname, r.exited())
		}
	}
}

func lease(cs clientset.Interface) *coordinationv1.Lease {
	l, err := cs.CoordinationV1().Leases(namespace).Get(context.Background(), fullname, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return l
}

const podNS = "default"

// t4Node is a node of four T4 GPUs: 55 W idle under the PWR model (a
// 32-vCPU socket at 15 W, four GPUs at 10 W); one whole-GPU pod takes it
// to 220 W.
func t4Node() *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:       resource.MustParse("32"),
		v1.ResourceMemory:    resource.MustParse("64Gi"),
		v1.ResourcePods:      resource.MustParse("110"),
		gpushare.ResourceGPU: resource.MustParse("4"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "t4", Labels: map[string]string{gpushare.LabelGPUProduct: "T4", "kubernetes.io/hostname": "t4"}},
		Status: v1.NodeStatus{Capacity: rl, Allocatable: rl,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
	}
}

// gpuPod asks for one whole GPU, or milli thousandths of one.
func gpuPod(name, scheduler string, milli int) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: podNS, Annotations: map[string]string{}},
		Spec: v1.PodSpec{SchedulerName: scheduler, Containers: []v1.Container{{
			Name: "task", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: req, Limits: v1.ResourceList{}},
		}}},
	}
	if milli < 1000 {
		p.Annotations[gpushare.AnnGPUMilli] = strconv.Itoa(milli)
	} else {
		p.Spec.Containers[0].Resources.Requests[gpushare.ResourceGPU] = resource.MustParse("1")
		p.Spec.Containers[0].Resources.Limits[gpushare.ResourceGPU] = resource.MustParse("1")
	}
	return p
}

func create(t *testing.T, cs clientset.Interface, p *v1.Pod) {
	t.Helper()
	if _, err := cs.CoreV1().Pods(podNS).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deletePod(t *testing.T, cs clientset.Interface, name string) {
	t.Helper()
	zero := int64(0)
	if err := cs.CoreV1().Pods(podNS).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := cs.CoreV1().Pods(podNS).Get(context.Background(), name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return
		}
	}
	t.Fatalf("pod %s not deleted", name)
}

// waitBound waits until the pod is bound, and returns its node and GPUs.
func waitBound(t *testing.T, cs clientset.Interface, name string, r *replica) (node, gpus string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p, err := cs.CoreV1().Pods(podNS).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" {
			return p.Spec.NodeName, p.Annotations[gpushare.AnnGPUIndex]
		}
		if time.Now().After(deadline) || (r != nil && r.exited()) {
			t.Fatalf("pod %s not bound (conditions %+v)", name, p.Status.Conditions)
		}
	}
}

// waitUnschedulable waits until the scheduler marks the pod unschedulable,
// and returns the reason it gives.
func waitUnschedulable(t *testing.T, cs clientset.Interface, name string) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p, err := cs.CoreV1().Pods(podNS).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" {
			t.Fatalf("pod %s bound to %s, want it held back", name, p.Spec.NodeName)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable {
				return c.Message
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s neither bound nor unschedulable", name)
		}
	}
}

func scheduleThroughChart(t *testing.T, cs clientset.Interface, r *replica) {
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), t4Node(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The budget-gated profile (estimated mode, 250 W): one GPU pod takes
	// the node to 220 W; a second would add 60 W and waits until the first
	// leaves.
	create(t, cs, gpuPod("budget-a", "wattsched-pwr-fgd-budget", 1000))
	if node, gpus := waitBound(t, cs, "budget-a", r); node != "t4" || gpus == "" {
		t.Fatalf("budget-a on %q GPUs %q", node, gpus)
	}
	// The chart README's check that a profile scores: the pod's Scheduled
	// event reported by the profile (reportingComponent).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		evs, err := cs.CoreV1().Events(podNS).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=budget-a,reason=Scheduled"})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs.Items) > 0 {
			if got := evs.Items[0].ReportingController; got != "wattsched-pwr-fgd-budget" {
				t.Errorf("budget-a's Scheduled event reported by %q, want the profile wattsched-pwr-fgd-budget", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no Scheduled event for budget-a")
		}
	}
	create(t, cs, gpuPod("budget-b", "wattsched-pwr-fgd-budget", 1000))
	msg := waitUnschedulable(t, cs, "budget-b")
	if want := "power budget: estimated cluster power 220 W + at least 60 W for this pod exceeds the budget of 250 W"; !strings.Contains(msg, want) {
		t.Fatalf("budget-b: %q, want %q", msg, want)
	}
	deletePod(t, cs, "budget-a")
	if node, _ := waitBound(t, cs, "budget-b", r); node != "t4" {
		t.Fatalf("budget-b on %q after budget-a left", node)
	}
	deletePod(t, cs, "budget-b")

	// A pod on the node that does not add up (a CPU-only pod with a GPU
	// index, bound by someone else): reported, never blocking the node.
	odd := gpuPod("odd", "default-scheduler", 0)
	delete(odd.Annotations, gpushare.AnnGPUMilli)
	odd.Annotations[gpushare.AnnGPUIndex] = "0"
	odd.Spec.NodeName = "t4"
	create(t, cs, odd)

	// GPU sharing on the 0.2*PWR + 0.8*FGD profile whose FGD workload is
	// the import's pods.csv: two 400-thousandth pods share one GPU.
	create(t, cs, gpuPod("share-a", "wattsched-pwr-fgd", 400))
	_, first := waitBound(t, cs, "share-a", r)
	create(t, cs, gpuPod("share-b", "wattsched-pwr-fgd", 400))
	node, second := waitBound(t, cs, "share-b", r)
	if node != "t4" || first == "" || second != first {
		t.Fatalf("share-a on GPU %q, share-b on %q GPU %q: want both on one GPU", first, node, second)
	}
	// The measured profile with Prometheus unreachable: admitted on its
	// estimate.
	create(t, cs, gpuPod("measured", "wattsched-pwr-measured", 1000))
	if node, _ := waitBound(t, cs, "measured", r); node != "t4" {
		t.Fatalf("measured on %q", node)
	}

	// The catalog entry from the chart's extraCatalog: a node of that model
	// takes a pod that asks for it.
	byo := t4Node()
	byo.Name, byo.Labels[gpushare.LabelGPUProduct], byo.Labels["kubernetes.io/hostname"] = "byo", "Test-GPU-42", "byo"
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), byo, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	own := gpuPod("own-model", "wattsched-pwr-fgd", 1000)
	own.Annotations[gpushare.AnnGPUModels] = "Test-GPU-42"
	create(t, cs, own)
	if node, gpus := waitBound(t, cs, "own-model", r); node != "byo" || gpus == "" {
		t.Fatalf("own-model on %q GPUs %q, want byo", node, gpus)
	}

	// Every series the dashboard and the alerts read is on the scheduler's
	// /metrics, but the measured reading (absent while a node counts its
	// estimate; TestSchedulerBinaryMetrics reads it from a real Prometheus).
	// /metrics is served to the ServiceAccount of metrics.readers only
	// (kube-scheduler's delegated authentication and authorization, under
	// the chart's RBAC): an anonymous scrape is refused.
	metricsURL := fmt.Sprintf("https://127.0.0.1:%d/metrics", r.port)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("monitoring").Create(context.Background(), &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	promTok, err := cs.CoreV1().ServiceAccounts("monitoring").CreateToken(context.Background(), "prometheus",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if code := metricsStatus(t, metricsURL, ""); code != http.StatusUnauthorized && code != http.StatusForbidden {
		t.Errorf("anonymous GET /metrics: %d, want 401 or 403", code)
	}
	series := scrape(t, metricsURL, promTok.Status.Token, "wattsched_inconsistent_pods_total")
	rules, err := os.ReadFile(filepath.Join(chartDir(), "files", "wattsched-alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, e := range append(dashboardExprs(t), string(rules)) {
		for _, m := range metricName.FindAllString(e, -1) {
			used[m] = true
		}
	}
	for m := range used {
		if m == "wattsched_measured_node_power_watts" {
			continue
		}
		if !series[m] {
			t.Errorf("the dashboard or the alerts read %s, which the scheduler does not serve (it serves %v)", m, keys(series))
		}
	}
	if len(used) < 8 {
		t.Errorf("only %d wattsched series in the dashboard and alerts: %v", len(used), keys(used))
	}
}

// metricsStatus is the status of a GET of url with token ("" : none).
func metricsStatus(t *testing.T, url, token string) int {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// scrape reads the wattsched_ metric names on a Prometheus text endpoint,
// polling until want is among them.
func scrape(t *testing.T, url, token, want string) map[string]bool {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	var names map[string]bool
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		names = map[string]bool{}
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err == nil {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, "wattsched_") {
					names[metricName.FindString(line)] = true
				}
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s", resp.Status)
			}
		}
		if err == nil && names[want] {
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v; series %v, want %s", url, err, keys(names), want)
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// leaderElection: the second replica (b) runs beside the leader (a); a is
// killed (no graceful release: the Lease must expire); pods created then
// stay Pending, unscheduled by anyone, until b takes the Lease and binds
// them.
func leaderElection(t *testing.T, cs clientset.Interface, bin string, objs []*unstructured.Unstructured, kubeconfig, dir string, a *replica) {
	b := startReplica(t, t, bin, objs, kubeconfig, dir, false)
	// b stands by: a keeps the Lease and keeps scheduling.
	time.Sleep(3 * time.Second)
	if l := lease(cs); l == nil || *l.Spec.HolderIdentity != a.leaseID {
		t.Fatalf("the Lease moved while its holder ran: %+v", l)
	}
	if b.exited() {
		t.Fatalf("the standby replica exited")
	}
	create(t, cs, gpuPod("before", "wattsched-pwr-fgd", 200))
	waitBound(t, cs, "before", a)

	a.kill()
	killed := time.Now()
	for i := range 3 {
		create(t, cs, gpuPod(fmt.Sprintf("pending-%d", i), "wattsched-pwr-fgd", 300))
	}
	// No replica leads until the Lease expires (6 s after the last
	// renewal): the pods stay Pending, with no scheduling condition.
	time.Sleep(2 * time.Second)
	for i := range 3 {
		p, err := cs.CoreV1().Pods(podNS).Get(context.Background(), fmt.Sprintf("pending-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" || p.Status.Phase != v1.PodPending || len(p.Status.Conditions) != 0 {
			t.Fatalf("pod %s while no replica leads: node %q phase %s conditions %v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
		}
	}
	var took time.Duration
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if l := lease(cs); l != nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != a.leaseID && *l.Spec.HolderIdentity != "" {
			took = time.Since(killed)
			t.Logf("the standby replica took the Lease %.1f s after the leader was killed (leaseDuration 6 s): %s", took.Seconds(), *l.Spec.HolderIdentity)
			break
		}
		if b.exited() || time.Now().After(deadline) {
			t.Fatalf("the standby replica did not take the Lease (exited: %v)", b.exited())
		}
	}
	for i := range 3 {
		if node, gpus := waitBound(t, cs, fmt.Sprintf("pending-%d", i), b); node == "" || gpus == "" {
			t.Fatalf("pending-%d on %q GPUs %q", i, node, gpus)
		}
	}
}
