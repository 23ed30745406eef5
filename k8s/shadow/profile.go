package shadow

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	intree "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/wattsched/wattsched/k8s/plugins"
)

// snapshotLister is the framework's view of the cluster: the snapshot of
// the cycle being run (set before each cycle, which runs on the caller's
// goroutine). The plugins read nodes and pods from it exactly as they
// read kube-scheduler's snapshot. Embedding the interface promotes
// whatever methods the Kubernetes minor's SharedLister has.
type snapshotLister struct {
	fwk.SharedLister
}

func newSnapshotLister() *snapshotLister {
	return &snapshotLister{SharedLister: cache.NewEmptySnapshot()}
}

func (l *snapshotLister) set(s *cache.Snapshot) { l.SharedLister = s }

// profile is one KubeSchedulerProfile's framework, built as kube-scheduler
// builds it (the in-tree registry plus wattsched's plugins.Registry), over
// a snapshot the shadow sets before each cycle.
type profile struct {
	name   string
	fw     framework.Framework
	lister *snapshotLister
}

// newProfile builds p's framework. The client is kube-scheduler's handle
// to the API; the shadow never calls the plugins that write (PreBind,
// Bind, Permit, PostBind).
func newProfile(ctx context.Context, p *schedulerapi.KubeSchedulerProfile, cs clientset.Interface, f informers.SharedInformerFactory, rec events.EventRecorderLogger) (*profile, error) {
	registry := intree.NewInTreeRegistry()
	if err := registry.Merge(plugins.Registry()); err != nil {
		return nil, err
	}
	l := newSnapshotLister()
	// The DynamicResources plugin reads claims, slices and device classes
	// through a DRA manager, as kube-scheduler builds it (scheduler.New):
	// without one it fails on every pod from 1.37 (extended resources).
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), f.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	tracker, err := resourceslicetracker.StartTracker(ctx, resourceslicetracker.Options{SliceInformer: f.Resource().V1().ResourceSlices(), KubeClient: cs})
	if err != nil {
		return nil, fmt.Errorf("profile %s: resource slice tracker: %w", p.SchedulerName, err)
	}
	fw, err := frameworkruntime.NewFramework(ctx, registry, p,
		frameworkruntime.WithSnapshotSharedLister(l), frameworkruntime.WithClientSet(cs),
		frameworkruntime.WithInformerFactory(f), frameworkruntime.WithEventRecorder(rec),
		frameworkruntime.WithSharedDRAManager(dynamicresources.NewDRAManager(ctx, claims, tracker, f)))
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.SchedulerName, err)
	}
	return &profile{name: p.SchedulerName, fw: fw, lister: l}, nil
}

// ranking is a profile's scheduling cycle of one pod on one snapshot.
type ranking struct {
	// Feasible is the number of nodes that passed the profile's filters.
	Feasible int
	// Best are the feasible nodes with the highest total score (the
	// profile's weighted sum after normalisation), in name order.
	Best []string
	// Total is each feasible node's total score.
	Total map[string]int64
	// Unschedulable is PreFilter's or the filters' reason when no node is
	// feasible.
	Unschedulable string
}

// cycle runs the profile's PreFilter, Filter on every node, PreScore and
// Score (with NormalizeScore and weights) for pod on snap, as
// kube-scheduler's scheduling cycle does with percentageOfNodesToScore
// 100, and stops before Reserve.
func (p *profile) cycle(ctx context.Context, snap *cache.Snapshot, pod *v1.Pod) (fwk.CycleState, ranking, error) {
	p.lister.set(snap)
	state := framework.NewCycleState()
	r := ranking{Total: map[string]int64{}}
	res, st, _ := p.fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() {
		if st.IsRejected() {
			r.Unschedulable = st.Message()
			return state, r, nil
		}
		return state, r, st.AsError()
	}
	infos, err := snap.NodeInfos().List()
	if err != nil {
		return state, r, err
	}
	var feasible []fwk.NodeInfo
	var why string
	for _, ni := range infos {
		if !res.AllNodes() && !res.NodeNames.Has(ni.Node().Name) {
			continue
		}
		st := p.fw.RunFilterPlugins(ctx, state, pod, ni)
		switch {
		case st.IsSuccess():
			feasible = append(feasible, ni)
		case st.IsRejected():
			why = st.Message()
		default:
			return state, r, st.AsError()
		}
	}
	r.Feasible = len(feasible)
	if len(feasible) == 0 {
		r.Unschedulable = why
		if why == "" {
			r.Unschedulable = "no nodes"
		}
		return state, r, nil
	}
	if st := p.fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() && !st.IsSkip() {
		return state, r, st.AsError()
	}
	scores, st := p.fw.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return state, r, st.AsError()
	}
	top := int64(-1 << 62)
	for _, s := range scores {
		r.Total[s.Name] = s.TotalScore
		switch {
		case s.TotalScore > top:
			top, r.Best = s.TotalScore, []string{s.Name}
		case s.TotalScore == top:
			r.Best = append(r.Best, s.Name)
		}
	}
	sortStrings(r.Best)
	return state, r, nil
}

// gpus runs the profile's Reserve for pod on node (WattschedGPU picks the
// GPUs there with the profile's selector) and Unreserve, and returns the
// GPUs picked: nil when the profile has no WattschedGPU or the pod asks
// for none.
func (p *profile) gpus(ctx context.Context, state fwk.CycleState, pod *v1.Pod, node string) ([]int, error) {
	if st := p.fw.RunReservePluginsReserve(ctx, state, pod, node); !st.IsSuccess() {
		p.fw.RunReservePluginsUnreserve(ctx, state, pod, node)
		return nil, fmt.Errorf("reserve on %s: %w", node, st.AsError())
	}
	g := plugins.ReservedGPUs(state, pod)
	p.fw.RunReservePluginsUnreserve(ctx, state, pod, node)
	return g, nil
}
