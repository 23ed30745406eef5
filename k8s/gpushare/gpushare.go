// Package gpushare translates between Kubernetes objects and wattsched's
// cluster model: a pod's GPU demand, a node's capacity and power profile,
// and the per-GPU allocation of a node rebuilt from the pods bound to it.
//
// The representation a real cluster can use:
//
//   - whole GPUs are the nvidia.com/gpu extended resource (limits, or
//     requests equal to limits, as the NVIDIA device plugin requires);
//   - a fraction of one GPU is the pod annotation wattsched.io/gpu-milli
//     (1..999 thousandths of a GPU) with no nvidia.com/gpu request;
//   - the GPU models a pod accepts are wattsched.io/gpu-models, "|"-separated
//     values of the node label nvidia.com/gpu.product (the openb traces'
//     gpu_spec);
//   - the GPUs the scheduler picked are wattsched.io/gpu-index,
//     comma-separated device indices, written before binding, so that the
//     per-GPU state survives scheduler restarts;
//   - a node's GPU model is its nvidia.com/gpu.product label (as GPU feature
//     discovery sets it), resolved in the hardware catalog for its idle and
//     peak power; wattsched.io/cpu-model names its CPU (default
//     hw.DefaultCPU); wattsched.io/{gpu,cpu}-{idle,tdp}-watts override the
//     catalog's figures for one node.
package gpushare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

// Names of the resource, label and annotations.
const (
	ResourceGPU     v1.ResourceName = "nvidia.com/gpu"
	LabelGPUProduct                 = "nvidia.com/gpu.product"

	Prefix         = "wattsched.io/"
	AnnGPUMilli    = Prefix + "gpu-milli"
	AnnGPUModels   = Prefix + "gpu-models"
	AnnGPUIndex    = Prefix + "gpu-index"
	AnnCPUModel    = Prefix + "cpu-model"
	AnnGPUIdleW    = Prefix + "gpu-idle-watts"
	AnnGPUTDPW     = Prefix + "gpu-tdp-watts"
	AnnCPUIdleW    = Prefix + "cpu-idle-watts"
	AnnCPUTDPW     = Prefix + "cpu-tdp-watts"
	bytesPerMiB    = 1 << 20
	maxGPUsPerNode = 64
)

// Annotations of a pod's work, read by the energy score plugin.
const (
	// AnnWorkload is a pod's workload class, training or inference (the
	// catalog's speed figure its duration scales by; absent: training).
	AnnWorkload = Prefix + "workload"
	// AnnReferenceGPU is the GPU model (catalog name or alias) a pod's
	// duration was measured on; absent: unknown.
	AnnReferenceGPU = Prefix + "reference-gpu"
)

// Bounds on a pod's requests: a million cores, an exbibyte.
var (
	maxCPU    = resource.MustParse("1M")
	maxMemory = resource.MustParse("1Ei")
)

// Demand is what pod asks of one node, in the cluster model's units:
// CPU and memory from its effective requests (as NodeResourcesFit counts
// them), GPUs from nvidia.com/gpu or wattsched.io/gpu-milli, accepted
// models from wattsched.io/gpu-models.
func Demand(pod *v1.Pod) (job.Demand, error) {
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	// Quantities too large for the model's int64 milli-units would wrap
	// (a request of 1e30 CPUs became 0 and fitted everywhere).
	if q := req.Cpu(); q.Cmp(maxCPU) > 0 {
		return job.Demand{}, fmt.Errorf("cpu request %s: above %s", q.String(), maxCPU.String())
	}
	if q := req.Memory(); q.Cmp(maxMemory) > 0 {
		return job.Demand{}, fmt.Errorf("memory request %s: above %s", q.String(), maxMemory.String())
	}
	d := job.Demand{CPUMilli: req.Cpu().MilliValue()}
	mem := req.Memory().Value()
	d.MemMiB = (mem + bytesPerMiB - 1) / bytesPerMiB
	gq := req[ResourceGPU]
	whole := gq.Value()
	if whole < 0 || whole > 8 {
		return d, fmt.Errorf("%s %d: want 0..8", ResourceGPU, whole)
	}
	if s, ok := pod.Annotations[AnnGPUMilli]; ok {
		m, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		switch {
		case err != nil:
			return d, fmt.Errorf("annotation %s %q: not an integer", AnnGPUMilli, s)
		case m < 1 || m >= job.MilliPerGPU:
			return d, fmt.Errorf("annotation %s %d: want 1..%d thousandths of one GPU (whole GPUs are %s)", AnnGPUMilli, m, job.MilliPerGPU-1, ResourceGPU)
		case whole > 0:
			return d, fmt.Errorf("annotation %s and resource %s are exclusive: a pod shares one GPU or takes whole ones", AnnGPUMilli, ResourceGPU)
		}
		d.GPUCount, d.GPUMilli = 1, m
	} else if whole > 0 {
		d.GPUCount, d.GPUMilli = int(whole), job.MilliPerGPU
	}
	if s, ok := pod.Annotations[AnnGPUModels]; ok {
		for _, m := range strings.Split(s, "|") {
			if m = strings.TrimSpace(m); m == "" {
				return d, fmt.Errorf("annotation %s %q: empty model name", AnnGPUModels, s)
			}
			d.GPUSpec = append(d.GPUSpec, m)
		}
		if d.GPUCount == 0 {
			return d, fmt.Errorf("annotation %s on a pod that asks for no GPU", AnnGPUModels)
		}
	}
	if err := d.Validate(); err != nil {
		return d, err
	}
	return d, nil
}

