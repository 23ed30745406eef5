package k8sdump

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/job"
)

// Dynamic Resource Allocation (resource.k8s.io/v1, GA in Kubernetes 1.34):
// a pod names ResourceClaims (or ResourceClaimTemplates that the control
// plane turns into one claim per pod) in spec.resourceClaims; a claim
// requests devices of a DeviceClass; drivers publish their devices in
// ResourceSlices; the scheduler writes the devices it allocated in the
// claim's status.allocation. NVIDIA's DRA driver (k8s-dra-driver-gpu) is
// the driver gpu.nvidia.com; its kubelet plugin publishes whole GPUs and
// MIG devices with the attributes below (cmd/gpu-kubelet-plugin/
// deviceinfo.go: "type" is "gpu" or "mig", "productName" the NVML name,
// "profile" a MIG device's profile, "parentUUID" its GPU's "uuid"; older
// releases also publish "index" and "minor"), and its chart installs the
// DeviceClasses gpu.nvidia.com and mig.nvidia.com, whose CEL selectors
// are device.driver == 'gpu.nvidia.com' && device.attributes
// ['gpu.nvidia.com'].type == 'gpu' (or 'mig').
const (
	// DRADriverGPU is NVIDIA's DRA driver's name: its ResourceSlices'
	// spec.driver and its devices' attribute domain.
	DRADriverGPU = "gpu.nvidia.com"
	// DRAClassGPU is the driver's DeviceClass of whole GPUs.
	DRAClassGPU = "gpu.nvidia.com"
	// DRAClassMIG is the driver's DeviceClass of MIG devices.
	DRAClassMIG    = "mig.nvidia.com"
	draTypeGPU     = "gpu"
	draTypeMIG     = "mig"
	draKindClaim   = "ResourceClaim"
	draKindTmpl    = "ResourceClaimTemplate"
	draKindClass   = "DeviceClass"
	draKindSlice   = "ResourceSlice"
	draAllocAll    = "All"
	draAllocExact  = "ExactCount"
	draMaxRequests = 64
)

// isDRAKind reports whether kind is one of the resource.k8s.io objects
// the import reads.
func isDRAKind(kind string) bool {
	switch kind {
	case draKindClaim, draKindTmpl, draKindClass, draKindSlice:
		return true
	}
	return false
}

// podClaimRef is one entry of a pod's spec.resourceClaims.
type podClaimRef struct {
	Name                      string `json:"name"`
	ResourceClaimName         string `json:"resourceClaimName"`
	ResourceClaimTemplateName string `json:"resourceClaimTemplateName"`
}

// podClaimStatus is one entry of a pod's status.resourceClaimStatuses: the
// claim generated for a template.
type podClaimStatus struct {
	Name              string `json:"name"`
	ResourceClaimName string `json:"resourceClaimName"`
}

type draMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type draSelector struct {
	CEL *struct {
		Expression string `json:"expression"`
	} `json:"cel"`
}

// draExact is a request for devices of one class (v1 "exactly", a
// firstAvailable alternative, or a v1beta1 request's own fields).
type draExact struct {
	Name            string        `json:"name"`
	DeviceClassName string        `json:"deviceClassName"`
	AllocationMode  string        `json:"allocationMode"`
	Count           int64         `json:"count"`
	Selectors       []draSelector `json:"selectors"`
}

type draRequest struct {
	draExact
	Exactly        *draExact  `json:"exactly"`
	FirstAvailable []draExact `json:"firstAvailable"`
}

type draClaimSpec struct {
	Devices draDeviceClaim `json:"devices"`
}

type draDeviceClaim struct {
	Requests []draRequest `json:"requests"`
}

type draResult struct {
	Request string `json:"request"`
	Driver  string `json:"driver"`
	Pool    string `json:"pool"`
	Device  string `json:"device"`
}

// draAllocation is a ResourceClaim's status.allocation.
type draAllocation struct {
	Devices struct {
		Results []draResult `json:"results"`
	} `json:"devices"`
}

// draDevice is one device of a ResourceSlice.
type draDevice struct {
	Name       string             `json:"name"`
	Attributes map[string]draAttr `json:"attributes"`
	Capacity   map[string]struct {
		Value string `json:"value"`
	} `json:"capacity"`
	ConsumesCounters json.RawMessage `json:"consumesCounters"`
}

