// Package shadow runs wattsched's scheduling profiles beside a cluster's
// own scheduler and binds nothing: for every pod that scheduler binds, it
// runs each profile's filters and scores (the kube-scheduler framework
// with the same plugins as wattsched's kube-scheduler, built as the kwok
// replay builds them) and records where the profile would have placed
// the pod, and it keeps a counterfactual ledger of power, energy, cost
// and carbon through the simulator's replay accounting (replay.Account):
// what really ran, and what each profile would have run.
//
// Counterfactual state. Each profile keeps its own shadow cluster state:
// the pods it placed, on its nodes and GPUs, from their real bind to
// their real end. A pod's shadow placement is the profile's choice on
// that state, so the ledger of a profile is a consistent run (no two
// pods on one GPU) that an offline replay of the same pods with that
// policy reproduces. Its choice on the real snapshot (the cluster as the
// shadow's informers saw it just before the bind) is computed too: it
// explains each differing placement in the kwok replay parity's terms
// (replay.ReasonTie, ReasonState, ReasonPlugin, ReasonStarted).
package shadow

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/k8s/replay"
)

// Placement is a node and the GPUs on it.
type Placement struct {
	Node string `json:"node,omitempty"`
	GPUs []int  `json:"gpus,omitempty"`
}

// Decision is one profile's placement of one pod.
type Decision struct {
	// Placement is the profile's choice on its own shadow state (empty:
	// no node was feasible there; the pod is not in the profile's ledger).
	Placement
	// RealBest are the profile's equally best nodes on the real snapshot
	// (the cluster just before the bind) and RealFeasible the nodes that
	// passed its filters there.
	RealBest     []string `json:"real_best,omitempty"`
	RealFeasible int      `json:"real_feasible"`
	// Reason is why Node differs from the actual node (replay.Reason*), ""
	// when it is the same node.
	Reason string `json:"reason,omitempty"`
	// SameKind: the same node or a node of the same kind (GPU model and
	// count, CPU, memory), as the replay parity counts it.
	SameKind bool `json:"same_kind"`
	// Unschedulable is the profile's reason when no node was feasible on
	// its shadow state.
	Unschedulable string `json:"unschedulable,omitempty"`
}

// Entry is one pod the cluster's scheduler bound.
type Entry struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// Demand is the pod's request in the cluster model.
	Demand job.Demand `json:"-"`
	// Bound is when the shadow saw the bind (its start for the ledger),
	// Ended when it saw the pod finish or go (zero: still running).
	Bound time.Time `json:"bound"`
	Ended time.Time `json:"ended"`
	// Before: the pod was bound before the shadow started; it stays on
	// its node in every ledger and gets no decisions.
	Before bool `json:"before,omitempty"`
	// Actual is where it really ran (its GPUs from wattsched.io/gpu-index,
	// else best fit on its node, as gpushare.BuildNode counts them).
	Actual Placement `json:"actual"`
	// Shadow is each profile's decision, in the profiles' order.
	Shadow []Decision `json:"shadow,omitempty"`
	// Skipped says why the profiles were not asked (a pod with resource
	// claims, a node the model cannot read); "" otherwise.
	Skipped string `json:"skipped,omitempty"`
}

// Options configure a Shadow.
type Options struct {
	// Seed seeds the tie-break between a profile's equally best nodes
	// (cluster.TieRank over the nodes by name): the simulator's rule, so
	// that with a scenario's first_seed the shadow and `wattsched run`
	// break ties alike.
	Seed uint64
	// Events, when set, emits one Event per pod whose placement a profile
	// would change (reason WattschedShadow). Off, the shadow writes nothing
	// to the API server.
	Events bool
	// Factor is simulated seconds per wall-clock second in the ledger (1
	// on a real cluster; a kwok replay's time factor beside one).
	Factor float64
	// Log, if set, receives progress lines.
	Log func(format string, args ...any)
}

// Shadow watches a cluster and keeps the decisions and the ledger.
type Shadow struct {
	cs       clientset.Interface
	o        Options
	factory  informers.SharedInformerFactory
	nodes    corelisters.NodeLister
	profiles []*profile
	rec      events.EventRecorderLogger
	bc       events.EventBroadcaster
	cat      *hw.Catalog
	start    time.Time

	mu sync.Mutex
	// entries in the order the shadow saw the binds; byUID indexes them.
	entries []*Entry
	byUID   map[types.UID]int
	// real holds the running pods on their actual nodes (copies carrying
	// their GPUs as wattsched.io/gpu-index); state[i] the same pods on
	// profile i's placements.
	real  map[types.UID]*v1.Pod
	state []map[types.UID]*v1.Pod
	// specs are the nodes seen, by name (the ledger's cluster).
	specs map[string]cluster.NodeSpec
	errs  []error
	// measured integrates measured power (WithMeter; nil without).
	measured *measured
}