// Work is what pod says about its work beyond its demand: its kind from
// wattsched.io/workload (training, the default, or inference) and the GPU
// model its duration was measured on from wattsched.io/reference-gpu
// (empty when absent). The energy score plugin reads them (perf.Speed).
func Work(pod *v1.Pod) (job.Kind, string, error) {
	kind := job.Training
	if s, ok := pod.Annotations[AnnWorkload]; ok {
		switch k := job.Kind(strings.TrimSpace(s)); k {
		case job.Training, job.Inference:
			kind = k
		default:
			return kind, "", fmt.Errorf("annotation %s %q: want %s or %s", AnnWorkload, s, job.Training, job.Inference)
		}
	}
	ref := ""
	if s, ok := pod.Annotations[AnnReferenceGPU]; ok {
		if ref = strings.TrimSpace(s); ref == "" {
			return kind, "", fmt.Errorf("annotation %s %q: empty model name", AnnReferenceGPU, s)
		}
	}
	return kind, ref, nil
}

// GPUIndex parses pod's wattsched.io/gpu-index annotation; ok is false
// when the pod has none.
func GPUIndex(pod *v1.Pod) (gpus []int, ok bool, err error) {
	s, ok := pod.Annotations[AnnGPUIndex]
	if !ok {
		return nil, false, nil
	}
	for _, f := range strings.Split(s, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 0 || g >= maxGPUsPerNode {
			return nil, true, fmt.Errorf("annotation %s %q: want comma-separated GPU indices 0..%d", AnnGPUIndex, s, maxGPUsPerNode-1)
		}
		gpus = append(gpus, g)
	}
	return gpus, true, nil
}

// FormatGPUIndex is the annotation value for gpus.
func FormatGPUIndex(gpus []int) string {
	s := make([]string, len(gpus))
	for i, g := range gpus {
		s[i] = strconv.Itoa(g)
	}
	return strings.Join(s, ",")
}

// Spec is a node's capacity in the cluster model's units.
func Spec(node *v1.Node) (cluster.NodeSpec, error) {
	a := node.Status.Allocatable
	if a.Cpu().Cmp(maxCPU) > 0 || a.Memory().Cmp(maxMemory) > 0 {
		return cluster.NodeSpec{Name: node.Name}, fmt.Errorf("allocatable cpu %s or memory %s above %s / %s", a.Cpu().String(), a.Memory().String(), maxCPU.String(), maxMemory.String())
	}
	s := cluster.NodeSpec{Name: node.Name, CPUMilli: a.Cpu().MilliValue(), MemMiB: a.Memory().Value() / bytesPerMiB}
	gq := a[ResourceGPU]
	if g := gq.Value(); g < 0 || g > maxGPUsPerNode {
		return s, fmt.Errorf("allocatable %s %d: want 0..%d", ResourceGPU, g, maxGPUsPerNode)
	} else {
		s.GPUs = int(g)
	}
	if s.GPUs > 0 {
		s.GPUModel = node.Labels[LabelGPUProduct]
		if s.GPUModel == "" {
			return s, fmt.Errorf("%d %s allocatable but no %s label", s.GPUs, ResourceGPU, LabelGPUProduct)
		}
	}
	s.CPUModel = node.Annotations[AnnCPUModel]
	if s.CPUMilli <= 0 {
		return s, fmt.Errorf("allocatable cpu %dm: want positive", s.CPUMilli)
	}
	return s, nil
}