// draAttr is a device attribute: one of its typed values.
type draAttr struct {
	Int     *int64  `json:"int"`
	Bool    *bool   `json:"bool"`
	String  *string `json:"string"`
	Version *string `json:"version"`
}

// attr reads a device attribute by its name, qualified with the driver's
// domain or not (both spellings are valid and mean the same).
func (d *draDevice) attr(driver, name string) (draAttr, bool) {
	if a, ok := d.Attributes[name]; ok {
		return a, true
	}
	a, ok := d.Attributes[driver+"/"+name]
	return a, ok
}

func (d *draDevice) str(driver, name string) string {
	if a, ok := d.attr(driver, name); ok && a.String != nil {
		return *a.String
	}
	return ""
}

// draGPU is a device of gpu.nvidia.com in the cluster model's terms.
type draGPU struct {
	node    string
	name    string
	typ     string // gpu, mig, or another type of the driver
	model   string // the node label spelling: NVIDIA-A100-SXM4-80GB
	profile string // MIG devices
	parent  string // MIG devices: the GPU's uuid, or gpu-N from the name
	uuid    string
	dynamic bool // consumes shared counters: one of several possible placements
	// MIG devices: the minor of the GPU it is cut from and its start
	// memory slice (its lowest memorySliceN capacity, or the start in its
	// name gpu-<minor>-mig-<profile id>-<start>-<size>); -1 unknown.
	parentMinor, start int
}

// ProductLabel turns the DRA driver's productName (NVML's name, "NVIDIA
// A100-SXM4-80GB") into GPU feature discovery's nvidia.com/gpu.product
// spelling ("NVIDIA-A100-SXM4-80GB": spaces become dashes), which the
// catalog knows as aliases.
func ProductLabel(productName string) string {
	return strings.Join(strings.Fields(productName), "-")
}

// draClass is a DeviceClass: what its selectors pick.
type draClass struct {
	driver string // the driver its selector names, "" none
	typ    string // the type attribute it selects, "" none
}

// draClaim is a claim or a template's claim, checked.
type draClaim struct {
	kind, key string // "ResourceClaim", "ml/x"
	item      int
	spec      draClaimSpec
	results   []draResult // nil: not allocated
	allocated bool
	problem   *fieldErr // why it cannot be read, nil if it can
	users     []string  // pods naming it directly (resourceClaimName), item order
	userNodes []string  // their nodes ("" not bound)
}

// draCtx is the dump's DRA objects.
type draCtx struct {
	classes   map[string]*draClass
	devices   map[string]*draGPU   // driver/pool/device -> device
	nodeGPUs  map[string][]*draGPU // node -> gpu.nvidia.com devices, slice order
	claims    map[string]*draClaim // namespace/name
	templates map[string]*draClaim
}

var (
	celDriver = regexp.MustCompile(`device\.driver\s*==\s*['"]([^'"]+)['"]`)
	celType   = regexp.MustCompile(`device\.attributes\[['"]([^'"]+)['"]\]\.type\s*==\s*['"]([^'"]+)['"]`)
	celString = func(attr string) *regexp.Regexp {
		return regexp.MustCompile(`device\.attributes\[['"][^'"]+['"]\]\.` + attr + `\s*==\s*['"]([^'"]+)['"]`)
	}
	celProduct = celString("productName")
	celProfile = celString("profile")
	migName    = regexp.MustCompile(`^(gpu-\d+)-mig-`)
	migPlaced  = regexp.MustCompile(`^gpu-(\d+)-mig-\d+-(\d+)-\d+$`)
	memSlice   = regexp.MustCompile(`^(?:gpu\.nvidia\.com/)?memorySlice(\d+)$`)
)

// DRAClass says what a DeviceClass selects, from its CEL selectors'
// expressions: the driver (device.driver == '...') and the device type
// NVIDIA's classes test (device.attributes['...'].type == '...'); "" when
// a selector does not say. The driver's own class names (gpu.nvidia.com,
// mig.nvidia.com) are known without their selectors. The kube-scheduler
// plugins read classes by the same rule.
func DRAClass(name string, exprs []string) (driver, typ string) {
	for _, e := range exprs {
		if m := celDriver.FindStringSubmatch(e); m != nil {
			driver = m[1]
		}
		if m := celType.FindStringSubmatch(e); m != nil {
			typ = m[2]
			if driver == "" {
				driver = m[1]
			}
		}
	}
	if driver == "" && typ == "" {
		switch name {
		case DRAClassGPU:
			return DRADriverGPU, draTypeGPU
		case DRAClassMIG:
			return DRADriverGPU, draTypeMIG
		}
	}
	return driver, typ
}

