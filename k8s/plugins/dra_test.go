package plugins

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
)

// draFixture is an A100 node of NVIDIA's DRA driver: gpu-0 and gpu-3
// whole (index attributes 0 and 3), GPU 1 in MIG mode (a 3g.40gb and a
// 4g.40gb named gpu-1-mig-...), and the driver's two DeviceClasses.
func draFixture() []runtime.Object {
	str := func(s string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{StringValue: &s} }
	num := func(n int64) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{IntValue: &n} }
	prod := "NVIDIA A100-SXM4-80GB"
	whole := func(i int64) resourceapi.Device {
		return resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"type": str("gpu"), "productName": str(prod), "uuid": str(fmt.Sprintf("GPU-%d", i)), "index": num(i)}}
	}
	mig := func(name, profile string) resourceapi.Device {
		return resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"type": str("mig"), "productName": str(prod), "profile": str(profile), "parentUUID": str("GPU-1"), "uuid": str("MIG-" + name)}}
	}
	node := "a100"
	class := func(name, typ string) *resourceapi.DeviceClass {
		return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
			Expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '" + typ + "'"}}}}}
	}
	return []runtime.Object{
		class("gpu.nvidia.com", "gpu"), class("mig.nvidia.com", "mig"),
		&resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "a100-gpu"}, Spec: resourceapi.ResourceSliceSpec{
			Driver: "gpu.nvidia.com", NodeName: &node, Pool: resourceapi.ResourcePool{Name: "a100", ResourceSliceCount: 1},
			Devices: []resourceapi.Device{whole(3), mig("gpu-1-mig-9-4-4", "3g.40gb"), whole(0), mig("gpu-1-mig-5-0-4", "4g.40gb")}}},
	}
}

func draClaim(name string, class string, count int64, sel string, devices []string, users ...string) *resourceapi.ResourceClaim {
	r := &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}
	if sel != "" {
		r.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: sel}}}
	}
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "r", Exactly: r}}}}}
	if devices != nil {
		a := &resourceapi.AllocationResult{}
		for _, d := range devices {
			a.Devices.Results = append(a.Devices.Results, resourceapi.DeviceRequestAllocationResult{Request: "r", Driver: "gpu.nvidia.com", Pool: "a100", Device: d})
		}
		c.Status.Allocation = a
	}
	for _, u := range users {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: u, UID: types.UID("uid-" + u)})
	}
	return c
}

func draPod(name string, claim string, gpus int64) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	if gpus > 0 {
		p.Spec.Containers[0].Resources.Requests[gpushare.ResourceGPU] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	if claim != "" {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}}
	}
	return p
}

// draStateOf serves objs through a fake client's informers.
func draStateOf(t *testing.T, objs ...runtime.Object) *draState {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(objs...), 0)
	d := newDRAState(f)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer %v did not sync", typ)
		}
	}
	return d
}

// The node's GPUs are its whole-GPU devices and the GPUs its MIG devices
// are cut from (parentUUID), indexed by the driver's index; a pod's GPUs
// are its claims' devices, their GPU indices once allocated.
func TestDRADemand(t *testing.T) {
	objs := append(draFixture(),
		draClaim("two", "gpu.nvidia.com", 2, "", []string{"gpu-3", "gpu-0"}),
		draClaim("pending", "gpu.nvidia.com", 2, "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'", nil),
		draClaim("mig", "mig.nvidia.com", 1, "", []string{"gpu-1-mig-9-4-4"}),
		draClaim("mig-pending", "mig.nvidia.com", 1, "device.attributes['gpu.nvidia.com'].profile == '4g.40gb'", nil),
		draClaim("mig-noprofile", "mig.nvidia.com", 1, "", nil),
		draClaim("shared", "gpu.nvidia.com", 1, "", []string{"gpu-0"}, "a", "b"),
		draClaim("shared-two", "gpu.nvidia.com", 2, "", []string{"gpu-0", "gpu-3"}, "a", "b"),
	)
	d := draStateOf(t, objs...)
	if diff := cmp.Diff(&gpushare.NodeGPUs{Count: 3, Model: "NVIDIA-A100-SXM4-80GB"}, d.nodeGPUs("a100")); diff != "" {
		t.Errorf("node GPUs (-want +got):\n%s", diff)
	}
	cpu := job.Demand{CPUMilli: 2000, MemMiB: 1024}
	with := func(n int, m int64, spec ...string) job.Demand {
		d := cpu
		d.GPUCount, d.GPUMilli, d.GPUSpec = n, m, spec
		return d
	}
	for _, c := range []struct {
		pod     *v1.Pod
		want    job.Demand
		gpus    []int
		viaDRA  bool
		wantErr string
	}{
		// GPUs by index 0 (gpu-0), 1 (the MIG GPU), 2 (gpu-3).
		{pod: draPod("two", "two", 0), want: with(2, 1000), gpus: []int{2, 0}, viaDRA: true},
		{pod: draPod("pending", "pending", 0), want: with(2, 1000, "NVIDIA-A100-SXM4-80GB"), viaDRA: true},
		// 3g: 3 x 1000 / 7 = 428, on GPU 1.
		{pod: draPod("mig", "mig", 0), want: with(1, 428), gpus: []int{1}, viaDRA: true},
		// 4g: 4 x 1000 / 7 = 571.
		{pod: draPod("mig-pending", "mig-pending", 0), want: with(1, 571), viaDRA: true},
		{pod: draPod("mig-noprofile", "mig-noprofile", 0), want: cpu, viaDRA: true, wantErr: "names no MIG profile"},
		// Reserved for a and b; a third pod c makes three: 1000 / 3 = 333.
		{pod: draPod("c", "shared", 0), want: with(1, 333), gpus: []int{0}, viaDRA: true},
		{pod: draPod("a", "shared", 0), want: with(1, 500), gpus: []int{0}, viaDRA: true},
		{pod: draPod("a", "shared-two", 0), want: cpu, viaDRA: true, wantErr: "shared by 2 pods holds 2 GPUs"},
		{pod: draPod("both", "two", 1), want: cpu, viaDRA: true, wantErr: "one pod takes GPUs one way"},
		{pod: draPod("gone", "gone", 0), want: cpu, viaDRA: true, wantErr: `"gone" not found`},
		{pod: draPod("plain", "", 1), want: with(1, 1000)},
	} {
		t.Run(c.pod.Name+"/"+claimOf(c.pod), func(t *testing.T) {
			got, gpus, viaDRA, err := d.demand(c.pod)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("demand (-want +got):\n%s", diff)
			}
			if !cmp.Equal(c.gpus, gpus) || viaDRA != c.viaDRA {
				t.Errorf("gpus %v viaDRA %v, want %v %v", gpus, viaDRA, c.gpus, c.viaDRA)
			}
		})
	}
}

