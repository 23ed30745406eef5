// Package k8sdump reads a Kubernetes cluster's nodes and pods from the JSON
// that `kubectl get nodes,pods -A -o json` prints (a List of Node and Pod
// objects), without importing Kubernetes' own packages: the core module
// stays free of k8s.io. It uses the same label and annotations as the
// wattsched kube-scheduler plugins: the GPU model from
// nvidia.com/gpu.product, whole GPUs from nvidia.com/gpu, a GPU share from
// wattsched.io/gpu-milli, accepted models from wattsched.io/gpu-models.
package k8sdump

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/trace"
	"github.com/wattsched/wattsched/userfile"
)

// Names shared with the kube-scheduler plugins (k8s/gpushare).
const (
	ResourceGPU     = "nvidia.com/gpu"
	LabelGPUProduct = "nvidia.com/gpu.product"
	AnnGPUMilli     = "wattsched.io/gpu-milli"
	AnnGPUModels    = "wattsched.io/gpu-models"
	AnnGPUIndex     = "wattsched.io/gpu-index"
)

type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		Labels            map[string]string `json:"labels"`
		Annotations       map[string]string `json:"annotations"`
		CreationTimestamp string            `json:"creationTimestamp"`
		// OwnerReferences is read per pod (ownerRefs), so that a malformed
		// one skips that pod rather than failing the whole dump.
		OwnerReferences json.RawMessage `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		NodeName       string       `json:"nodeName"`
		Containers     []container  `json:"containers"`
		InitContainers []container  `json:"initContainers"`
		Tolerations    []Toleration `json:"tolerations"` // a pod's
		Taints         []Taint      `json:"taints"`      // a node's
		// ResourceClaims are a pod's DRA claims (dra.go).
		ResourceClaims []podClaimRef `json:"resourceClaims"`
		// The DRA objects' fields (dra.go), decoded by kind: Devices is a
		// ResourceClaim's (an object) or a ResourceSlice's (a list).
		Devices   json.RawMessage `json:"devices"`
		Selectors json.RawMessage `json:"selectors"` // a DeviceClass's
		Spec      json.RawMessage `json:"spec"`      // a ResourceClaimTemplate's
		Driver    string          `json:"driver"`    // a ResourceSlice's
		Pool      json.RawMessage `json:"pool"`      // a ResourceSlice's
		// SchedulingGroup names a pod's gang (Workload API; podgroup.go).
		SchedulingGroup *struct {
			PodGroupName *string `json:"podGroupName"`
		} `json:"schedulingGroup"`
		WorkloadRef *struct {
			Name               string `json:"name"`
			PodGroup           string `json:"podGroup"`
			PodGroupReplicaKey string `json:"podGroupReplicaKey"`
		} `json:"workloadRef"`
		// A PodGroup's minimum: Coscheduling's, or the Workload API's.
		MinMember        int `json:"minMember"`
		SchedulingPolicy *struct {
			Gang *struct {
				MinCount int `json:"minCount"`
			} `json:"gang"`
		} `json:"schedulingPolicy"`
	} `json:"spec"`
	Status struct {
		Allocatable map[string]string `json:"allocatable"`
		Phase       string            `json:"phase"`
		StartTime   string            `json:"startTime"`
		// ResourceClaimStatuses name the claims made for a pod's
		// ResourceClaimTemplates.
		ResourceClaimStatuses []podClaimStatus `json:"resourceClaimStatuses"`
		// Allocation is a ResourceClaim's (dra.go).
		Allocation        json.RawMessage `json:"allocation"`
		ContainerStatuses []struct {
			State struct {
				Running *struct {
					StartedAt string `json:"startedAt"`
				} `json:"running"`
				Terminated *struct {
					StartedAt  string `json:"startedAt"`
					FinishedAt string `json:"finishedAt"`
				} `json:"terminated"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

type container struct {
	Resources struct {
		Requests map[string]string `json:"requests"`
	} `json:"resources"`
}

// Pod is one pod of the dump in the cluster model's units.
type Pod struct {
	Name      string // namespace/name
	Demand    job.Demand
	Created   time.Time
	Phase     string
	Node      string
	Placement string // the path of the item, for errors: items[i]
	// Start is when it started running: status.startTime, or its
	// containers' earliest startedAt; zero when it has not started.
	Start time.Time
	// End is when a pod that ended (Succeeded, Failed) ended: its
	// containers' latest finishedAt; zero while it runs or when unknown.
	End time.Time
	// MIG names the MIG instances it asked for ("1 x 1g.10gb"), "" none.
	MIG string
	// Tolerations are its spec.tolerations.
	Tolerations []Toleration
	// Claims says which DRA claims gave it its GPUs, and how
	// ("ml/c allocated on n1: gpu-0"); "" none.
	Claims string
	// otherGPU are the GPU-like resources it requests that wattsched does
	// not model (left out).
	otherGPU []string
	// Gang is the gang job the pod is one pod of, "namespace/name" of its
	// PodGroup ("" for a pod of its own), and GangSize the number of the
	// gang's pods the dump keeps (podgroup.go).
	Gang     string
	GangSize int
}

// Skipped is a pod left out of the import, and why.
type Skipped struct {
	Item   string // items[i]
	Pod    string // namespace/name
	Reason string // the field and what is wrong with it
}

// NodeMIG is a node's MIG capacity.
type NodeMIG struct {
	Node string
	// Strategy is single or mixed (NVIDIA device plugin), dra (MIG
	// devices of NVIDIA's DRA driver) or dra-dynamic (the driver's
	// possible MIG placements, made at allocation: no layout).
	Strategy string
	// Instances are its allocatable MIG devices ("56 x 1g.10gb"), sorted.
	Instances []string
	// GPUs are the physical GPUs counted for it.
	GPUs int
	// Layout is, per MIG GPU, its instances at their start memory
	// slices, where the GPU product's MIG geometry is known (hw/mig.yaml);
	// nil otherwise.
	Layout [][]cluster.MIGSlot `json:",omitempty"`
}

