package plugins

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/trace/k8sdump"
)

// draState reads GPUs that come through Dynamic Resource Allocation
// (resource.k8s.io/v1, GA in Kubernetes 1.34) from the scheduler's
// informers: the devices NVIDIA's DRA driver (gpu.nvidia.com) publishes
// in ResourceSlices give a node's GPUs and their model when its
// allocatable counts no nvidia.com/gpu; a pod's ResourceClaims give its
// GPUs: the devices allocated to them once the in-tree DynamicResources
// plugin has allocated, else their requests (count, DeviceClass, the
// productName and MIG profile their selectors pin). DeviceClasses and
// selectors are read by the import's rule (k8sdump.DRAClass,
// k8sdump.DRASelected). The same informers serve DynamicResources, so
// they add no watch of their own.
//
// A node's state is rebuilt when its NodeInfo changes; claims and slices
// change without touching NodeInfos, so each of their events bumps an
// epoch that node entries are checked against (shared.entry).
type draState struct {
	claims  resourcelisters.ResourceClaimLister
	slices  resourcelisters.ResourceSliceLister
	classes resourcelisters.DeviceClassLister
	epoch   atomic.Uint64

	mu       sync.Mutex
	invEpoch uint64
	inv      map[string]*draNode // node name -> its gpu.nvidia.com devices
	devs     map[string]draDev   // pool/device -> device
}

// draNode is a node's GPUs as its ResourceSlices list them.
type draNode struct {
	gpus gpushare.NodeGPUs
}

// draDev is one gpu.nvidia.com device: its type, MIG profile, node, and
// the index of its (parent) GPU on the node.
type draDev struct {
	node, typ, profile string
	gpu                int
}

func newDRAState(f informers.SharedInformerFactory) *draState {
	r := f.Resource().V1()
	d := &draState{claims: r.ResourceClaims().Lister(), slices: r.ResourceSlices().Lister(), classes: r.DeviceClasses().Lister()}
	bump := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { d.epoch.Add(1) },
		UpdateFunc: func(any, any) { d.epoch.Add(1) },
		DeleteFunc: func(any) { d.epoch.Add(1) },
	}
	_, _ = r.ResourceClaims().Informer().AddEventHandler(bump)
	_, _ = r.ResourceSlices().Informer().AddEventHandler(bump)
	_ = r.DeviceClasses().Informer()
	return d
}

// currentEpoch counts the claim and slice events so far (0 without DRA).
func (d *draState) currentEpoch() uint64 {
	if d == nil {
		return 0
	}
	return d.epoch.Load()
}

var draGPUName = regexp.MustCompile(`^gpu-(\d+)`)

// inventory returns the gpu.nvidia.com devices by node and by pool/device,
// rebuilt from the slices once per epoch.
func (d *draState) inventory() (map[string]*draNode, map[string]draDev) {
	epoch := d.epoch.Load()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inv != nil && d.invEpoch == epoch {
		return d.inv, d.devs
	}
	slices, _ := d.slices.List(labels.Everything())
	type gpu struct {
		key   string // uuid, or the device's name
		order int    // its index, minor or the N of gpu-N
		model string
	}
	type pending struct {
		node, key, poolDev, typ, profile string
	}
	phys := map[string]map[string]gpu{} // node -> GPU key -> GPU
	var devs []pending
	for _, sl := range slices {
		if sl.Spec.Driver != k8sdump.DRADriverGPU || sl.Spec.NodeName == nil {
			continue
		}
		node := *sl.Spec.NodeName
		for _, dv := range sl.Spec.Devices {
			str := func(name string) string {
				for _, k := range []string{name, k8sdump.DRADriverGPU + "/" + name} {
					if a, ok := dv.Attributes[resourceapi.QualifiedName(k)]; ok && a.StringValue != nil {
						return *a.StringValue
					}
				}
				return ""
			}
			order := -1
			for _, k := range []string{"index", "minor"} {
				if a, ok := dv.Attributes[resourceapi.QualifiedName(k)]; ok && a.IntValue != nil && order < 0 {
					order = int(*a.IntValue)
				}
			}
			if m := draGPUName.FindStringSubmatch(dv.Name); m != nil && order < 0 {
				order, _ = strconv.Atoi(m[1])
			}
			typ := str("type")
			var key string
			switch typ {
			case k8sdump.DRATypeGPU:
				if key = str("uuid"); key == "" {
					key = dv.Name
				}
			case k8sdump.DRATypeMIG:
				// A MIG device's GPU: its parentUUID, or gpu-N of its name.
				if key = str("parentUUID"); key == "" {
					if m := draGPUName.FindStringSubmatch(dv.Name); m != nil {
						key = "gpu-" + m[1]
					}
				}
				if key == "" {
					continue
				}
			default:
				continue
			}
			if phys[node] == nil {
				phys[node] = map[string]gpu{}
			}
			if g, ok := phys[node][key]; !ok || (g.order < 0 && order >= 0) || typ == k8sdump.DRATypeGPU {
				phys[node][key] = gpu{key: key, order: order, model: k8sdump.ProductLabel(str("productName"))}
			}
			devs = append(devs, pending{node: node, key: key, poolDev: sl.Spec.Pool.Name + "/" + dv.Name, typ: typ, profile: str("profile")})
		}
	}
	inv := map[string]*draNode{}
	index := map[string]map[string]int{}
	for node, gs := range phys {
		list := make([]gpu, 0, len(gs))
		for _, g := range gs {
			list = append(list, g)
		}
		// GPU indices follow the driver's index (ties, and GPUs without
		// one, by key): what the devices are, not the order listed.
		sort.Slice(list, func(a, b int) bool {
			if list[a].order != list[b].order {
				return list[a].order < list[b].order
			}
			return list[a].key < list[b].key
		})
		index[node] = map[string]int{}
		n := &draNode{gpus: gpushare.NodeGPUs{Count: len(list)}}
		for i, g := range list {
			index[node][g.key] = i
			if n.gpus.Model == "" {
				n.gpus.Model = g.model
			}
		}
		inv[node] = n
	}
	byDev := map[string]draDev{}
	for _, p := range devs {
		byDev[p.poolDev] = draDev{node: p.node, typ: p.typ, profile: p.profile, gpu: index[p.node][p.key]}
	}
	d.inv, d.devs, d.invEpoch = inv, byDev, epoch
	return inv, byDev
}