// New builds a shadow of cfg's profiles over the cluster of cs. Start
// starts its informers.
func New(ctx context.Context, cs clientset.Interface, cfg *schedulerapi.KubeSchedulerConfiguration, o Options) (*Shadow, error) {
	if o.Factor == 0 {
		o.Factor = 1
	}
	if !(o.Factor >= 1 && o.Factor <= 1e7) {
		return nil, fmt.Errorf("time factor %v: want 1 .. 1e7", o.Factor)
	}
	if len(cfg.Profiles) == 0 {
		return nil, fmt.Errorf("scheduler configuration: no profiles")
	}
	// The framework counts its plugins in kube-scheduler's metrics, which
	// exist once registered (kube-scheduler registers them at start; once
	// per process).
	schedmetrics.Register()
	s := &Shadow{cs: cs, o: o, cat: hw.Default(), byUID: map[types.UID]int{}, real: map[types.UID]*v1.Pod{}, specs: map[string]cluster.NodeSpec{}}
	s.factory = informers.NewSharedInformerFactory(cs, 0)
	if o.Events {
		s.bc = events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
		s.rec = s.bc.NewRecorder(scheme.Scheme, "wattsched-shadow")
	} else {
		// A recorder with no channel drops every event: the plugins'
		// inconsistent-pod Events are not written either.
		s.rec = &events.FakeRecorder{}
	}
	for i := range cfg.Profiles {
		p, err := newProfile(ctx, &cfg.Profiles[i], cs, s.factory, s.rec)
		if err != nil {
			return nil, err
		}
		s.profiles = append(s.profiles, p)
		s.state = append(s.state, map[types.UID]*v1.Pod{})
	}
	s.nodes = s.factory.Core().V1().Nodes().Lister()
	return s, nil
}

// Profiles are the names of the profiles, in the configuration's order.
func (s *Shadow) Profiles() []string {
	out := make([]string, len(s.profiles))
	for i, p := range s.profiles {
		out[i] = p.name
	}
	return out
}

func (s *Shadow) logf(format string, args ...any) {
	if s.o.Log != nil {
		s.o.Log(format, args...)
	}
}

// Start starts the informers and returns once their caches are synced;
// they run until ctx ends.
func (s *Shadow) Start(ctx context.Context) error {
	s.start = time.Now().Round(0)
	if s.bc != nil {
		s.bc.StartRecordingToSink(ctx.Done())
	}
	nodeInf := s.factory.Core().V1().Nodes().Informer()
	if _, err := nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.seeNode,
		UpdateFunc: func(_, n any) { s.seeNode(n) },
	}); err != nil {
		return err
	}
	podInf := s.factory.Core().V1().Pods().Informer()
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { s.seePod(ctx, obj, initial) },
		UpdateFunc: func(_, n any) { s.seePod(ctx, n, false) },
		DeleteFunc: func(obj any) { s.gone(obj) },
	}); err != nil {
		return err
	}
	s.factory.Start(ctx.Done())
	for t, ok := range s.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer %v did not sync", t)
		}
	}
	return nil
}

func (s *Shadow) seeNode(obj any) {
	n, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	spec, err := gpushare.Spec(n)
	if err != nil {
		return
	}
	if _, err := cluster.New(s.cat, []cluster.NodeSpec{spec}); err != nil {
		return
	}
	s.mu.Lock()
	s.specs[n.Name] = spec
	s.mu.Unlock()
}

// terminal: a Succeeded or Failed pod holds no resources (kube-scheduler
// frees them then too).
func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// seePod handles a pod event: the bind of a pod not seen bound before
// (its decisions, on the state before it), or its end.
func (s *Shadow) seePod(ctx context.Context, obj any, initial bool) {
	p, ok := obj.(*v1.Pod)
	if !ok || p.Spec.NodeName == "" {
		return
	}
	now := time.Now().Round(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	k, seen := s.byUID[p.UID]
	switch {
	case seen && terminal(p):
		s.end(k, now)
	case !seen && !terminal(p):
		if err := s.bind(ctx, p, now, initial); err != nil {
			s.errs = append(s.errs, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err))
			s.logf("pod %s/%s: %v", p.Namespace, p.Name, err)
		}
	}
}