// Dump is a cluster: its nodes (as node specs) and pods.
type Dump struct {
	Nodes []cluster.NodeSpec
	Pods  []Pod
	// Skipped are the pods that could not be read, in item order.
	Skipped []Skipped
	// Warnings are about pods and nodes kept with a change ("items[3]
	// ml/x: ..."): the nodes' in item order, then the pods', then those
	// of the system pods' reservations.
	Warnings []string
	// MIG are the nodes with MIG capacity, sorted by name.
	MIG []NodeMIG
	// Snapshot is the latest time the dump holds (a creation, start or
	// finish): where the runs of pods still running are cut.
	Snapshot time.Time
	// System are the pods kept out of the jobs (DaemonSet, static and
	// mirror pods, pods of system namespaces), in item order.
	System []SystemPod
	// Reserved are, per node (sorted by name), the requests of its system
	// pods, taken off its allocatable in Nodes.
	Reserved []Reserved
	// Taints are the nodes with NoSchedule or NoExecute taints, sorted by
	// name, and the kept pods that do not tolerate them.
	Taints []NodeTaints
}

// Options changes how Read treats pods it cannot import.
type Options struct {
	// Strict makes a pod that cannot be read an error; by default it is
	// skipped and listed in Dump.Skipped. It also makes a MIG node whose
	// devices break its GPU product's MIG geometry (a profile the product
	// does not have, devices no layout holds) an error; by default that is
	// a warning and the node keeps no layout.
	Strict bool
	// SystemNamespaces are namespaces whose pods are system pods, besides
	// kube-system.
	SystemNamespaces []string
}

// Read parses the dump with the default options: a bad pod is skipped.
func Read(r io.Reader, file string) (*Dump, error) {
	return ReadWith(r, file, Options{})
}