// nodeGPUs are a node's GPUs from its ResourceSlices, nil without any.
func (d *draState) nodeGPUs(node string) *gpushare.NodeGPUs {
	if d == nil {
		return nil
	}
	inv, _ := d.inventory()
	if n := inv[node]; n != nil {
		g := n.gpus
		return &g
	}
	return nil
}

// allocation sets a placed pod's demand from its claims, and its GPUs
// from their allocation when they are allocated.
func (d *draState) allocation(a *gpushare.Allocation) {
	if d == nil || len(a.Pod.Spec.ResourceClaims) == 0 {
		return
	}
	dem, gpus, viaDRA, err := d.demand(a.Pod)
	if !viaDRA && err == nil {
		return
	}
	a.Demand, a.DemandErr = &dem, err
	if gpus != nil {
		a.GPUs, a.IndexErr = gpus, nil
	}
}

func celExprs(sels []resourceapi.DeviceSelector) []string {
	var out []string
	for _, s := range sels {
		if s.CEL != nil {
			out = append(out, s.CEL.Expression)
		}
	}
	return out
}

// demand is the pod's demand with the GPUs of its claims: whole GPUs of
// a gpu-type class, MIG devices as the share of their slices (the
// import's rule), a claim named by several pods (status.reservedFor)
// shared between them. gpus are the GPU indices of its allocated devices
// (nil while any claim is unallocated); viaDRA says the pod takes GPUs
// through claims. A pod with nvidia.com/gpu or a GPU annotation beside
// GPU claims, a claim not created yet, or devices the slices lack is an
// error (its CPU and memory are still in the demand).
func (d *draState) demand(pod *v1.Pod) (dem job.Demand, gpus []int, viaDRA bool, err error) {
	dem, err = gpushare.Demand(pod)
	if err != nil {
		return dem, nil, false, err
	}
	cpuMem := job.Demand{CPUMilli: dem.CPUMilli, MemMiB: dem.MemMiB}
	fail := func(format string, args ...any) (job.Demand, []int, bool, error) {
		return cpuMem, nil, true, fmt.Errorf(format, args...)
	}
	generated := map[string]string{}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			generated[s.Name] = *s.ResourceClaimName
		}
	}
	_, devs := d.inventory()
	whole, migSlices, migOf, sharedBy := 0, 0, 0, 1
	var products []string
	allocated := true
	addMIG := func(claim, prof string) error {
		mp, ok := k8sdump.LookupMIG(prof)
		if !ok {
			return fmt.Errorf("ResourceClaim %s: MIG profile %q is not in the table", claim, prof)
		}
		if migOf != 0 && migOf != mp.Of {
			return fmt.Errorf("ResourceClaim %s: MIG profiles of GPUs of %d and %d slices", claim, migOf, mp.Of)
		}
		migOf, migSlices = mp.Of, migSlices+mp.Slices
		return nil
	}
	for _, ref := range pod.Spec.ResourceClaims {
		name := ""
		direct := ref.ResourceClaimName != nil
		if direct {
			name = *ref.ResourceClaimName
		} else {
			name = generated[ref.Name]
		}
		if name == "" {
			return fail("claim %q: its ResourceClaim is not created yet", ref.Name)
		}
		c, gerr := d.claims.ResourceClaims(pod.Namespace).Get(name)
		if gerr != nil {
			return fail("ResourceClaim %s/%s: %v", pod.Namespace, name, gerr)
		}
		key := pod.Namespace + "/" + name
		for _, r := range c.Spec.Devices.Requests {
			var sels []resourceapi.DeviceSelector
			switch {
			case r.Exactly != nil:
				sels = r.Exactly.Selectors
			case len(r.FirstAvailable) > 0:
				sels = r.FirstAvailable[0].Selectors
			}
			if p, _ := k8sdump.DRASelected(celExprs(sels)); p != "" {
				products = append(products, p)
			}
		}
		if direct {
			users := map[string]bool{string(pod.UID): true}
			for _, u := range c.Status.ReservedFor {
				if u.Resource == "pods" {
					users[string(u.UID)] = true
				}
			}
			sharedBy = max(sharedBy, len(users))
		}
		if a := c.Status.Allocation; a != nil {
			for _, res := range a.Devices.Results {
				if res.Driver != k8sdump.DRADriverGPU {
					continue
				}
				dv, ok := devs[res.Pool+"/"+res.Device]
				if !ok {
					return fail("ResourceClaim %s: allocated device %s of pool %s is in no ResourceSlice", key, res.Device, res.Pool)
				}
				switch dv.typ {
				case k8sdump.DRATypeGPU:
					whole++
				case k8sdump.DRATypeMIG:
					if err := addMIG(key, dv.profile); err != nil {
						return fail("%v", err)
					}
				default:
					continue
				}
				gpus = append(gpus, dv.gpu)
			}
			continue
		}
		allocated = false
		for _, r := range c.Spec.Devices.Requests {
			e := resourceapi.ExactDeviceRequest{}
			switch {
			case r.Exactly != nil:
				e = *r.Exactly
			case len(r.FirstAvailable) > 0:
				f := r.FirstAvailable[0]
				e = resourceapi.ExactDeviceRequest{DeviceClassName: f.DeviceClassName, Selectors: f.Selectors, AllocationMode: f.AllocationMode, Count: f.Count}
			}
			cl, cerr := d.classes.Get(e.DeviceClassName)
			if cerr != nil {
				return fail("ResourceClaim %s: DeviceClass %q: %v", key, e.DeviceClassName, cerr)
			}
			driver, typ := k8sdump.DRAClass(cl.Name, celExprs(cl.Spec.Selectors))
			if driver != k8sdump.DRADriverGPU || (typ != k8sdump.DRATypeGPU && typ != k8sdump.DRATypeMIG) {
				continue
			}
			if e.AllocationMode == resourceapi.DeviceAllocationModeAll {
				return fail("ResourceClaim %s: request %s asks for all devices of %s: how many is unknown before allocation", key, r.Name, e.DeviceClassName)
			}
			n := int(max(e.Count, 1))
			if typ == k8sdump.DRATypeGPU {
				whole += n
				continue
			}
			_, prof := k8sdump.DRASelected(celExprs(e.Selectors))
			if prof == "" {
				return fail("ResourceClaim %s: request %s of %s names no MIG profile (device.attributes['%s'].profile == '...')", key, r.Name, e.DeviceClassName, k8sdump.DRADriverGPU)
			}
			for range n {
				if err := addMIG(key, prof); err != nil {
					return fail("%v", err)
				}
			}
		}
	}
	if whole == 0 && migSlices == 0 {
		return dem, nil, false, nil
	}
	if dem.GPUCount > 0 {
		return fail("GPUs through ResourceClaims beside %s or %s: one pod takes GPUs one way", gpushare.ResourceGPU, gpushare.AnnGPUMilli)
	}
	if whole > 0 && migSlices > 0 {
		return fail("whole GPUs and MIG devices through ResourceClaims: not modelled together")
	}
	if whole > 0 {
		dem.GPUCount, dem.GPUMilli = whole, job.MilliPerGPU
	} else {
		n, m, serr := k8sdump.MIGShare(migSlices, migOf)
		if serr != nil {
			return fail("MIG devices through ResourceClaims: %v", serr)
		}
		dem.GPUCount, dem.GPUMilli = n, m
		if n == 1 && len(gpus) > 1 {
			// Devices of one GPU's share: on their parent GPU.
			gpus = gpus[:1]
		}
	}
	if sharedBy > 1 {
		if dem.GPUCount > 1 {
			return fail("a ResourceClaim shared by %d pods holds %d GPUs: a share of several GPUs is not modelled", sharedBy, dem.GPUCount)
		}
		dem.GPUMilli = max(dem.GPUMilli/int64(sharedBy), 1)
	}
	if len(products) > 0 {
		sort.Strings(products)
		for i, p := range products {
			if i == 0 || p != products[i-1] {
				dem.GPUSpec = append(dem.GPUSpec, p)
			}
		}
	}
	if verr := dem.Validate(); verr != nil {
		return fail("GPUs through ResourceClaims: %v", verr)
	}
	if !allocated {
		gpus = nil
	}
	return dem, gpus, true, nil
}