// Allocation is a pod placed on a node with its GPUs, for BuildNode.
type Allocation struct {
	Pod *v1.Pod
	// GPUs are the pod's device indices; nil when unknown (a pod bound by
	// another scheduler, or before wattsched wrote the annotation).
	GPUs []int
	// IndexErr is set when the pod's gpu-index annotation is malformed
	// (GPUs is then nil).
	IndexErr error
	// Demand, when set, is the pod's demand instead of what its requests
	// and annotations say: a pod whose GPUs come through DRA claims.
	Demand *job.Demand
	// DemandErr is why the pod's claims could not be read (Demand then
	// holds its CPU and memory only).
	DemandErr error
}

// NodeGPUs are a node's GPUs as its DRA driver's ResourceSlices list them.
type NodeGPUs struct {
	Count int
	Model string // the nvidia.com/gpu.product spelling
}

// Problem is a pod on a node whose annotations or requests do not add up
// (malformed, over capacity, two pods on one full GPU, a GPU the node
// lacks). The pod still runs there: BuildNode counts what it can of it
// instead of failing the node.
type Problem struct {
	Pod    *v1.Pod
	Reason string
}

// BuildNode rebuilds node's state in the cluster model from the pods placed
// on it: pods whose GPUs are known first, in order, then the others on the
// GPUs cluster.BestFitGPUs picks. A pod that does not add up never fails
// the node (anyone who can create pods could otherwise take nodes out of
// scheduling): its CPU and memory are counted, its GPUs are best-fit when
// its recorded ones are impossible, or left unknown when none fit or its
// GPU request cannot be read, and it is reported as a Problem. Only the
// node itself (capacity, labels, power overrides, an unknown GPU model) is
// an error.
func BuildNode(cat *hw.Catalog, node *v1.Node, allocs []Allocation) (*cluster.Node, []Problem, error) {
	return BuildNodeWith(cat, node, allocs, nil)
}

// BuildNodeWith is BuildNode for a node whose GPUs may come through DRA:
// when its allocatable counts no nvidia.com/gpu, dra (if not nil) gives
// its GPUs and their model.
func BuildNodeWith(cat *hw.Catalog, node *v1.Node, allocs []Allocation, dra *NodeGPUs) (*cluster.Node, []Problem, error) {
	spec, err := Spec(node)
	if err != nil {
		return nil, nil, fmt.Errorf("node %s: %w", node.Name, err)
	}
	if spec.GPUs == 0 && dra != nil && dra.Count > 0 {
		if dra.Count > maxGPUsPerNode {
			return nil, nil, fmt.Errorf("node %s: %d GPUs in ResourceSlices: want at most %d", node.Name, dra.Count, maxGPUsPerNode)
		}
		spec.GPUs, spec.GPUModel = dra.Count, dra.Model
	}
	c, err := cluster.New(cat, []cluster.NodeSpec{spec})
	if err != nil {
		return nil, nil, fmt.Errorf("node %s: %w (label %s or annotation %s)", node.Name, unwrapNode(err), LabelGPUProduct, AnnCPUModel)
	}
	n := c.Nodes[0]
	if err := overrides(node, n); err != nil {
		return nil, nil, fmt.Errorf("node %s: %w", node.Name, err)
	}
	var problems []Problem
	report := func(a *Allocation, format string, args ...any) {
		problems = append(problems, Problem{Pod: a.Pod, Reason: fmt.Sprintf(format, args...)})
	}
	tasks := make([]job.Task, len(allocs))
	var later []int
	// place allocates task i on gpus; when that fails it counts the pod's
	// CPU and memory alone (at most what is free), GPUs unknown.
	place := func(i int, gpus []int) {
		a := &allocs[i]
		err := c.Allocate(&tasks[i], 0, gpus)
		if err == nil {
			return
		}
		d := job.Demand{CPUMilli: min(tasks[i].CPUMilli, n.FreeCPUMilli), MemMiB: min(tasks[i].MemMiB, n.FreeMemMiB)}
		tasks[i].Demand = d
		report(a, "does not fit the node's free resources (%v); counted %dm CPU and %d MiB, GPUs unknown", err, d.CPUMilli, d.MemMiB)
		if err := c.Allocate(&tasks[i], 0, nil); err != nil {
			report(a, "not counted: %v", err)
		}
	}
	for i := range allocs {
		a := &allocs[i]
		d, err := Demand(a.Pod)
		if a.Demand != nil {
			d, err = *a.Demand, a.DemandErr
		}
		if err != nil {
			// CPU and memory come first in Demand and stay valid.
			report(a, "%v; counted its CPU and memory, GPUs unknown", err)
			d = job.Demand{CPUMilli: max(0, d.CPUMilli), MemMiB: max(0, d.MemMiB)}
		}
		// The node's placed pods run wherever they are: their model
		// constraint is not re-checked.
		d.GPUSpec = nil
		tasks[i] = job.Task{ID: job.ID(i), Demand: d}
		if a.IndexErr != nil {
			report(a, "%v; its GPUs are best-fit", a.IndexErr)
		}
		if d.GPUCount > 0 && a.GPUs == nil {
			later = append(later, i)
			continue
		}
		if d.GPUCount == 0 && len(a.GPUs) > 0 {
			report(a, "has %s %v but asks for no GPU; ignored", AnnGPUIndex, a.GPUs)
			place(i, nil)
			continue
		}
		if ok, why := fitsOn(&d, n, a.GPUs); !ok {
			report(a, "%s %v: %s; its GPUs are best-fit", AnnGPUIndex, a.GPUs, why)
			later = append(later, i)
			continue
		}
		place(i, a.GPUs)
	}
	for _, i := range later {
		a := &allocs[i]
		g := cluster.BestFitGPUs(&tasks[i].Demand, n)
		if g == nil {
			report(a, "no GPU left for it on the node; counted its CPU and memory, GPUs unknown")
			d := tasks[i].Demand
			tasks[i].Demand = job.Demand{CPUMilli: d.CPUMilli, MemMiB: d.MemMiB}
			place(i, nil)
			continue
		}
		place(i, g)
	}
	return n, problems, nil
}

