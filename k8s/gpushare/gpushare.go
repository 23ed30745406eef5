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

// Demand is what pod asks of one node, in the cluster model's units:
// CPU and memory from its effective requests (as NodeResourcesFit counts
// them), GPUs from nvidia.com/gpu or wattsched.io/gpu-milli, accepted
// models from wattsched.io/gpu-models.
func Demand(pod *v1.Pod) (job.Demand, error) {
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
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
}

// BuildNode rebuilds node's state in the cluster model from the pods placed
// on it: pods whose GPUs are known first, in order, then the others on the
// GPUs cluster.BestFitGPUs picks. Any inconsistency (a malformed
// annotation, two pods on a full GPU, an unknown GPU model) is an error
// naming the node and the pod.
func BuildNode(cat *hw.Catalog, node *v1.Node, allocs []Allocation) (*cluster.Node, error) {
	spec, err := Spec(node)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", node.Name, err)
	}
	c, err := cluster.New(cat, []cluster.NodeSpec{spec})
	if err != nil {
		return nil, fmt.Errorf("node %s: %w (label %s or annotation %s)", node.Name, unwrapNode(err), LabelGPUProduct, AnnCPUModel)
	}
	n := c.Nodes[0]
	if err := overrides(node, n); err != nil {
		return nil, fmt.Errorf("node %s: %w", node.Name, err)
	}
	tasks := make([]job.Task, len(allocs))
	var later []int
	for i := range allocs {
		a := &allocs[i]
		d, err := Demand(a.Pod)
		if err != nil {
			return nil, fmt.Errorf("node %s: pod %s/%s: %w", node.Name, a.Pod.Namespace, a.Pod.Name, err)
		}
		// The node's placed pods run wherever they are: their model
		// constraint is not re-checked.
		d.GPUSpec = nil
		tasks[i] = job.Task{ID: job.ID(i), Demand: d}
		if d.GPUCount > 0 && a.GPUs == nil {
			later = append(later, i)
			continue
		}
		if err := c.Allocate(&tasks[i], 0, a.GPUs); err != nil {
			return nil, fmt.Errorf("node %s: pod %s/%s (GPUs %v): %w", node.Name, a.Pod.Namespace, a.Pod.Name, a.GPUs, err)
		}
	}
	for _, i := range later {
		a := &allocs[i]
		g := cluster.BestFitGPUs(&tasks[i].Demand, n)
		if g == nil {
			return nil, fmt.Errorf("node %s: pod %s/%s: no GPU left for it", node.Name, a.Pod.Namespace, a.Pod.Name)
		}
		if err := c.Allocate(&tasks[i], 0, g); err != nil {
			return nil, fmt.Errorf("node %s: pod %s/%s: %w", node.Name, a.Pod.Namespace, a.Pod.Name, err)
		}
	}
	return n, nil
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
