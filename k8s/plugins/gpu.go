package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// GPUName is the GPU-sharing plugin's name.
const GPUName = "WattschedGPU"

// WorkloadArgs name FGD's target workload: an embedded openb pod list by
// short name ("default", "gpushare40", ...), or a pod list file in the
// openb CSV format, which wins when set.
type WorkloadArgs struct {
	Workload     string `json:"workload,omitempty"`
	WorkloadFile string `json:"workloadFile,omitempty"`
	// PopularityThreshold is FGD's class cut-off in percent (default 95).
	PopularityThreshold int `json:"popularityThreshold,omitempty"`
}

func (a WorkloadArgs) build() (*fgd.Policy, error) {
	var tasks []job.Task
	var err error
	if a.WorkloadFile != "" {
		f, ferr := os.Open(a.WorkloadFile)
		if ferr != nil {
			return nil, fmt.Errorf("workloadFile: %w", ferr)
		}
		defer f.Close()
		tasks, err = alibaba2023.ReadPods(f, a.WorkloadFile)
	} else {
		name := a.Workload
		if name == "" {
			name = "default"
		}
		tasks, err = alibaba2023.Pods(name)
	}
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	fa := fgd.Args{}.Default()
	if a.PopularityThreshold != 0 {
		fa.PopularityThreshold = a.PopularityThreshold
	}
	return fgd.New(fa, policy.Deps{Workload: tasks})
}

// GPUArgs configure WattschedGPU.
type GPUArgs struct {
	// GPUSelector picks the GPUs inside the chosen node: "bestfit" (the
	// FGD simulator's rule), "pwr" or "fgd". The core Placer uses the
	// selector of the highest-weighted score plugin: name the same one for
	// the same choices.
	GPUSelector string `json:"gpuSelector,omitempty"`
	// FGD is the workload the "fgd" selector measures fragmentation against.
	FGD WorkloadArgs `json:"fgd,omitempty"`
	// CatalogFile replaces the built-in hardware catalog (same format as
	// the core's hw/catalog.yaml).
	CatalogFile string `json:"catalogFile,omitempty"`
	// ExtraCatalogFile adds GPU and CPU models to the catalog (built-in,
	// or catalogFile's): the bring-your-own-hardware format that
	// `wattsched run --catalog` reads and `wattsched calibrate` writes. A
	// name already in the catalog is an error.
	ExtraCatalogFile string `json:"extraCatalogFile,omitempty"`
}

// GPU is the GPU-sharing plugin: it filters nodes by CPU, memory and GPU
// fit (including the accepted GPU models) and picks the pod's GPUs at
// Reserve. The GPUs are recorded in the pod's wattsched.io/gpu-index
// annotation before or as the pod is bound. When the profile makes it the
// first bind plugin, Bind writes the annotation in the Binding itself (the
// API server sets node and annotation in one write). Otherwise PreBind
// patches the pod before the binder runs.
type GPU struct {
	h fwk.Handle
	s *shared

	bindOnce sync.Once
	isBinder bool
	// scoreSet names the profile's score plugins (scores).
	scoreOnce sync.Once
	scoreSet  map[string]bool
}

var (
	_ fwk.PreFilterPlugin   = (*GPU)(nil)
	_ fwk.FilterPlugin      = (*GPU)(nil)
	_ fwk.ReservePlugin     = (*GPU)(nil)
	_ fwk.PreBindPlugin     = (*GPU)(nil)
	_ fwk.BindPlugin        = (*GPU)(nil)
	_ fwk.EnqueueExtensions = (*GPU)(nil)
)

// NewGPU is the plugin factory.
func NewGPU(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var a GPUArgs
	if err := decode(obj, &a); err != nil {
		return nil, fmt.Errorf("%s args: %w", GPUName, err)
	}
	s := sharedState(h)
	if a.CatalogFile != "" {
		c, err := loadCatalog(a.CatalogFile)
		if err != nil {
			return nil, fmt.Errorf("%s args: catalogFile: %w", GPUName, err)
		}
		s.mu.Lock()
		s.cat = c
		s.mu.Unlock()
	}
	if a.ExtraCatalogFile != "" {
		extra, err := hw.ParseFile(a.ExtraCatalogFile)
		if err != nil {
			return nil, fmt.Errorf("%s args: extraCatalogFile: %w", GPUName, err)
		}
		s.mu.Lock()
		c, err := s.cat.With(extra, a.ExtraCatalogFile)
		if err == nil {
			s.cat = c
		}
		s.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("%s args: extraCatalogFile: %w", GPUName, err)
		}
	}
	var sel policy.GPUSelector
	switch a.GPUSelector {
	case "", "bestfit":
	case "pwr":
		p, err := pwr.New(pwr.Args{}, policy.Deps{Power: power.PWR{}})
		if err != nil {
			return nil, err
		}
		sel = p
	case "fgd":
		p, err := a.FGD.build()
		if err != nil {
			return nil, fmt.Errorf("%s args: fgd: %w", GPUName, err)
		}
		sel = p
	default:
		return nil, fmt.Errorf("%s args: gpuSelector %q: want bestfit, pwr or fgd", GPUName, a.GPUSelector)
	}
	s.mu.Lock()
	s.selector = sel
	s.mu.Unlock()
	return &GPU{h: h, s: s}, nil
}