// fitsOn says whether d can take exactly gpus on n now.
func fitsOn(d *job.Demand, n *cluster.Node, gpus []int) (bool, string) {
	if len(gpus) != d.GPUCount {
		return false, fmt.Sprintf("%d indices for %d GPUs", len(gpus), d.GPUCount)
	}
	seen := map[int]bool{}
	for _, g := range gpus {
		switch {
		case g < 0 || g >= len(n.GPUFree):
			return false, fmt.Sprintf("GPU %d, the node has %d", g, len(n.GPUFree))
		case seen[g]:
			return false, fmt.Sprintf("GPU %d twice", g)
		case n.GPUFree[g] < d.GPUMilli:
			return false, fmt.Sprintf("GPU %d has %d milli free, the pod takes %d", g, n.GPUFree[g], d.GPUMilli)
		}
		seen[g] = true
	}
	return true, ""
}

func unwrapNode(err error) error {
	// cluster.New prefixes "node 0 (name): "; the caller names the node.
	s := err.Error()
	if i := strings.Index(s, "): "); i >= 0 && strings.HasPrefix(s, "node ") {
		return fmt.Errorf("%s", s[i+3:])
	}
	return err
}

func overrides(node *v1.Node, n *cluster.Node) error {
	if n.GPU != nil {
		g := *n.GPU
		if err := wattsPair(node, "GPU", AnnGPUIdleW, AnnGPUTDPW, &g.IdleW, &g.TDPW); err != nil {
			return err
		}
		n.GPU = &g
	} else if _, ok := node.Annotations[AnnGPUIdleW]; ok {
		return fmt.Errorf("annotation %s on a node without GPUs", AnnGPUIdleW)
	}
	p := *n.CPU
	if err := wattsPair(node, "CPU", AnnCPUIdleW, AnnCPUTDPW, &p.IdleW, &p.TDPW); err != nil {
		return err
	}
	n.CPU = &p
	return nil
}

// wattsPair applies a device's idle and peak power annotations, if any.
func wattsPair(node *v1.Node, what, idleKey, tdpKey string, idle, tdp *hw.Watts) error {
	for _, f := range []struct {
		key string
		v   *hw.Watts
	}{{idleKey, idle}, {tdpKey, tdp}} {
		s, ok := node.Annotations[f.key]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Errorf("annotation %s %q: want watts >= 0", f.key, s)
		}
		*f.v = hw.Watts(v)
	}
	if *idle > *tdp {
		return fmt.Errorf("%s idle power %v W above its peak %v W (annotations %s, %s)", what, *idle, *tdp, idleKey, tdpKey)
	}
	return nil
}
