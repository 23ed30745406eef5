package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/plugins"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/trace/k8sdump"
)

// draConfig runs WattschedGPU, PowerBudget and PWR (explain on) beside
// kube-scheduler's default plugins, among them DynamicResources, which
// allocates the claims' devices. BUDGET is set by the test.
const draConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
  - schedulerName: wattsched-dra
    plugins:
      multiPoint:
        enabled:
          - name: WattschedGPU
          - name: PowerBudget
      preScore:
        disabled: [{name: "*"}]
        enabled: [{name: PWR}]
      score:
        disabled: [{name: "*"}]
        enabled: [{name: PWR, weight: 1}]
      preBind:
        enabled: [{name: PWR}]
    pluginConfig:
      - name: PWR
        args:
          explain: true
      - name: PowerBudget
        args:
          budgetWatts: BUDGET
`

// draDriver publishes a fake driver's ResourceSlices under NVIDIA's DRA
// driver name and attributes (type, productName, uuid, index; memory
// capacity), and its gpu.nvidia.com DeviceClass, as the driver's chart
// does.
func draDriver(t *testing.T, cs clientset.Interface, nodes map[string]struct {
	product string
	gpus    int
}) {
	t.Helper()
	ctx := context.Background()
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.nvidia.com"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}}}}
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for node, n := range nodes {
		var devs []resourceapi.Device
		for i := range n.gpus {
			typ, prod, uuid, idx := "gpu", n.product, fmt.Sprintf("GPU-%s-%d", node, i), int64(i)
			devs = append(devs, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"type": {StringValue: &typ}, "productName": {StringValue: &prod}, "uuid": {StringValue: &uuid}, "index": {IntValue: &idx}},
			})
		}
		nn := node
		sl := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu.nvidia.com"},
			Spec: resourceapi.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: &nn,
				Pool: resourceapi.ResourcePool{Name: node, ResourceSliceCount: 1}, Devices: devs}}
		if _, err := cs.ResourceV1().ResourceSlices().Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// claimController runs kube-controller-manager's ResourceClaim controller,
// which makes each pod's claims from its ResourceClaimTemplates.
func claimController(t *testing.T, cs clientset.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactory(cs, 0)
	c, err := newClaimController(cs, f)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	done := make(chan struct{})
	go func() { c.Run(ctx, 2); close(done) }()
	t.Cleanup(func() { cancel(); <-done; f.Shutdown() })
}

// A real kube-scheduler places pods whose GPUs come through DRA claims
// (ResourceClaimTemplates of the gpu.nvidia.com class, allocated by the
// in-tree DynamicResources plugin) on nodes that have no nvidia.com/gpu,
// only a fake NVIDIA driver's ResourceSlices: an H100 node of 2 GPUs and
// an L40S node of 4. PWR's scores and PowerBudget's estimate are the core
// model's for those GPU models and counts, with the first pod's allocated
// GPUs counted on its node when the second is placed.
func TestDRAPods(t *testing.T) {
	cs, rc := apiServer(t)
	ctx := context.Background()
	specs := []cluster.NodeSpec{
		{Name: "h100", CPUMilli: 96000, MemMiB: 524288, GPUs: 2, GPUModel: "NVIDIA-H100-80GB-HBM3"},
		{Name: "l40s", CPUMilli: 96000, MemMiB: 524288, GPUs: 4, GPUModel: "NVIDIA-L40S"},
	}
	for _, s := range specs {
		bare := s
		bare.GPUs, bare.GPUModel = 0, "" // no nvidia.com/gpu, no product label
		if _, err := cs.CoreV1().Nodes().Create(ctx, nodeObject(bare), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	draDriver(t, cs, map[string]struct {
		product string
		gpus    int
	}{"h100": {"NVIDIA H100 80GB HBM3", 2}, "l40s": {"NVIDIA L40S", 4}})
	tmpl := &resourceapi.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "two-gpus", Namespace: ns},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: []resourceapi.DeviceRequest{{Name: "gpus", Exactly: &resourceapi.ExactDeviceRequest{
				DeviceClassName: "gpu.nvidia.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2}}}}}}}
	if _, err := cs.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claimController(t, cs)

	// The core's view: the same nodes with the slices' GPU counts and
	// models, the pods as 2 whole GPUs each.
	c, err := cluster.New(hw.Default(), specs)
	if err != nil {
		t.Fatal(err)
	}
	task := job.Task{Demand: job.Demand{CPUMilli: 4000, MemMiB: 1024, GPUCount: 2, GPUMilli: 1000}}
	score, err := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}})
	if err != nil {
		t.Fatal(err)
	}
	gate := &policy.PowerGate{Model: power.PWR{}}
	node := func(name string) *cluster.Node {
		for _, n := range c.Nodes {
			if n.Name == name {
				return n
			}
		}
		t.Fatalf("no node %s", name)
		return nil
	}
	explain := func(chosen string) plugins.Explanation {
		other := map[string]string{"h100": "l40s", "l40s": "h100"}[chosen]
		raw := func(name string) int64 { return score.Score(&task, node(name)) }
		return plugins.Explanation{Chosen: plugins.NodeExplanation{Node: chosen, Raw: raw(chosen), Score: 100},
			Next: []plugins.NodeExplanation{{Node: other, Raw: raw(other), Score: 0}}, Feasible: 2}
	}
	// Budget: room for the first pod on the L40S node, not for the second
	// anywhere: the idle cluster, plus the first pod's increase there, plus
	// the second's cheapest increase, less 1 W.
	first := node("l40s")
	if err := c.Allocate(&task, first.ID, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	after1 := gate.ClusterPower(c.Nodes)
	inc2 := min(gate.Increase(&task.Demand, first, []int{2, 3}), gate.Increase(&task.Demand, node("h100"), []int{0, 1}))
	budget := after1 + inc2 - 1
	if err := c.Release(&task); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(draConfig, "BUDGET", fmt.Sprintf("%.0f", float64(budget)), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	startScheduler(t, cs, rc, cfg)

	create := func(name string) {
		t.Helper()
		p := podObject(&job.Task{Demand: job.Demand{CPUMilli: task.CPUMilli, MemMiB: task.MemMiB}}, name, "wattsched-dra")
		tn := "two-gpus"
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: &tn}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpus"}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// PWR: the first pod adds one Xeon socket (15 -> 120 W) and two GPUs
	// from idle to TDP: an L40S 35.6 -> 350 W each, an H100 71.8 -> 700 W
	// (hw/catalog.yaml); the L40S node is cheaper.
	create("dra-1")
	out, err := waitScheduled(cs, "dra-1", 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out.Node != "l40s" {
		t.Fatalf("dra-1 on %q (%s), want l40s", out.Node, out.Message)
	}
	checkExplain(t, cs, "dra-1", explain("l40s"))
	claim := waitAllocated(t, cs, "dra-1")
	if n := len(claim.Status.Allocation.Devices.Results); n != 2 {
		t.Fatalf("dra-1's claim has %d devices allocated, want 2", n)
	}
	// The second pod is held by the budget: the estimate counts the first
	// pod's two L40S GPUs busy, and at least the second's cheapest
	// increase (the L40S node's two free GPUs: no new socket).
	create("dra-2")
	want := fmt.Sprintf("estimated cluster power %.0f W + at least %.0f W for this pod exceeds the budget of %.0f W", float64(after1), float64(inc2), float64(budget))
	var msg string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out, err := waitScheduled(cs, "dra-2", 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if out.Node != "" {
			t.Fatalf("dra-2 placed on %s over the budget", out.Node)
		}
		if msg = out.Message; strings.Contains(msg, want) {
			break
		}
	}
	if !strings.Contains(msg, want) {
		t.Fatalf("dra-2: %q, want %q", msg, want)
	}
	t.Logf("dra-2: %s", msg)

	// import k8s reads the same cluster from the API server: the nodes'
	// GPUs from the slices, dra-1's from its allocated claim, dra-2's from
	// its claim's request (created by the controller, not allocated).
	b, err := k8sdump.Fetch(ctx, liveKubeconfig(t, rc))
	if err != nil {
		t.Fatal(err)
	}
	d, err := k8sdump.ReadWith(bytes.NewReader(b), "live", k8sdump.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(specs, d.Nodes); diff != "" {
		t.Errorf("imported nodes (-want +got):\n%s", diff)
	}
	pods := map[string]string{}
	for _, p := range d.Pods {
		pods[p.Name] = fmt.Sprintf("%d x %d, %s", p.Demand.GPUCount, p.Demand.GPUMilli, strings.SplitN(p.Claims, " ", 2)[1])
	}
	wantPods := map[string]string{"default/dra-1": "2 x 1000, allocated on l40s: gpu-0 gpu-1", "default/dra-2": "2 x 1000, requests 2 x gpu.nvidia.com"}
	if diff := cmp.Diff(wantPods, pods); diff != "" {
		t.Errorf("imported pods (-want +got):\n%s", diff)
	}
}

// waitAllocated waits for the claim DynamicResources allocated for pod's
// "gpus" claim.
func waitAllocated(t *testing.T, cs clientset.Interface, pod string) *resourceapi.ResourceClaim {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Status.ResourceClaimStatuses {
			if s.Name != "gpus" || s.ResourceClaimName == nil {
				continue
			}
			c, err := cs.ResourceV1().ResourceClaims(ns).Get(ctx, *s.ResourceClaimName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Status.Allocation != nil {
				return c
			}
		}
	}
	t.Fatalf("pod %s: no allocated claim", pod)
	return nil
}

// checkExplain compares pod's PWR explanation with want.
func checkExplain(t *testing.T, cs clientset.Interface, pod string, want plugins.Explanation) {
	t.Helper()
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var x plugins.Explanation
	if err := json.Unmarshal([]byte(p.Annotations[plugins.ExplainAnnotation(plugins.PWRName)]), &x); err != nil {
		t.Fatalf("annotation %q: %v", p.Annotations[plugins.ExplainAnnotation(plugins.PWRName)], err)
	}
	if diff := cmp.Diff(want, x); diff != "" {
		t.Errorf("%s: explanation (-want +got):\n%s", pod, diff)
	}
}