func (s *Shadow) gone(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*v1.Pod)
	if !ok {
		return
	}
	now := time.Now().Round(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, seen := s.byUID[p.UID]; seen {
		s.end(k, now)
	}
}

// end records that entry k stopped at now and frees it in every state.
func (s *Shadow) end(k int, now time.Time) {
	e := s.entries[k]
	if !e.Ended.IsZero() {
		return
	}
	e.Ended = now
	delete(s.real, e.UID)
	for _, st := range s.state {
		delete(st, e.UID)
	}
}

// placed is p as a pod on pl: its node and its GPUs as its
// wattsched.io/gpu-index, which the plugins read.
func placed(p *v1.Pod, pl Placement) *v1.Pod {
	c := p.DeepCopy()
	c.Spec.NodeName = pl.Node
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	delete(c.Annotations, gpushare.AnnGPUIndex)
	if pl.GPUs != nil {
		c.Annotations[gpushare.AnnGPUIndex] = gpushare.FormatGPUIndex(pl.GPUs)
	}
	return c
}

// pending is p as the cluster's scheduler saw it before the bind.
func pending(p *v1.Pod) *v1.Pod {
	c := p.DeepCopy()
	c.Spec.NodeName = ""
	delete(c.Annotations, gpushare.AnnGPUIndex)
	c.Status = v1.PodStatus{Phase: v1.PodPending}
	return c
}

// snapshot is the nodes with pods.
func snapshot(pods map[types.UID]*v1.Pod, nodes []*v1.Node) *schedcache.Snapshot {
	list := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		list = append(list, p)
	}
	// Deterministic order of each node's pods (BuildNode places pods
	// without GPUs in order): by namespace and name.
	sort.Slice(list, func(a, b int) bool {
		if list[a].Namespace != list[b].Namespace {
			return list[a].Namespace < list[b].Namespace
		}
		return list[a].Name < list[b].Name
	})
	return schedcache.NewSnapshot(list, nodes)
}

// bestFit is the GPUs cluster.BestFitGPUs picks for d on node in the state
// pods (nil when d asks for none or none fits).
func (s *Shadow) bestFit(snap *schedcache.Snapshot, node string, d *job.Demand) ([]int, error) {
	if d.GPUCount == 0 {
		return nil, nil
	}
	ni, err := snap.NodeInfos().Get(node)
	if err != nil {
		return nil, err
	}
	var allocs []gpushare.Allocation
	for _, pi := range ni.GetPods() {
		g, _, ierr := gpushare.GPUIndex(pi.GetPod())
		allocs = append(allocs, gpushare.Allocation{Pod: pi.GetPod(), GPUs: g, IndexErr: ierr})
	}
	n, _, err := gpushare.BuildNode(s.cat, ni.Node(), allocs)
	if err != nil {
		return nil, err
	}
	return cluster.BestFitGPUs(d, n), nil
}

// pick is the lowest cluster.TieRank among best (the simulator's rule),
// over the nodes of snap by name.
func (s *Shadow) pick(snap *schedcache.Snapshot, best []string) string {
	if len(best) <= 1 {
		if len(best) == 1 {
			return best[0]
		}
		return ""
	}
	infos, _ := snap.NodeInfos().List()
	ns := make([]*cluster.Node, len(infos))
	idx := map[string]int{}
	for i, ni := range infos {
		ns[i] = &cluster.Node{Name: ni.Node().Name}
		idx[ni.Node().Name] = i
	}
	rank := cluster.TieRank(ns, s.o.Seed)
	out := best[0]
	for _, b := range best[1:] {
		if rank[idx[b]] < rank[idx[out]] {
			out = b
		}
	}
	return out
}

// sameKind: nodes a and b have the same GPU model and count, CPU and
// memory (the replay parity's "same kind of node").
func (s *Shadow) sameKind(a, b string) bool {
	sa, oka := s.specs[a]
	sb, okb := s.specs[b]
	return oka && okb && sa.GPUModel == sb.GPUModel && sa.GPUs == sb.GPUs && sa.CPUMilli == sb.CPUMilli && sa.MemMiB == sb.MemMiB
}