func claimOf(p *v1.Pod) string {
	if len(p.Spec.ResourceClaims) == 0 {
		return "none"
	}
	return *p.Spec.ResourceClaims[0].ResourceClaimName
}

// A placed pod's allocation counts its claims' devices on their GPUs;
// a pod without claims keeps the annotation path.
func TestDRAAllocation(t *testing.T) {
	d := draStateOf(t, append(draFixture(), draClaim("two", "gpu.nvidia.com", 2, "", []string{"gpu-3", "gpu-0"}))...)
	a := gpushare.Allocation{Pod: draPod("two", "two", 0)}
	d.allocation(&a)
	if a.Demand == nil || a.Demand.GPUCount != 2 || !cmp.Equal(a.GPUs, []int{2, 0}) || a.DemandErr != nil {
		t.Errorf("allocation GPUs %v demand %+v err %v, want GPUs [2 0], 2 whole GPUs", a.GPUs, a.Demand, a.DemandErr)
	}
	plain := gpushare.Allocation{Pod: draPod("plain", "", 1)}
	d.allocation(&plain)
	if plain.Demand != nil {
		t.Errorf("a pod without claims got a DRA demand %+v", plain.Demand)
	}
}

// A node's cached state is rebuilt when a ResourceSlice or claim changes,
// although its NodeInfo did not: a driver that publishes its GPUs after
// the node was first seen gives the node its GPUs at the next read.
func TestDRAEpochRebuildsNode(t *testing.T) {
	cs := fake.NewClientset()
	f := informers.NewSharedInformerFactory(cs, 0)
	d := newDRAState(f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	s := &shared{cat: hw.Default(), states: map[string]int32{}, pending: map[types.UID][]int{}, reported: map[string]bool{}, dra: d}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a100"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("32"), v1.ResourceMemory: resource.MustParse("64Gi")}}}
	ni := framework.NewNodeInfo()
	ni.SetNode(node)
	n, err := s.node(ni)
	if err != nil || len(n.GPUFree) != 0 {
		t.Fatalf("before the slice: %d GPUs, err %v; want 0", len(n.GPUFree), err)
	}
	epoch := s.stateEpoch()
	for _, o := range draFixture() {
		if sl, ok := o.(*resourceapi.ResourceSlice); ok {
			if _, err := cs.ResourceV1().ResourceSlices().Create(ctx, sl, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for d.currentEpoch() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	n, err = s.node(ni)
	if err != nil || len(n.GPUFree) != 3 || n.GPUModel != "NVIDIA-A100-SXM4-80GB" {
		t.Fatalf("after the slice: %d GPUs of %q, err %v; want 3 NVIDIA-A100-SXM4-80GB", len(n.GPUFree), n.GPUModel, err)
	}
	if s.stateEpoch() == epoch {
		t.Errorf("the state epoch did not move with the slice: PowerBudget's memo would not recount")
	}
}