// ReadWith parses the dump; errors name the file and the item's JSON path
// and field. Nodes are sorted by name, pods by creation time then name. A
// node that cannot be read is an error; a pod that cannot be read is
// skipped (listed in Skipped, with its item and why) unless opt.Strict.
func ReadWith(r io.Reader, file string, opt Options) (*Dump, error) {
	var l struct {
		Kind  string   `json:"kind"`
		Items []object `json:"items"`
	}
	r, err := userfile.Reader(r, file, userfile.Document)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(&l); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty dump: want the JSON of 'kubectl get nodes,pods -A -o json'", file)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	bad := func(i int, field string, err error) error {
		return fmt.Errorf("%s: items[%d].%s: %w", file, i, EscapeLine(field), lineErr{err})
	}
	d := &Dump{}
	seen := map[string]int{} // "node name" or "pod namespace/name" -> item
	// named checks an item's name (Kubernetes allows 253 bytes, so the
	// namespace and the name are each a trace.CheckName) and that no other
	// item of its kind has it.
	named := func(i int, kind string, o object) *fieldErr {
		if err := trace.CheckName(o.Metadata.Name); err != nil {
			return &fieldErr{"metadata.name", err}
		}
		name := o.Metadata.Name
		if kind == "pod" {
			if err := trace.CheckName(o.Metadata.Namespace); err != nil && o.Metadata.Namespace != "" {
				return &fieldErr{"metadata.namespace", err}
			}
			name = o.Metadata.Namespace + "/" + name
		}
		if prev, dup := seen[kind+" "+name]; dup {
			return &fieldErr{"metadata.name", fmt.Errorf("%s %q is also items[%d]", kind, name, prev)}
		}
		seen[kind+" "+name] = i
		return nil
	}
	dc, derrs := readDRA(l.Items)
	if len(derrs) > 0 {
		return nil, bad(derrs[0].item, derrs[0].field, derrs[0].err)
	}
	nc := &nodeCtx{single: map[string]MIGProfile{}, gpuMem: map[string]int64{}, migGeo: map[string]*hw.MIGGeometry{}}
	for i, o := range l.Items {
		if o.Kind != "Node" {
			continue
		}
		if ferr := named(i, "node", o); ferr != nil {
			return nil, bad(i, ferr.field, ferr.err)
		}
		s, mig, warns, ferr := node(o)
		if ferr == nil {
			ferr = nc.add(&s, o, &warns)
		}
		if ferr == nil {
			mig, ferr = dc.node(&s, mig, &warns)
		}
		if ferr != nil {
			return nil, bad(i, ferr.field, ferr.err)
		}
		if mig != nil {
			product := o.Metadata.Labels[LabelGPUProduct]
			if base, _, ok := cutLast(product, migProductInfix); ok && mig.Strategy == "single" {
				product = base
			}
			if mig.Strategy == StrategyDRA {
				product = s.GPUModel
			}
			if problem := mig.layout(product); problem != "" {
				if opt.Strict {
					return nil, bad(i, "status.allocatable", errors.New(problem))
				}
				warns = append(warns, problem)
			}
			if g, ok := migGeometry(product); ok {
				nc.migGeo[s.Name] = g
			}
			if mig.nonMIG > 0 && len(mig.Layout) > 0 {
				warns = append(warns, fmt.Sprintf("%d of its %d GPUs without MIG: scenario.yaml leaves the node out of MIG mode (a node is in MIG mode as a whole, docs/scenarios.md#mig-partitions), so its MIG devices are not replayed", mig.nonMIG, mig.GPUs))
			}
		}
		for _, w := range warns {
			d.Warnings = append(d.Warnings, fmt.Sprintf("items[%d] node %s: %s", i, s.Name, w))
		}
		if mig != nil {
			d.MIG = append(d.MIG, mig.NodeMIG)
			if mig.single.Name != "" {
				nc.single[s.Name] = mig.single
			}
		}
		d.Nodes = append(d.Nodes, s)
	}
	if err := dc.claimChecks(l.Items, d, opt, bad); err != nil {
		return nil, err
	}
	podMax := podGPULimit(d.Nodes)
	for i, o := range l.Items {
		if o.Kind != "Pod" {
			continue
		}
		item := fmt.Sprintf("items[%d]", i)
		name := Shown(o.Metadata.Namespace + "/" + o.Metadata.Name)
		why, ferr := systemWhy(o, opt.SystemNamespaces)
		var p *Pod
		var warns []string
		if ferr == nil {
			p, warns, ferr = pod(o, nc)
		}
		if ferr == nil {
			var dw []string
			dw, ferr = dc.podDRA(o, p, nc)
			warns = append(warns, dw...)
		}
		if ferr == nil {
			ferr = podTimes(o, p)
		}
		if ferr == nil {
			ferr = named(i, "pod", o)
		}
		if ferr == nil && why == "" && p.Demand.GPUCount > podMax {
			ferr = &fieldErr{"spec.containers[].resources.requests." + ResourceGPU, fmt.Errorf("pod %s asks for %d GPUs, more than any node has (%d at most per pod): a job across nodes is a gang of pods, skipped rather than kept to fail at replay", name, p.Demand.GPUCount, podMax)}
		}
		if ferr == nil && why == "" && p.Demand.GPUCount == 0 && len(p.otherGPU) > 0 {
			ferr = &fieldErr{"spec.containers[].resources.requests." + p.otherGPU[0], fmt.Errorf("a GPU resource wattsched does not model (docs/formats.md): skipped rather than imported as a CPU-only pod")}
		}
		if ferr != nil {
			if opt.Strict {
				return nil, bad(i, ferr.field, ferr.err)
			}
			d.Skipped = append(d.Skipped, Skipped{Item: item, Pod: name, Reason: ferr.field + ": " + ferr.err.Error()})
			continue
		}
		for _, w := range warns {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s pod %s: %s", item, name, w))
		}
		p.Placement = item
		p.Gang = gangOf(o)
		if why != "" {
			d.System = append(d.System, SystemPod{Item: item, Pod: name, Node: p.Node, Why: why, Phase: p.Phase, Demand: p.Demand})
			continue
		}
		d.Pods = append(d.Pods, *p)
	}
	if len(d.Nodes) == 0 {
		return nil, fmt.Errorf("%s: no Node items (kubectl get nodes,pods -A -o json)", file)
	}
	if err := d.gangs(l.Items, file, opt.Strict); err != nil {
		return nil, err
	}
	sort.SliceStable(d.Nodes, func(a, b int) bool { return d.Nodes[a].Name < d.Nodes[b].Name })
	d.reserve()
	sort.SliceStable(d.MIG, func(a, b int) bool { return d.MIG[a].Node < d.MIG[b].Node })
	sort.SliceStable(d.Pods, func(a, b int) bool {
		if !d.Pods[a].Created.Equal(d.Pods[b].Created) {
			return d.Pods[a].Created.Before(d.Pods[b].Created)
		}
		return d.Pods[a].Name < d.Pods[b].Name
	})
	d.taints(l.Items)
	d.snapshot()
	// What the dump names (resources, labels) is written into messages:
	// keep each on its line.
	for i := range d.Warnings {
		d.Warnings[i] = EscapeLine(d.Warnings[i])
	}
	for i := range d.Skipped {
		d.Skipped[i].Reason = EscapeLine(d.Skipped[i].Reason)
	}
	return d, nil
}

// snapshot sets Snapshot: the latest time the pods hold.
func (d *Dump) snapshot() {
	d.Snapshot = time.Time{}
	for _, p := range d.Pods {
		for _, t := range []time.Time{p.Created, p.Start, p.End} {
			if t.After(d.Snapshot) {
				d.Snapshot = t
			}
		}
	}
}

type fieldErr struct {
	field string
	err   error
}

// nodeMIG is a node's MIG capacity and, for the single strategy, the
// profile its nvidia.com/gpu devices are.
type nodeMIG struct {
	NodeMIG
	single MIGProfile
	nonMIG int // GPUs without MIG (mixed strategy)
	// exact are, per MIG GPU (by minor), the DRA driver's MIG devices at
	// their published starts (strategy dra; nil when a device's start is
	// unknown).
	exact [][]cluster.MIGSlot
}

// maxNodeGPUs bounds a node's physical GPUs (as the plugins do).
const maxNodeGPUs = 64