// bind records pod p, bound at now: its actual GPUs, each profile's
// choice on the real snapshot and on its shadow state, then adds it to
// every state (s.mu held).
func (s *Shadow) bind(ctx context.Context, p *v1.Pod, now time.Time, initial bool) error {
	d, err := gpushare.Demand(p)
	if err != nil {
		return err
	}
	d.GPUSpec = nil
	e := &Entry{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Demand: d, Bound: now, Actual: Placement{Node: p.Spec.NodeName}, Before: initial}
	if initial {
		e.Bound = s.start
	}
	nodes, err := s.nodes.List(labels.Everything())
	if err != nil {
		return err
	}
	slices.SortFunc(nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	realSnap := snapshot(s.real, nodes)
	if g, ok, ierr := gpushare.GPUIndex(p); ok && ierr == nil {
		e.Actual.GPUs = g
	} else if e.Actual.GPUs, err = s.bestFit(realSnap, e.Actual.Node, &d); err != nil {
		e.Skipped = fmt.Sprintf("node %s: %v", e.Actual.Node, err)
	}
	if _, ok := s.specs[e.Actual.Node]; !ok && e.Skipped == "" {
		e.Skipped = fmt.Sprintf("node %s: not in the hardware catalog's terms (no %s label, or an unknown model)", e.Actual.Node, gpushare.LabelGPUProduct)
	}
	if len(p.Spec.ResourceClaims) > 0 {
		e.Skipped = "resource claims: the shadow's profiles run without a DRA manager"
	}
	if !initial && e.Skipped == "" {
		for i, pr := range s.profiles {
			dec, err := s.decide(ctx, i, pr, p, &d, &e.Actual, realSnap, nodes)
			if err != nil {
				return fmt.Errorf("profile %s: %w", pr.name, err)
			}
			e.Shadow = append(e.Shadow, dec)
			record(pr.name, e, &dec, s.specs)
			if s.o.Events && dec.Reason != "" {
				s.rec.Eventf(p, nil, v1.EventTypeNormal, "WattschedShadow", "Shadow",
					"profile %s would have placed the pod on %s (bound to %s; %s)", pr.name, orNone(dec.Node), e.Actual.Node, dec.Reason)
			}
		}
	}
	s.byUID[p.UID] = len(s.entries)
	s.entries = append(s.entries, e)
	if e.Skipped != "" && !initial {
		s.logf("pod %s/%s: %s", p.Namespace, p.Name, e.Skipped)
	}
	s.real[p.UID] = placed(p, e.Actual)
	for i, st := range s.state {
		switch {
		case initial || e.Skipped != "":
			st[p.UID] = placed(p, e.Actual)
		case e.Shadow[i].Node != "":
			st[p.UID] = placed(p, e.Shadow[i].Placement)
		}
	}
	return nil
}

func orNone(n string) string {
	if n == "" {
		return "no node"
	}
	return n
}

// decide is profile i's decision for p, bound to actual: its choice on
// its own state, explained by its ranking on the real snapshot.
func (s *Shadow) decide(ctx context.Context, i int, pr *profile, p *v1.Pod, d *job.Demand, actual *Placement, realSnap *schedcache.Snapshot, nodes []*v1.Node) (Decision, error) {
	var dec Decision
	q := pending(p)
	_, rr, err := pr.cycle(ctx, realSnap, q)
	if err != nil {
		return dec, err
	}
	dec.RealBest, dec.RealFeasible = rr.Best, rr.Feasible
	snap := snapshot(s.state[i], nodes)
	state, sr, err := pr.cycle(ctx, snap, q)
	if err != nil {
		return dec, err
	}
	dec.Node = s.pick(snap, sr.Best)
	if dec.Node == "" {
		dec.Unschedulable = sr.Unschedulable
		dec.Reason = replay.ReasonStarted
		return dec, nil
	}
	if dec.GPUs, err = pr.gpus(ctx, state, q, dec.Node); err != nil {
		return dec, err
	}
	if dec.GPUs == nil {
		if dec.GPUs, err = s.bestFit(snap, dec.Node, d); err != nil {
			return dec, err
		}
	}
	dec.SameKind = dec.Node == actual.Node || s.sameKind(dec.Node, actual.Node)
	switch {
	case dec.Node == actual.Node:
	case len(rr.Best) == 1 && rr.Best[0] == actual.Node:
		dec.Reason = replay.ReasonState
	case slices.Contains(rr.Best, actual.Node):
		dec.Reason = replay.ReasonTie
	default:
		dec.Reason = replay.ReasonPlugin
	}
	return dec, nil
}

// Entries is a copy of the entries so far (decisions included).
func (s *Shadow) Entries() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Entry, len(s.entries))
	for i, e := range s.entries {
		out[i] = *e
	}
	return out
}

// Err is the first error of the event handlers, if any.
func (s *Shadow) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) > 0 {
		return s.errs[0]
	}
	return nil
}

func sortStrings(a []string) { sort.Strings(a) }