// DRASelected reads what a request's CEL selectors pin: the GPU product
// (attributes productName == '...', in the node label's spelling) and
// the MIG profile (profile == '...'); "" when they do not. Other
// expressions are not evaluated.
func DRASelected(exprs []string) (product, profile string) {
	for _, e := range exprs {
		if m := celProduct.FindStringSubmatch(e); m != nil {
			product = ProductLabel(m[1])
		}
		if m := celProfile.FindStringSubmatch(e); m != nil {
			profile = m[1]
		}
	}
	return product, profile
}

// DRA device types of NVIDIA's driver (the "type" attribute).
const (
	DRATypeGPU = draTypeGPU
	DRATypeMIG = draTypeMIG
)

// MIGShare is the cluster model's demand of MIG devices adding up to
// slices compute slices of GPUs of of: the rule of the MIG table
// (docs/formats.md), shared by the import and the kube-scheduler plugins.
func MIGShare(slices, of int) (count int, milli int64, err error) {
	return migShare(slices, of)
}

func exprs(sels []draSelector) []string {
	var out []string
	for _, s := range sels {
		if s.CEL != nil {
			out = append(out, s.CEL.Expression)
		}
	}
	return out
}

// readDRA reads the dump's DRA objects (items of those kinds). A malformed
// one is an error naming its item: the cluster's devices would be wrong.
// Claims and templates that name an unknown DeviceClass are kept with
// their problem; the pods that use them are skipped.
func readDRA(items []object) (*draCtx, []fieldItemErr) {
	dc := &draCtx{classes: map[string]*draClass{}, devices: map[string]*draGPU{}, nodeGPUs: map[string][]*draGPU{}, claims: map[string]*draClaim{}, templates: map[string]*draClaim{}}
	var errs []fieldItemErr
	for i := range items {
		o := &items[i]
		if !isDRAKind(o.Kind) {
			continue
		}
		if o.Metadata.Name == "" {
			errs = append(errs, fieldItemErr{i, fieldErr{"metadata.name", fmt.Errorf("%s without a name", o.Kind)}})
			continue
		}
		key := o.Metadata.Namespace + "/" + o.Metadata.Name
		// unmarshal reads one raw field; absent is empty.
		unmarshal := func(field string, raw json.RawMessage, v any) bool {
			if len(raw) == 0 {
				return true
			}
			if err := json.Unmarshal(raw, v); err != nil {
				errs = append(errs, fieldItemErr{i, fieldErr{field, err}})
				return false
			}
			return true
		}
		switch o.Kind {
		case draKindClass:
			var sels []draSelector
			if !unmarshal("spec.selectors", o.Spec.Selectors, &sels) {
				continue
			}
			d, t := DRAClass(o.Metadata.Name, exprs(sels))
			dc.classes[o.Metadata.Name] = &draClass{driver: d, typ: t}
		case draKindSlice:
			if o.Spec.Driver != DRADriverGPU {
				continue
			}
			var pool struct {
				Name string `json:"name"`
			}
			var devices []draDevice
			if !unmarshal("spec.pool", o.Spec.Pool, &pool) || !unmarshal("spec.devices", o.Spec.Devices, &devices) {
				continue
			}
			for k, dv := range devices {
				g := &draGPU{node: o.Spec.NodeName, name: dv.Name, typ: dv.str(DRADriverGPU, "type"), model: ProductLabel(dv.str(DRADriverGPU, "productName")),
					profile: dv.str(DRADriverGPU, "profile"), parent: dv.str(DRADriverGPU, "parentUUID"), uuid: dv.str(DRADriverGPU, "uuid"),
					dynamic: len(dv.ConsumesCounters) > 0 && string(dv.ConsumesCounters) != "null"}
				if g.typ == draTypeMIG && g.parent == "" {
					if m := migName.FindStringSubmatch(dv.Name); m != nil {
						g.parent = m[1]
					}
				}
				if g.uuid == "" {
					g.uuid = dv.Name
				}
				g.parentMinor, g.start = migPlacement(&dv)
				dkey := o.Spec.Driver + "/" + pool.Name + "/" + dv.Name
				if _, dup := dc.devices[dkey]; dup {
					errs = append(errs, fieldItemErr{i, fieldErr{fmt.Sprintf("spec.devices[%d].name", k), fmt.Errorf("device %s of pool %s is also in another slice", dv.Name, pool.Name)}})
					continue
				}
				dc.devices[dkey] = g
				if g.node != "" {
					dc.nodeGPUs[g.node] = append(dc.nodeGPUs[g.node], g)
				}
			}
		case draKindClaim:
			c := &draClaim{kind: o.Kind, key: key, item: i}
			var a *draAllocation
			if !unmarshal("spec.devices", o.Spec.Devices, &c.spec.Devices) || !unmarshal("status.allocation", o.Status.Allocation, &a) {
				continue
			}
			if a != nil {
				c.allocated, c.results = true, a.Devices.Results
			}
			dc.claims[key] = c
		case draKindTmpl:
			c := &draClaim{kind: o.Kind, key: key, item: i}
			if !unmarshal("spec.spec", o.Spec.Spec, &c.spec) {
				continue
			}
			dc.templates[key] = c
		}
	}
	// Requests are checked once every class is known.
	for _, m := range []map[string]*draClaim{dc.claims, dc.templates} {
		for _, c := range m {
			c.problem = dc.check(c)
		}
	}
	return dc, errs
}