func node(o object) (cluster.NodeSpec, *nodeMIG, []string, *fieldErr) {
	a := o.Status.Allocatable
	var warns []string
	cpu, err := quantity(a["cpu"], 1000)
	if err != nil {
		return cluster.NodeSpec{}, nil, nil, &fieldErr{"status.allocatable.cpu", err}
	}
	mem, err := quantity(a["memory"], 1)
	if err != nil {
		return cluster.NodeSpec{}, nil, nil, &fieldErr{"status.allocatable.memory", err}
	}
	gpuField := "status.allocatable[\"" + ResourceGPU + "\"]"
	// With the single MIG strategy nvidia.com/gpu counts MIG devices, up
	// to 7 per GPU.
	gpus, err := whole(a[ResourceGPU])
	if err != nil || gpus > 7*maxNodeGPUs {
		return cluster.NodeSpec{}, nil, nil, &fieldErr{gpuField, fmt.Errorf("%q: want 0..%d GPUs", a[ResourceGPU], maxNodeGPUs)}
	}
	s := cluster.NodeSpec{Name: o.Metadata.Name, CPUMilli: cpu, MemMiB: mem >> 20, GPUs: int(gpus)}
	if s.Name == "" || s.CPUMilli <= 0 {
		return s, nil, nil, &fieldErr{"status.allocatable.cpu", fmt.Errorf("node %q: no CPU", s.Name)}
	}
	product := o.Metadata.Labels[LabelGPUProduct]
	countLabel := func() (int, bool, *fieldErr) {
		v, ok := o.Metadata.Labels[LabelGPUCount]
		if !ok {
			return 0, false, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > maxNodeGPUs {
			return 0, false, &fieldErr{"metadata.labels[\"" + LabelGPUCount + "\"]", fmt.Errorf("%q: want 1..%d GPUs", v, maxNodeGPUs)}
		}
		return n, true, nil
	}
	var mig *nodeMIG
	if base, prof, ok := cutLast(product, migProductInfix); ok && gpus > 0 {
		// Single strategy: every GPU is cut into one profile.
		mig = &nodeMIG{NodeMIG: NodeMIG{Node: s.Name, Strategy: "single", Instances: []string{fmt.Sprintf("%d x %s", gpus, prof)}}}
		p, known := LookupMIG(prof)
		n, labelled, ferr := countLabel()
		if ferr != nil {
			return s, nil, nil, ferr
		}
		switch {
		case known && labelled:
			mig.single = p
		case known:
			mig.single = p
			n = int((gpus*int64(p.Slices) + int64(p.Of) - 1) / int64(p.Of))
			warns = append(warns, fmt.Sprintf("no %s label: %d GPUs counted from %d MIG devices of %s (%d of %d slices each)", LabelGPUCount, n, gpus, prof, p.Slices, p.Of))
		case labelled:
			warns = append(warns, fmt.Sprintf("MIG profile %s is not in the table (docs/formats.md): its %d devices are left out of the pods' shares; pods bound to it ask for whole GPUs", prof, gpus))
		default:
			return s, nil, nil, &fieldErr{"metadata.labels[\"" + LabelGPUProduct + "\"]", fmt.Errorf("%q: MIG profile %s is not in the table and the node has no %s label: its GPUs are unknown", product, prof, LabelGPUCount)}
		}
		s.GPUs, s.GPUModel, mig.GPUs = n, base, n
	} else {
		// Mixed strategy: each profile is its own resource; nvidia.com/gpu
		// counts the GPUs without MIG.
		var names []string
		for k := range a {
			if strings.HasPrefix(k, ResourceMIGPrefix) {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		migSlices, of, unknown := int64(0), 0, false
		for _, k := range names {
			n, err := whole(a[k])
			if err != nil || n > 7*maxNodeGPUs {
				return s, nil, nil, &fieldErr{"status.allocatable[\"" + k + "\"]", fmt.Errorf("%q: want 0..%d MIG devices", a[k], 7*maxNodeGPUs)}
			}
			if n == 0 {
				continue
			}
			prof := strings.TrimPrefix(k, ResourceMIGPrefix)
			if mig == nil {
				mig = &nodeMIG{NodeMIG: NodeMIG{Node: s.Name, Strategy: "mixed"}}
			}
			mig.Instances = append(mig.Instances, fmt.Sprintf("%d x %s", n, prof))
			p, ok := LookupMIG(prof)
			if !ok {
				unknown = true
				continue
			}
			if of != 0 && of != p.Of {
				return s, nil, nil, &fieldErr{"status.allocatable[\"" + k + "\"]", fmt.Errorf("MIG profiles of GPUs of %d and %d slices on one node", of, p.Of)}
			}
			of = p.Of
			migSlices += n * int64(p.Slices)
		}
		if mig != nil {
			n, labelled, ferr := countLabel()
			if ferr != nil {
				return s, nil, nil, ferr
			}
			if !labelled {
				if unknown {
					return s, nil, nil, &fieldErr{"status.allocatable", fmt.Errorf("MIG devices of a profile not in the table (%s) and no %s label: the node's GPUs are unknown", strings.Join(mig.Instances, ", "), LabelGPUCount)}
				}
				n = int(gpus) + int((migSlices+int64(of)-1)/int64(of))
				warns = append(warns, fmt.Sprintf("no %s label: %d GPUs counted: %d without MIG and %d slices of MIG devices (%s) in GPUs of %d", LabelGPUCount, n, gpus, migSlices, strings.Join(mig.Instances, ", "), of))
			} else if unknown {
				warns = append(warns, fmt.Sprintf("MIG devices of a profile not in the table (%s): the node counts %d GPUs (its %s label)", strings.Join(mig.Instances, ", "), n, LabelGPUCount))
			}
			s.GPUs, mig.GPUs, mig.nonMIG = n, n, int(gpus)
		}
		s.GPUModel = product
	}
	if s.GPUs > maxNodeGPUs {
		return s, nil, nil, &fieldErr{gpuField, fmt.Errorf("%q: want 0..%d GPUs", a[ResourceGPU], maxNodeGPUs)}
	}
	if s.GPUs > 0 && s.GPUModel == "" {
		return s, nil, nil, &fieldErr{"metadata.labels[\"" + LabelGPUProduct + "\"]", fmt.Errorf("missing on a node with %d GPUs", s.GPUs)}
	}
	if s.GPUs == 0 {
		s.GPUModel = ""
	}
	return s, mig, warns, nil
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// pod reads a pod's demand. single maps the nodes of the single MIG
// strategy to their profile (nil: none). Warnings say what was changed
// to keep the pod.
func pod(o object, nc *nodeCtx) (*Pod, []string, *fieldErr) {
	p := &Pod{Name: o.Metadata.Namespace + "/" + o.Metadata.Name, Phase: o.Status.Phase, Node: o.Spec.NodeName, Tolerations: o.Spec.Tolerations}
	var single map[string]MIGProfile
	if nc != nil {
		single = nc.single
	}
	var warns []string
	t, ferr := parseTime("metadata.creationTimestamp", o.Metadata.CreationTimestamp)
	if ferr != nil {
		return nil, nil, ferr
	}
	p.Created = t
	// Effective requests as the scheduler counts them: the containers' sum,
	// or the largest init container's when that is larger.
	names := []string{"cpu", "memory", ResourceGPU}
	for _, cs := range [][]container{o.Spec.Containers, o.Spec.InitContainers} {
		for _, c := range cs {
			for k := range c.Resources.Requests {
				if !slices.Contains(names, k) {
					names = append(names, k)
				}
			}
		}
	}
	sort.Strings(names[3:])
	sum := map[string]int64{}
	for _, name := range names {
		unit := int64(1)
		if name == "cpu" {
			unit = 1000
		}
		read := func(q string) (int64, error) { return quantity(q, unit) }
		if name == ResourceGPU || gpuLike(name) {
			read = whole
		}
		var s, initMax int64
		for k, c := range o.Spec.Containers {
			v, err := read(c.Resources.Requests[name])
			if err != nil {
				return nil, nil, &fieldErr{fmt.Sprintf("spec.containers[%d].resources.requests.%s", k, name), err}
			}
			s += v
		}
		for k, c := range o.Spec.InitContainers {
			v, err := read(c.Resources.Requests[name])
			if err != nil {
				return nil, nil, &fieldErr{fmt.Sprintf("spec.initContainers[%d].resources.requests.%s", k, name), err}
			}
			initMax = max(initMax, v)
		}
		sum[name] = max(s, initMax)
	}
	p.Demand = job.Demand{CPUMilli: sum["cpu"], MemMiB: (sum["memory"] + (1 << 20) - 1) >> 20}
	whole := sum[ResourceGPU]
	if whole > 64 {
		return nil, nil, &fieldErr{"spec.containers[].resources.requests." + ResourceGPU, fmt.Errorf("%d GPUs: want at most 64", whole)}
	}
	// MIG instances: the mixed strategy's resources, or nvidia.com/gpu on a
	// node of the single strategy.
	var migSlices, migN int64
	migOf := 0
	var migs []string
	var migProf, migField string // the profile and field of the last MIG request
	var gpuMem int64             // aliyun.com/gpu-mem, GiB
	addMIG := func(field string, n int64, prof MIGProfile) *fieldErr {
		if migOf != 0 && migOf != prof.Of {
			return &fieldErr{field, fmt.Errorf("MIG profiles of GPUs of %d and %d slices", migOf, prof.Of)}
		}
		migOf = prof.Of
		migSlices += n * int64(prof.Slices)
		migN += n
		migs = append(migs, fmt.Sprintf("%d x %s", n, prof.Name))
		migProf, migField = prof.Name, field
		return nil
	}
	for _, name := range names[3:] {
		n := sum[name]
		if n == 0 {
			continue
		}
		field := "spec.containers[].resources.requests." + name
		if prof, ok := strings.CutPrefix(name, ResourceMIGPrefix); ok {
			mp, known := LookupMIG(prof)
			if !known {
				return nil, nil, &fieldErr{field, fmt.Errorf("MIG profile %s is not in the table (docs/formats.md): its GPU share is unknown", prof)}
			}
			if n > 7*64 {
				return nil, nil, &fieldErr{field, fmt.Errorf("%d MIG devices: too many", n)}
			}
			if ferr := addMIG(field, n, mp); ferr != nil {
				return nil, nil, ferr
			}
			continue
		}
		if name == ResourceAliyunGPUMem && nc != nil {
			gpuMem = n
			continue
		}
		if gpuLike(name) {
			warns = append(warns, fmt.Sprintf("requests %s: %d, which wattsched does not model: left out", name, n))
			p.otherGPU = append(p.otherGPU, name)
		}
	}
	if prof, ok := single[p.Node]; ok && whole > 0 {
		if ferr := addMIG("spec.containers[].resources.requests."+ResourceGPU, whole, prof); ferr != nil {
			return nil, nil, ferr
		}
		whole = 0
	}
	if migSlices > 0 && whole > 0 {
		return nil, nil, &fieldErr{"spec.containers[].resources.requests", fmt.Errorf("both %s: %d and MIG devices (%s): the device plugin gives a container one kind", ResourceGPU, whole, strings.Join(migs, ", "))}
	}
	if gpuMem > 0 {
		field := "spec.containers[].resources.requests." + ResourceAliyunGPUMem
		if migSlices > 0 || whole > 0 {
			return nil, nil, &fieldErr{field, fmt.Errorf("%d GiB beside %s or MIG devices: one pod takes one kind of GPU", gpuMem, ResourceGPU)}
		}
		n, m, ferr := nc.memShare(p.Node, gpuMem)
		if ferr != nil {
			return nil, nil, &fieldErr{field, ferr}
		}
		p.Demand.GPUCount, p.Demand.GPUMilli = n, m
	}
	switch {
	case gpuMem > 0:
	case migSlices > 0:
		n, m, err := migShare(int(migSlices), migOf)
		if err != nil {
			return nil, nil, &fieldErr{"spec.containers[].resources.requests", fmt.Errorf("%s: %w", strings.Join(migs, ", "), err)}
		}
		p.Demand.GPUCount, p.Demand.GPUMilli = n, m
		p.MIG = strings.Join(migs, ", ")
		w, ferr := migRequest(p, nc, migN, migProf, migField)
		if ferr != nil {
			return nil, nil, ferr
		}
		if w != "" {
			warns = append(warns, w)
		}
	case whole > 0:
		p.Demand.GPUCount, p.Demand.GPUMilli = int(whole), job.MilliPerGPU
	}
	if v, ok := o.Metadata.Annotations[AnnGPUMilli]; ok {
		var m int64
		field := "metadata.annotations[\"" + AnnGPUMilli + "\"]"
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d", &m); err != nil || m < 1 || m >= job.MilliPerGPU {
			return nil, nil, &fieldErr{field, fmt.Errorf("%q: want 1..999 thousandths of one GPU", v)}
		}
		switch {
		case p.MIG != "":
			warns = append(warns, fmt.Sprintf("%s %q beside MIG devices (%s): the MIG share (%d thousandths per GPU) is kept, the annotation left out", AnnGPUMilli, v, p.MIG, p.Demand.GPUMilli))
		case whole == 1:
			// Another sharing convention (a device slot plus a share).
			warns = append(warns, fmt.Sprintf("both %s %q and %s: 1 (another GPU-sharing convention): kept as %d thousandths of one GPU", AnnGPUMilli, v, ResourceGPU, m))
			p.Demand.GPUCount, p.Demand.GPUMilli = 1, m
		case whole > 1:
			warns = append(warns, fmt.Sprintf("both %s %q and %s: %d: kept as %d whole GPUs, the annotation left out", AnnGPUMilli, v, ResourceGPU, whole, whole))
		default:
			p.Demand.GPUCount, p.Demand.GPUMilli = 1, m
		}
	}
	if v, ok := o.Metadata.Annotations[AnnGPUModels]; ok && p.Demand.GPUCount > 0 {
		for _, m := range strings.Split(v, "|") {
			if m = strings.TrimSpace(m); m != "" {
				p.Demand.GPUSpec = append(p.Demand.GPUSpec, m)
			}
		}
	}
	if p.Demand.MIG() && len(p.Demand.GPUSpec) > 0 {
		if _, _, err := hw.MIGProfileFor(hw.Default(), p.Demand.GPUSpec, p.Demand.MIGProfile); err != nil {
			return nil, nil, &fieldErr{"metadata.annotations[\"" + AnnGPUModels + "\"]", err}
		}
	}
	if err := p.Demand.Validate(); err != nil {
		return nil, nil, &fieldErr{"spec", err}
	}
	return p, warns, nil
}

// podTimes reads when the pod ran: the start from status.startTime, or
// else its containers' earliest startedAt; the end of a pod that ended
// (Succeeded, Failed) from its containers' latest finishedAt.
func podTimes(o object, p *Pod) *fieldErr {
	parse := parseTime
	if v := o.Status.StartTime; v != "" {
		t, ferr := parse("status.startTime", v)
		if ferr != nil {
			return ferr
		}
		p.Start = t
	}
	for k, c := range o.Status.ContainerStatuses {
		at := fmt.Sprintf("status.containerStatuses[%d].state", k)
		var started, finished string
		if r := c.State.Running; r != nil {
			started = r.StartedAt
			at += ".running"
		}
		if tm := c.State.Terminated; tm != nil {
			started, finished = tm.StartedAt, tm.FinishedAt
			at += ".terminated"
		}
		if started != "" && o.Status.StartTime == "" {
			t, ferr := parse(at+".startedAt", started)
			if ferr != nil {
				return ferr
			}
			if p.Start.IsZero() || t.Before(p.Start) {
				p.Start = t
			}
		}
		// The kubelet writes containers it never saw end (evictions,
		// ContainerStatusUnknown) as terminated with a null finishedAt.
		if finished != "" && (p.Phase == "Succeeded" || p.Phase == "Failed") {
			t, ferr := parse(at+".finishedAt", finished)
			if ferr != nil {
				return ferr
			}
			if t.After(p.End) {
				p.End = t
			}
		}
	}
	if !p.End.IsZero() && p.Start.IsZero() {
		p.Start = p.End // ended without a recorded start: ran for no time we know of
	}
	if p.End.Before(p.Start) && !p.End.IsZero() {
		return &fieldErr{"status.containerStatuses", fmt.Errorf("finished %s before it started %s", p.End.Format(time.RFC3339), p.Start.Format(time.RFC3339))}
	}
	return nil
}

// quantity parses a Kubernetes quantity ("32", "500m", "128Gi", "1e3")
// times unit (1000 for CPU milli); empty is 0. Values that do not fit the
// model's int64 units (above 2^50) are errors, never wrapped.
func quantity(s string, unit int64) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	mult := big.NewRat(1, 1)
	for _, suf := range []struct {
		s string
		n *big.Rat
	}{{"Ki", pow(2, 10)}, {"Mi", pow(2, 20)}, {"Gi", pow(2, 30)}, {"Ti", pow(2, 40)}, {"Pi", pow(2, 50)}, {"Ei", pow(2, 60)},
		{"m", big.NewRat(1, 1000)}, {"k", pow(10, 3)}, {"M", pow(10, 6)}, {"G", pow(10, 9)}, {"T", pow(10, 12)}, {"P", pow(10, 15)}, {"E", pow(10, 18)}} {
		if strings.HasSuffix(s, suf.s) {
			s, mult = strings.TrimSuffix(s, suf.s), suf.n
			break
		}
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok || v.Sign() < 0 {
		return 0, fmt.Errorf("%q is not a non-negative quantity", s)
	}
	v.Mul(v, mult).Mul(v, big.NewRat(unit, 1))
	f, _ := v.Float64()
	if f > math.Exp2(50) {
		return 0, fmt.Errorf("quantity %s is too large", v.FloatString(0))
	}
	// Round up, as the scheduler does for milli-CPU.
	n := new(big.Int).Quo(v.Num(), v.Denom())
	if new(big.Rat).SetInt(n).Cmp(v) < 0 {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64(), nil
}

func pow(b, e int64) *big.Rat {
	return new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil))
}

// Durations counts the pods by what their times say.
type Durations struct {
	// Ended ran and ended: their start and end are known.
	Ended int
	// Running were running at the snapshot (or ended at a time the dump
	// does not hold): they are cut at the snapshot.
	Running int
	// NotStarted have no start (Pending, or Failed before starting).
	NotStarted int
}

// Durations says how many pods have real durations.
func (d *Dump) Durations() Durations {
	var n Durations
	for _, p := range d.Pods {
		switch {
		case p.Start.IsZero():
			n.NotStarted++
		case p.End.IsZero():
			n.Running++
		default:
			n.Ended++
		}
	}
	return n
}

// seconds is a span in whole seconds, rounded up (Kubernetes' times are
// whole seconds).
func seconds(d time.Duration) int64 {
	return int64(math.Ceil(max(d, 0).Seconds()))
}

// Files renders the dump as an openb node list (nodes.csv), pod list
// (pods.csv) and a scenario (scenario.yaml) comparing FGD, PWR, their
// 0.1/0.9 combination and BestFit on them: by replay when some pod has
// run (its times give durations), else by inflation. In pods.csv times
// are seconds from the earliest creation: creation_time is the pod's
// creation; a pod that ran gets deletion_time = creation_time + the time
// it ran (its containers' latest finishedAt - its start), one still
// running the time from its start to the snapshot (flagged by its
// pod_phase), one that never started its creation time (Failed) or the
// snapshot (Pending: it waits to the end); scheduled_time is its start.
// unknownGPUs are the nodes' GPU models the catalog lacks: the scenario
// carries a commented hardware stub for each.
func (d *Dump) Files(source string, unknownGPUs []string) map[string][]byte {
	var nb strings.Builder
	nb.WriteString("sn,cpu_milli,memory_mib,gpu,model\n")
	for _, n := range d.Nodes {
		fmt.Fprintf(&nb, "%s,%d,%d,%d,%s\n", csvField(n.Name), n.CPUMilli, n.MemMiB, n.GPUs, csvField(n.GPUModel))
	}
	var pb strings.Builder
	migPods := slices.ContainsFunc(d.Pods, func(p Pod) bool { return p.Demand.MIG() })
	gangs := slices.ContainsFunc(d.Pods, func(p Pod) bool { return p.Gang != "" })
	pb.WriteString("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time")
	switch {
	case migPods:
		// reference_gpu and workload empty.
		pb.WriteString(",reference_gpu,workload,gang,gang_size,mig_profile")
	case gangs:
		pb.WriteString(",reference_gpu,workload,gang,gang_size")
	}
	pb.WriteString("\n")
	var t0 time.Time
	for i, p := range d.Pods {
		if i == 0 || p.Created.Before(t0) {
			t0 = p.Created
		}
	}
	snap := seconds(d.Snapshot.Sub(t0))
	for _, p := range d.Pods {
		c := seconds(p.Created.Sub(t0))
		e, sched := c, ""
		switch {
		case !p.Start.IsZero():
			sched = strconv.FormatInt(seconds(p.Start.Sub(t0)), 10)
			end := p.End
			if end.IsZero() {
				end = d.Snapshot
			}
			e = c + seconds(end.Sub(p.Start))
		case p.Phase != "Failed":
			e = max(c, snap)
		}
		fmt.Fprintf(&pb, "%s,%d,%d,%d,%d,%s,,%s,%d,%d,%s", csvField(p.Name), p.Demand.CPUMilli, p.Demand.MemMiB, p.Demand.GPUCount, p.Demand.GPUMilli,
			csvField(strings.Join(p.Demand.GPUSpec, "|")), csvField(p.Phase), c, e, sched)
		switch {
		case migPods:
			g, n := gangColumns(p)
			fmt.Fprintf(&pb, ",,,%s,%s,%s", g, n, csvField(p.Demand.MIGProfile))
		case gangs:
			g, n := gangColumns(p)
			fmt.Fprintf(&pb, ",,,%s,%s", g, n)
		}
		pb.WriteString("\n")
	}
	dur := d.Durations()
	mode := "mode: inflation\ntarget: 1.0\n"
	how := "# Mode inflation asks how each policy packs more of these pods (no pod has a\n# start time, so there are no durations to replay)."
	if dur.Ended+dur.Running > 0 {
		mode = "mode: replay\n"
		how = fmt.Sprintf("# Mode replay runs each pod from its creation for as long as it ran: %d ended\n# (their real durations), %d still running (up to the snapshot %s),\n# %d never started. For inflation (how each policy packs more of the same\n# pods) write mode: inflation and target: 1.0.",
			dur.Ended, dur.Running, d.Snapshot.UTC().Format(time.RFC3339), dur.NotStarted)
	}
	ref := "H100" // the example reference: the first GPU model of the cluster
	for _, n := range d.Nodes {
		if n.GPUs > 0 && n.GPUModel != "" {
			ref = n.GPUModel
			break
		}
	}
	src := yamlString(source)
	sc := fmt.Sprintf(`# Imported by wattsched import k8s from %s: %d nodes, %d pods.
# nodes.csv and pods.csv are in the openb format (docs/formats.md). GPU models are
# the nodes' nvidia.com/gpu.product labels; a model the catalog lacks goes in the
# hardware section (docs/scenarios.md).
%s
name: imported-k8s
description: %s
%sseeds: 3
trace: {nodes: nodes.csv, pods: pods.csv}
# Job speed (mode replay): which GPU model the pods' durations were measured on
# is not in a snapshot, so they run as traced on every GPU. If you know it, name
# it, and give the cluster's GPU models without a speed figure one in a hardware
# section (docs/scenarios.md#job-speed):
#   trace: {nodes: nodes.csv, pods: pods.csv, reference_gpu: %s}
policies:
  - {name: FGD, scorers: [{policy: fgd, weight: 1000}]}
  - {name: PWR, scorers: [{policy: pwr, weight: 1000}]}
  - {name: "0.1*PWR+0.9*FGD", scorers: [{policy: pwr, weight: 100}, {policy: fgd, weight: 900}]}
  - {name: BestFit, scorers: [{policy: bestfit, weight: 1000}]}
`, src, len(d.Nodes), len(d.Pods), how, yamlString("policies compared on the workload and nodes of a Kubernetes cluster ("+source+")"), mode, ref)
	sc += d.migSection() + gridStub + hardwareStub(unknownGPUs)
	return map[string][]byte{"nodes.csv": []byte(nb.String()), "pods.csv": []byte(pb.String()), "scenario.yaml": []byte(sc)}
}

// migSection is the scenario's mig section: each MIG node whose GPUs are
// all in MIG mode with a known layout, its layout per GPU (docs/scenarios.md#mig-partitions);
// "" when there is none.
func (d *Dump) migSection() string {
	var b strings.Builder
	for _, m := range d.MIG {
		if len(m.Layout) == 0 || len(m.Layout) != m.GPUs {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n# MIG nodes: each GPU's instances as the node's labels and resources give\n# them (docs/formats.md#mig-layouts-of-nodes); a pod asking for one MIG device\n# takes a free instance of its profile (docs/scenarios.md#mig-partitions).\nmig:\n")
		}
		fmt.Fprintf(&b, "  - nodes: [%s]\n    layouts:\n", yamlString(m.Node))
		for _, l := range m.Layout {
			parts := make([]string, len(l))
			for i, s := range l {
				parts[i] = fmt.Sprintf("{profile: %s, start: %d}", yamlString(s.Profile), s.Start)
			}
			fmt.Fprintf(&b, "      - [%s]\n", strings.Join(parts, ", "))
		}
	}
	return b.String()
}

// gridStub is the commented grid section: the import cannot know where
// and when the cluster runs.
const gridStub = `
# Where and when the cluster runs (docs/scenarios.md, "Money and carbon"): without
# a grid section, US-NY-NYIS from 2023-01-01 00:00 UTC, PUE 1. The embedded series
# cover 2023: start says which 2023 hour the earliest pod's creation stands for.
# grid:
#   region: US-NY-NYIS            # US-NY-NYIS, US-CAL-CISO, US-TEX-ERCO, US-MIDA-PJM, DE-LU
#   start: "2023-01-01 00:00:00"  # UTC, on the hour
#   pue: 1.0                      # your data centre's, 1..3
#   price: my-prices.csv          # or your own series (docs/formats.md)
#   carbon: my-carbon.csv
`

// hardwareStub is a commented hardware section with one GPU entry per
// model the catalog lacks, its fields to fill.
func hardwareStub(models []string) string {
	if len(models) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n# GPU models of nodes.csv that the catalog lacks: fill in their figures and\n# uncomment (docs/scenarios.md, \"Your own hardware\"); the scenario does not run\n# until every model is known.\n# hardware:\n#   gpus:\n")
	for _, m := range models {
		fmt.Fprintf(&b, "#     - name: %s\n#       idle_w: 0        # watts of an idle GPU that no pod holds (nvidia-smi, no work)\n#       tdp_w: 0         # its power limit (nvidia-smi -q -d POWER)\n#       memory_gib: 0\n#       source: \"where these figures come from\"\n", m)
	}
	return b.String()
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// PodTime is when a pod started and completed, as kube-state-metrics
// records them (kube_pod_start_time, kube_pod_completion_time); a zero
// time is unknown.
type PodTime struct {
	Start, End time.Time
}

// FillTimes completes the pods' times from times (by namespace/name): a
// pod without a start gets its start, a pod that ended (Succeeded,
// Failed) without a known end gets its completion. The dump's own status
// times are kept where it has them. A completion before the start is not
// used (a warning says so). The snapshot is recomputed. It returns how
// many pods got a time.
func (d *Dump) FillTimes(times map[string]PodTime) int {
	n := 0
	for i := range d.Pods {
		p := &d.Pods[i]
		t, ok := times[p.Name]
		if !ok {
			continue
		}
		changed := false
		if p.Start.IsZero() && !t.Start.IsZero() {
			p.Start, changed = t.Start, true
		}
		ended := p.Phase == "Succeeded" || p.Phase == "Failed"
		switch {
		case t.End.IsZero() || p.Start.IsZero():
		case t.End.Before(p.Start):
			// Whatever the phase: a completion before the start is wrong
			// data, and the user is told rather than left to guess.
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s pod %s: kube_pod_completion_time %s before its start %s: not used", p.Placement, p.Name, t.End.UTC().Format(time.RFC3339), p.Start.UTC().Format(time.RFC3339)))
		case ended && p.End.IsZero():
			p.End, changed = t.End, true
		}
		if changed {
			n++
		}
	}
	d.snapshot()
	return n
}

// podGPULimit is the most GPUs one pod may ask for on nodes: the most any
// node has, and at most 8 (the engine's per-pod rule, job.Demand); 8
// when no node has GPUs (such a pod then fits nowhere, which the checks
// before a replay report).
func podGPULimit(nodes []cluster.NodeSpec) int {
	most := 0
	for _, n := range nodes {
		most = max(most, n.GPUs)
	}
	if most == 0 {
		return 8
	}
	return min(most, 8)
}