// Name implements fwk.Plugin.
func (g *GPU) Name() string { return GPUName }

// PreFilter reads the pod's demand; a malformed request makes the pod
// unschedulable with the reason.
func (g *GPU) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	g.s.resetStates(len(nodes))
	g.s.observe(nodes)
	if cd := demand(state, pod); cd.err != nil {
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, cd.err.Error())
	}
	return nil, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin: Filter rebuilds
// a node whose NodeInfo changed, so preemption's what-ifs need nothing here.
func (g *GPU) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter admits nodes where the pod fits (cluster.Fits, as in the core).
func (g *GPU) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	cd := demand(state, pod)
	if cd.err != nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, cd.err.Error())
	}
	n, err := g.s.node(ni)
	if err != nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	if ok, why := cluster.Fits(&cd.task.Demand, n); !ok {
		return fwk.NewStatus(fwk.Unschedulable, why)
	}
	return nil
}

// selectGPUs picks the pod's GPUs on n.
func (s *shared) selectGPUs(t *job.Task, n *cluster.Node) []int {
	if t.GPUCount == 0 {
		return nil
	}
	s.mu.RLock()
	sel := s.selector
	s.mu.RUnlock()
	if sel == nil {
		return cluster.BestFitGPUs(&t.Demand, n)
	}
	// Selectors may keep caches (FGD's memo): one call at a time.
	s.selMu.Lock()
	defer s.selMu.Unlock()
	return sel.SelectGPUs(t, n)
}

// Reserve picks the GPUs and remembers them until the annotation is seen.
func (g *GPU) Reserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	cd := demand(state, pod)
	if cd.err == nil {
		g.recordPlacement(state, cd, nodeName)
	}
	if cd.err != nil || cd.task.GPUCount == 0 {
		return nil
	}
	ni, err := g.h.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil {
		return fwk.AsStatus(err)
	}
	n, err := g.s.node(ni)
	if err != nil {
		return fwk.NewStatus(fwk.Unschedulable, err.Error())
	}
	gpus := g.s.selectGPUs(&cd.task, n)
	if gpus == nil {
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("node %s: no GPU fits", nodeName))
	}
	cd.gpus = gpus
	g.s.reserve(pod.UID, gpus)
	return nil
}

// Unreserve forgets the reservation.
func (g *GPU) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	g.s.forget(pod.UID)
}

// binds reports whether this plugin is the profile's first bind plugin.
func (g *GPU) binds() bool {
	g.bindOnce.Do(func() {
		if f, ok := g.h.(interface{ ListPlugins() *schedulerapi.Plugins }); ok {
			if ps := f.ListPlugins(); ps != nil && len(ps.Bind.Enabled) > 0 && ps.Bind.Enabled[0].Name == GPUName {
				g.isBinder = true
			}
		}
	})
	return g.isBinder
}

// preBindPreFlight is PreBindPreFlight's status (prebind*.go: the
// adapter per minor): skip unless another plugin binds a GPU pod.
func (g *GPU) preBindPreFlight(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ string) *fwk.Status {
	if cd := demand(state, pod); cd.gpus == nil || g.binds() {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// PreBind writes the chosen GPUs to the pod's wattsched.io/gpu-index
// annotation before another plugin binds the pod.
func (g *GPU) PreBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ string) *fwk.Status {
	cd := demand(state, pod)
	if cd.gpus == nil || g.binds() {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{gpushare.AnnGPUIndex: gpushare.FormatGPUIndex(cd.gpus)}}})
	if err != nil {
		return fwk.AsStatus(err)
	}
	if _, err := g.h.ClientSet().CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("writing %s on pod %s/%s: %w", gpushare.AnnGPUIndex, pod.Namespace, pod.Name, err))
	}
	return nil
}

// Bind binds the pod, with its GPUs in the Binding's annotations: the API
// server merges them into the pod as it sets the node.
func (g *GPU) Bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	b := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if cd := demand(state, pod); cd.gpus != nil {
		b.Annotations = map[string]string{gpushare.AnnGPUIndex: gpushare.FormatGPUIndex(cd.gpus)}
	}
	if err := g.h.ClientSet().CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("binding pod %s/%s to %s: %w", pod.Namespace, pod.Name, nodeName, err))
	}
	return nil
}

// EventsToRegister implements fwk.EnqueueExtensions: a pod rejected
// for lack of room may fit after a pod leaves or a node changes.
func (g *GPU) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.Update}},
	}, nil
}