// fieldItemErr is a field error of an item.
type fieldItemErr struct {
	item int
	fieldErr
}

// requests lists a claim's requests as single-class requests: v1's
// exactly, the first of firstAvailable (the one the scheduler tries
// first), or v1beta1's fields on the request itself; with the field path
// of each.
func (c *draClaim) requests() ([]draExact, []string) {
	prefix := "spec.devices.requests"
	if c.kind == draKindTmpl {
		prefix = "spec.spec.devices.requests"
	}
	var out []draExact
	var paths []string
	for k, r := range c.spec.Devices.Requests {
		path := fmt.Sprintf("%s[%d]", prefix, k)
		e := r.draExact
		switch {
		case r.Exactly != nil:
			e, path = *r.Exactly, path+".exactly"
			e.Name = r.Name
		case len(r.FirstAvailable) > 0:
			e, path = r.FirstAvailable[0], path+".firstAvailable[0]"
		}
		out = append(out, e)
		paths = append(paths, path)
	}
	return out, paths
}

// check says what is wrong with a claim, nil if nothing: a request of a
// DeviceClass the dump lacks, a count out of range.
func (dc *draCtx) check(c *draClaim) *fieldErr {
	reqs, paths := c.requests()
	if len(reqs) > draMaxRequests {
		return &fieldErr{"spec.devices.requests", fmt.Errorf("%d requests: want at most %d", len(reqs), draMaxRequests)}
	}
	for k, r := range reqs {
		if _, ok := dc.classes[r.DeviceClassName]; !ok {
			return &fieldErr{paths[k] + ".deviceClassName", fmt.Errorf("DeviceClass %q is not in the dump (kubectl get deviceclasses): what its devices are is unknown", r.DeviceClassName)}
		}
		if r.Count < 0 || r.Count > 64 {
			return &fieldErr{paths[k] + ".count", fmt.Errorf("%d devices: want 1..64", r.Count)}
		}
		if r.AllocationMode != "" && r.AllocationMode != draAllocExact && r.AllocationMode != draAllocAll {
			return &fieldErr{paths[k] + ".allocationMode", fmt.Errorf("%q: want ExactCount or All", r.AllocationMode)}
		}
	}
	return nil
}

// users records, for each claim a pod names directly (resourceClaimName),
// the pods that name it and their nodes: such a claim is shared by them.
func (dc *draCtx) addUser(ns string, ref podClaimRef, pod, node string) {
	if ref.ResourceClaimName == "" {
		return
	}
	if c, ok := dc.claims[ns+"/"+ref.ResourceClaimName]; ok {
		c.users = append(c.users, pod)
		c.userNodes = append(c.userNodes, node)
	}
}

// allocNode is the node of a claim's allocated gpu.nvidia.com devices, ""
// when not allocated or on none.
func (dc *draCtx) allocNode(c *draClaim) string {
	for _, r := range c.results {
		if g, ok := dc.devices[r.Driver+"/"+r.Pool+"/"+r.Device]; ok && g.node != "" {
			return g.node
		}
	}
	return ""
}

// sharedAcrossNodes says, for a claim several pods share, whether they
// (or the claim's allocation) are on different nodes: a device is on one
// node, so the dump does not add up.
func (dc *draCtx) sharedAcrossNodes(c *draClaim) string {
	nodes := map[string][]string{}
	if n := dc.allocNode(c); n != "" {
		nodes[n] = append(nodes[n], "its allocation")
	}
	for k, n := range c.userNodes {
		if n != "" {
			nodes[n] = append(nodes[n], c.users[k])
		}
	}
	if len(nodes) < 2 {
		return ""
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for k, n := range names {
		parts[k] = fmt.Sprintf("%s on %s", strings.Join(nodes[n], ", "), n)
	}
	return fmt.Sprintf("shared by pods on different nodes (%s): its devices are on one node; each pod keeps its share", strings.Join(parts, "; "))
}

// migPlacement reads a MIG device's GPU minor and start memory slice
// (-1 when unknown).
func migPlacement(dv *draDevice) (minor, start int) {
	minor, start = -1, -1
	if m := migPlaced.FindStringSubmatch(dv.Name); m != nil {
		fmt.Sscanf(m[1], "%d", &minor)
		fmt.Sscanf(m[2], "%d", &start)
	}
	lowest := -1
	for k := range dv.Capacity {
		if m := memSlice.FindStringSubmatch(k); m != nil {
			var n int
			fmt.Sscanf(m[1], "%d", &n)
			if lowest < 0 || n < lowest {
				lowest = n
			}
		}
	}
	if lowest >= 0 {
		start = lowest
	}
	return minor, start
}

// nodeGPUs returns what a node's gpu.nvidia.com devices say: its physical
// GPUs (whole-GPU devices and the GPUs MIG devices are cut from), their
// model, and its MIG devices as a NodeMIG ("dra" strategy), nil if none.
func (dc *draCtx) nodeSpec(node string) (gpus int, model string, mig *nodeMIG, problem string) {
	devs := dc.nodeGPUs[node]
	if len(devs) == 0 {
		return 0, "", nil, ""
	}
	phys := map[string]bool{}
	migs := map[string]int{}
	dynamic := false
	// The MIG devices at their published placements, per GPU minor.
	placed := map[int][]cluster.MIGSlot{}
	exact := true
	for _, g := range devs {
		switch g.typ {
		case draTypeGPU:
			phys[g.uuid] = true
		case draTypeMIG:
			phys[g.parent] = true
			migs[g.profile]++
			dynamic = dynamic || g.dynamic
			if g.parentMinor < 0 || g.start < 0 {
				exact = false
			}
			prof := g.profile
			if p, ok := LookupMIG(prof); ok {
				prof = p.Name
			}
			placed[g.parentMinor] = append(placed[g.parentMinor], cluster.MIGSlot{Profile: prof, Start: g.start})
		default:
			continue
		}
		switch {
		case model == "":
			model = g.model
		case g.model != model && problem == "":
			problem = fmt.Sprintf("ResourceSlices of %s list GPUs of two products (%s, %s): the node is modelled as %s", DRADriverGPU, model, g.model, model)
		}
	}
	// A MIG device's parent is named by its uuid, the GPU's own device by
	// its uuid too: a GPU published both ways counts once.
	if len(migs) > 0 {
		profs := make([]string, 0, len(migs))
		for p := range migs {
			profs = append(profs, p)
		}
		sort.Strings(profs)
		mig = &nodeMIG{NodeMIG: NodeMIG{Node: node, Strategy: "dra"}}
		for _, p := range profs {
			mig.Instances = append(mig.Instances, fmt.Sprintf("%d x %s", migs[p], p))
		}
		if dynamic {
			mig.Strategy = StrategyDRADynamic
		}
		if exact && !dynamic {
			minors := make([]int, 0, len(placed))
			for m := range placed {
				minors = append(minors, m)
			}
			sort.Ints(minors)
			for _, m := range minors {
				slots := placed[m]
				sort.Slice(slots, func(a, b int) bool { return slots[a].Start < slots[b].Start })
				mig.exact = append(mig.exact, slots)
			}
		}
	}
	return len(phys), model, mig, problem
}

// podDRA adds the GPUs a pod's claims give it to p.Demand. It returns the
// warnings of what was left out, and a field error when the pod cannot be
// read (a claim or template the dump lacks, a claim that cannot be read,
// GPUs beside device-plugin GPUs, a share of several GPUs).
func (dc *draCtx) podDRA(o object, p *Pod, nc *nodeCtx) ([]string, *fieldErr) {
	refs := o.Spec.ResourceClaims
	if len(refs) == 0 {
		return nil, nil
	}
	var warns []string
	ns := o.Metadata.Namespace
	generated := map[string]string{}
	for _, s := range o.Status.ResourceClaimStatuses {
		generated[s.Name] = s.ResourceClaimName
	}
	var whole int
	var migSlices, migOf int
	var migs, models, desc []string
	sharedBy := 1
	for k, ref := range refs {
		field := fmt.Sprintf("spec.resourceClaims[%d]", k)
		var c *draClaim
		switch {
		case ref.ResourceClaimName != "":
			c = dc.claims[ns+"/"+ref.ResourceClaimName]
			if c == nil {
				return nil, &fieldErr{field + ".resourceClaimName", fmt.Errorf("ResourceClaim %s/%s is not in the dump (kubectl get resourceclaims -A): its devices are unknown", ns, ref.ResourceClaimName)}
			}
			if n := len(c.users); n > sharedBy {
				sharedBy = n
			}
		case ref.ResourceClaimTemplateName != "":
			if g := generated[ref.Name]; g != "" {
				c = dc.claims[ns+"/"+g]
			}
			if c == nil {
				c = dc.templates[ns+"/"+ref.ResourceClaimTemplateName]
			}
			if c == nil {
				return nil, &fieldErr{field + ".resourceClaimTemplateName", fmt.Errorf("ResourceClaimTemplate %s/%s is not in the dump (kubectl get resourceclaimtemplates -A), nor the claim made from it: its devices are unknown", ns, ref.ResourceClaimTemplateName)}
			}
		default:
			return nil, &fieldErr{field, fmt.Errorf("claim %q names neither a ResourceClaim nor a ResourceClaimTemplate", ref.Name)}
		}
		if c.problem != nil {
			return nil, &fieldErr{field, fmt.Errorf("%s %s (items[%d]): %s: %w", c.kind, c.key, c.item, c.problem.field, c.problem.err)}
		}
		reqs, _ := c.requests()
		for _, r := range reqs {
			if m, _ := DRASelected(exprs(r.Selectors)); m != "" {
				models = append(models, m)
			}
		}
		addMIG := func(prof string) *fieldErr {
			mp, ok := LookupMIG(prof)
			if !ok {
				return &fieldErr{field, fmt.Errorf("%s %s: MIG profile %q is not in the table (docs/formats.md)", c.kind, c.key, prof)}
			}
			if migOf != 0 && migOf != mp.Of {
				return &fieldErr{field, fmt.Errorf("%s %s: MIG profiles of GPUs of %d and %d slices", c.kind, c.key, migOf, mp.Of)}
			}
			migOf = mp.Of
			migSlices += mp.Slices
			migs = append(migs, "1 x "+mp.Name)
			return nil
		}
		if c.allocated {
			var names []string
			for _, r := range c.results {
				if r.Driver != DRADriverGPU {
					warns = append(warns, fmt.Sprintf("%s %s: device %s of driver %s, which wattsched does not model: left out", c.kind, c.key, r.Device, r.Driver))
					continue
				}
				g, ok := dc.devices[r.Driver+"/"+r.Pool+"/"+r.Device]
				if !ok {
					return nil, &fieldErr{field, fmt.Errorf("%s %s (items[%d]): allocated device %s of pool %s is in no ResourceSlice of the dump (kubectl get resourceslices)", c.kind, c.key, c.item, r.Device, r.Pool)}
				}
				switch g.typ {
				case draTypeGPU:
					whole++
				case draTypeMIG:
					if ferr := addMIG(g.profile); ferr != nil {
						return nil, ferr
					}
				default:
					warns = append(warns, fmt.Sprintf("%s %s: device %s of type %q, which wattsched does not model: left out", c.kind, c.key, r.Device, g.typ))
					continue
				}
				names = append(names, r.Device)
			}
			desc = append(desc, fmt.Sprintf("%s allocated on %s: %s", c.key, dc.allocNode(c), strings.Join(names, " ")))
			continue
		}
		for _, r := range reqs {
			cl := dc.classes[r.DeviceClassName]
			if cl.driver != DRADriverGPU || (cl.typ != draTypeGPU && cl.typ != draTypeMIG) {
				warns = append(warns, fmt.Sprintf("%s %s: request %s of DeviceClass %s (devices of %q, type %q), which wattsched does not model: left out", c.kind, c.key, r.Name, r.DeviceClassName, cl.driver, cl.typ))
				continue
			}
			n := int(max(r.Count, 1))
			if r.AllocationMode == draAllocAll {
				n = 0
				for _, g := range dc.nodeGPUs[p.Node] {
					if g.typ == cl.typ {
						n++
					}
				}
				if n == 0 {
					return nil, &fieldErr{field, fmt.Errorf("%s %s: request %s asks for all devices of %s and is not allocated: how many is unknown before the pod is bound to a node with ResourceSlices", c.kind, c.key, r.Name, r.DeviceClassName)}
				}
			}
			if cl.typ == draTypeGPU {
				whole += n
				desc = append(desc, fmt.Sprintf("%s requests %d x %s", c.key, n, r.DeviceClassName))
				continue
			}
			_, prof := DRASelected(exprs(r.Selectors))
			if prof == "" {
				return nil, &fieldErr{field, fmt.Errorf("%s %s: request %s of DeviceClass %s names no MIG profile (a selector device.attributes['%s'].profile == '...') and is not allocated: its size is unknown", c.kind, c.key, r.Name, r.DeviceClassName, DRADriverGPU)}
			}
			for range n {
				if ferr := addMIG(prof); ferr != nil {
					return nil, ferr
				}
			}
			desc = append(desc, fmt.Sprintf("%s requests %d x %s", c.key, n, prof))
		}
	}
	if whole == 0 && migSlices == 0 {
		return warns, nil
	}
	field := "spec.resourceClaims"
	if p.Demand.GPUCount > 0 {
		return nil, &fieldErr{field, fmt.Errorf("GPUs through claims (%s) beside GPUs of the device plugin or an annotation: one pod takes GPUs one way", strings.Join(desc, "; "))}
	}
	if whole > 0 && migSlices > 0 {
		return nil, &fieldErr{field, fmt.Errorf("whole GPUs and MIG devices through claims (%s): not modelled together", strings.Join(desc, "; "))}
	}
	if whole > 64 {
		return nil, &fieldErr{field, fmt.Errorf("%d GPUs: want at most 64", whole)}
	}
	switch {
	case whole > 0:
		p.Demand.GPUCount, p.Demand.GPUMilli = whole, job.MilliPerGPU
	default:
		n, m, err := migShare(migSlices, migOf)
		if err != nil {
			return nil, &fieldErr{field, fmt.Errorf("%s: %w", strings.Join(migs, ", "), err)}
		}
		p.Demand.GPUCount, p.Demand.GPUMilli = n, m
		p.MIG = strings.Join(migs, ", ")
	}
	if len(models) > 0 {
		sort.Strings(models)
		for k, m := range models {
			if k == 0 || m != models[k-1] {
				p.Demand.GPUSpec = append(p.Demand.GPUSpec, m)
			}
		}
	}
	if len(migs) > 0 && sharedBy == 1 {
		// MIG devices: the import's one rule (migRequest): one device is a
		// request for one instance of its profile, several stay a share.
		prof := strings.TrimPrefix(migs[len(migs)-1], "1 x ")
		w, ferr := migRequest(p, nc, int64(len(migs)), prof, field)
		if ferr != nil {
			return nil, ferr
		}
		if w != "" {
			warns = append(warns, w)
		}
	}
	if sharedBy > 1 {
		if p.Demand.GPUCount > 1 {
			return nil, &fieldErr{field, fmt.Errorf("a claim shared by %d pods holds %d GPUs: a share of several GPUs is not modelled", sharedBy, p.Demand.GPUCount)}
		}
		p.Demand.GPUMilli = max(p.Demand.GPUMilli/int64(sharedBy), 1)
		desc = append(desc, fmt.Sprintf("shared by %d pods", sharedBy))
	}
	if err := p.Demand.Validate(); err != nil {
		return nil, &fieldErr{field, fmt.Errorf("GPUs through claims (%s): %w", strings.Join(desc, "; "), err)}
	}
	p.Claims = strings.Join(desc, "; ")
	return warns, nil
}

// MIG strategies of NodeMIG for the devices of NVIDIA's DRA driver.
const (
	// StrategyDRA: the node's ResourceSlices list the MIG devices that
	// exist; they are laid out like the mixed strategy's.
	StrategyDRA = "dra"
	// StrategyDRADynamic: the devices consume shared counters, so the
	// slices list every placement the driver could create at allocation,
	// not devices that exist: no layout is kept.
	StrategyDRADynamic = "dra-dynamic"
)

// node completes a node from its ResourceSlices: a node whose
// allocatable counts no GPU (the DRA driver replaces the device plugin)
// gets the physical GPUs and model its gpu.nvidia.com devices give, and
// its MIG devices as its MIG capacity. A node with device-plugin GPUs
// keeps them, with a warning when its slices list GPUs too.
func (dc *draCtx) node(s *cluster.NodeSpec, mig *nodeMIG, warns *[]string) (*nodeMIG, *fieldErr) {
	gpus, model, dmig, problem := dc.nodeSpec(s.Name)
	if gpus == 0 {
		return mig, nil
	}
	if s.GPUs > 0 || mig != nil {
		*warns = append(*warns, fmt.Sprintf("GPUs of the device plugin (%d) and %d GPUs in ResourceSlices of %s: the device plugin's kept", s.GPUs, gpus, DRADriverGPU))
		return mig, nil
	}
	if problem != "" {
		*warns = append(*warns, problem)
	}
	if gpus > maxNodeGPUs {
		return mig, &fieldErr{"metadata.name", fmt.Errorf("%d GPUs in ResourceSlices of %s: want at most %d", gpus, DRADriverGPU, maxNodeGPUs)}
	}
	if model == "" {
		return mig, &fieldErr{"metadata.name", fmt.Errorf("%d GPUs in ResourceSlices of %s without a productName attribute: their model is unknown", gpus, DRADriverGPU)}
	}
	s.GPUs, s.GPUModel = gpus, model
	if dmig != nil {
		dmig.GPUs = gpus
		dmig.nonMIG = dc.wholeGPUs(s.Name)
	}
	return dmig, nil
}

// wholeGPUs counts a node's whole-GPU devices of gpu.nvidia.com.
func (dc *draCtx) wholeGPUs(node string) int {
	n := 0
	for _, g := range dc.nodeGPUs[node] {
		if g.typ == draTypeGPU {
			n++
		}
	}
	return n
}

// claimChecks reports what is wrong with the dump's claims before any pod
// is read: a claim or template naming an unknown DeviceClass, a claim
// shared by pods on different nodes. Each is a warning (its pods are
// skipped, or kept with their shares), or with opt.Strict the error,
// naming the file and the claim's item.
func (dc *draCtx) claimChecks(items []object, d *Dump, opt Options, bad func(int, string, error) error) error {
	for _, o := range items {
		if o.Kind != "Pod" {
			continue
		}
		for _, ref := range o.Spec.ResourceClaims {
			dc.addUser(o.Metadata.Namespace, ref, Shown(o.Metadata.Namespace+"/"+o.Metadata.Name), o.Spec.NodeName)
		}
	}
	var all []*draClaim
	for _, m := range []map[string]*draClaim{dc.claims, dc.templates} {
		for _, c := range m {
			all = append(all, c)
		}
	}
	sort.Slice(all, func(a, b int) bool { return all[a].item < all[b].item })
	for _, c := range all {
		if c.problem != nil {
			if opt.Strict {
				return bad(c.item, c.problem.field, c.problem.err)
			}
			d.Warnings = append(d.Warnings, fmt.Sprintf("items[%d] %s %s: %s: %v (the pods using it are skipped)", c.item, c.kind, Shown(c.key), c.problem.field, c.problem.err))
			continue
		}
		if msg := dc.sharedAcrossNodes(c); msg != "" {
			if opt.Strict {
				return bad(c.item, "metadata.name", errors.New(msg))
			}
			d.Warnings = append(d.Warnings, fmt.Sprintf("items[%d] %s %s: %s", c.item, c.kind, Shown(c.key), msg))
		}
	}
	return nil
}
