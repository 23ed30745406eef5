package plugins

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// BudgetName is the power-budget admission plugin's name.
const BudgetName = "PowerBudget"

// BudgetArgs configure PowerBudget.
type BudgetArgs struct {
	// BudgetWatts is the cluster power budget, compared with the PWR
	// estimated power (pwr-fgd eqs. 1-3) of every node with every placed
	// pod, plus the pod's increase.
	BudgetWatts float64 `json:"budgetWatts"`
	// Measured, when set, turns on measured mode: running pods count
	// max(measured, estimated) per node, read from Prometheus (DCGM
	// exporter or Kepler series); see MeasuredArgs and
	// docs/measured-power.md.
	Measured *MeasuredArgs `json:"measured,omitempty"`
	// Domains, when set, adds power domains from node labels (racks,
	// PDUs...), each with its own limit; see DomainArgs and
	// docs/power-domains.md.
	Domains *DomainArgs `json:"domains,omitempty"`
}

// Budget holds pods back while the cluster's estimated power with them
// would exceed the budget, and admits them in order of creation when power
// frees up. The rule is the core's policy.PowerGate, which the simulator's
// Placer applies too (a test checks that both decide the same).
//
//   - PreFilter: a pod waits (Unschedulable, with the figures) when an
//     older pod is already waiting for power, or when even its cheapest
//     placement would exceed the budget. A waiting pod is retried when a
//     pod is deleted or placed, or a node changes.
//   - Filter: nodes where the pod would take the cluster over the budget
//     (with the GPUs the GPU selector would pick) are rejected.
//
// The scheduling cycle is serial and its snapshot includes every assumed
// pod, so an admitted pod never takes the estimate over the budget.
// Waiting happens in the scheduling queue rather than at Permit: a pod
// waiting at Permit holds its reservation, whose power would count against
// the pods ahead of it.
type Budget struct {
	gate *policy.PowerGate
	s    *shared
	// pods reads pods' current state, to drop stale waiters (nil in unit
	// tests without an informer factory).
	pods corelisters.PodLister
	// act moves pods back to the active queue: when a waiter is dropped
	// for a reason other than being admitted, the pods behind it get no
	// other event to retry on (updates of unscheduled pods requeue only
	// the pod itself).
	act fwk.PodActivator

	mu      sync.Mutex
	waiting []waiter
	// gangs is the power held for gangs whose first member was reserved
	// and whose other members are not yet (gang.go); guarded by mu.
	gangs map[string]*gangHold

	// meter is the gate's Meter in measured mode (nil: estimates only).
	meter *watchedMeter
	// dom is the power-domain configuration (nil: the cluster budget
	// alone); domWarned the topology warnings last logged.
	dom       *DomainArgs
	domWarned string
	// idle is the check at start of the budget against the nodes' idle
	// power (budget_idle.go).
	idle *idleCheck

	// memo keeps each node's counted power from cycle to cycle, by its
	// position in the snapshot's node list: a cycle recounts only the
	// nodes whose NodeInfo changed (a new generation), and every node
	// when the shared state's ids were reset or, in measured mode, when
	// the meter's answers may have changed (a refresh, or a reading
	// going stale). ceiling bounds a pod's increase on every node the
	// memo has counted since its last full recount. memoMu guards both
	// against the metrics collector, which reads the memo when scraped.
	memoMu     sync.Mutex
	memo       []nodeMemo
	memoEpoch  uint64
	meterGen   uint64
	meterUntil time.Time
	ceiling    power.Ceiling

	// The pod's increase on each node state (shared.states), stamped
	// with the PreFilter call (cycle) that computed it: nodes in one
	// state share it, and the buffers are reused from cycle to cycle.
	// PreFilter writes them (kube-scheduler runs one scheduling cycle at
	// a time per profile); Filter, in parallel, only reads them.
	cycle uint64
	stamp []uint64
	inc   []nodeIncrease
	// ns and ids are PreFilter's buffers: the modelled nodes and their
	// state ids.
	ns  []*cluster.Node
	ids []int32
}

// nodeMemo is one node's figures as PreFilter last counted them, from
// its NodeInfo ni of generation gen; e is nil when the node cannot be
// modelled (the GPU plugin's Filter reports it).
type nodeMemo struct {
	ni     fwk.NodeInfo
	gen    int64
	e      *nodeEntry
	sample nodeSample
}

type waiter struct {
	uid       types.UID
	at        int64 // creation time, Unix nanoseconds
	name      string
	gang      string // gangOf the pod, "" for a pod of its own
	namespace string
	pod       string
	gen       int64             // spec generation when it started waiting
	ann       map[string]string // annotations then
}

var (
	_ fwk.PreFilterPlugin   = (*Budget)(nil)
	_ fwk.FilterPlugin      = (*Budget)(nil)
	_ fwk.EnqueueExtensions = (*Budget)(nil)
)

// NewBudget is the plugin factory.
func NewBudget(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return newBudget(ctx, obj, h, promMeter)
}

// budgetWith is a factory whose measured mode reads meter (tests).
func budgetWith(meter meterFor) frameworkruntime.PluginFactory {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return newBudget(ctx, obj, h, meter)
	}
}

func newBudget(ctx context.Context, obj runtime.Object, h fwk.Handle, meter meterFor) (fwk.Plugin, error) {
	var a BudgetArgs
	if err := decode(obj, &a); err != nil {
		return nil, fmt.Errorf("%s args: %w", BudgetName, err)
	}
	if !(a.BudgetWatts > 0) || math.IsInf(a.BudgetWatts, 0) {
		return nil, fmt.Errorf("%s args: budgetWatts %v: want a positive number of watts", BudgetName, a.BudgetWatts)
	}
	b := &Budget{gate: &policy.PowerGate{Limit: power.Limit(a.BudgetWatts), Model: power.PWR{}}, s: sharedState(h), act: h}
	if a.Measured != nil {
		if err := a.Measured.validate(); err != nil {
			return nil, fmt.Errorf("%s args: %w", BudgetName, err)
		}
		m, err := meter(*a.Measured)
		if err != nil {
			return nil, fmt.Errorf("%s args: measured: %w", BudgetName, err)
		}
		b.meter = newWatchedMeter(m)
		b.gate.Meter = b.meter
		if r, ok := m.(refresher); ok {
			go refreshLoop(ctx, r, time.Duration(a.Measured.RefreshSeconds*float64(time.Second)))
		}
	}
	if a.Domains != nil {
		if err := a.Domains.validate(); err != nil {
			return nil, fmt.Errorf("%s args: %w", BudgetName, err)
		}
		b.dom = a.Domains
	}
	budgetWatts.Set(a.BudgetWatts)
	b.idle = startIdleCheck(ctx, h, b.s, hw.Watts(a.BudgetWatts))
	if f := h.SharedInformerFactory(); f != nil {
		b.pods = f.Core().V1().Pods().Lister()
		_, _ = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if p, ok := obj.(*v1.Pod); ok {
					b.forgetMember(p.UID)
					b.drop(p.UID)
				}
			},
			// A waiting pod that was changed (its requests or annotations,
			// a binding by another scheduler, a deletion in progress)
			// leaves the waiting list: it rejoins, in creation order, at
			// its next scheduling attempt, so a stale entry never holds
			// the pods behind it.
			UpdateFunc: func(oldObj, newObj any) {
				o, ok1 := oldObj.(*v1.Pod)
				p, ok2 := newObj.(*v1.Pod)
				if ok1 && ok2 && (p.Spec.NodeName != "" || p.DeletionTimestamp != nil || p.Generation != o.Generation ||
					!maps.Equal(p.Annotations, o.Annotations)) {
					b.drop(p.UID)
				}
			},
		})
	}
	return b, nil
}

// Name implements fwk.Plugin.
func (b *Budget) Name() string { return BudgetName }

const budgetKey fwk.StateKey = "wattsched.io/budget"

// budgetData is what PreFilter leaves for Filter: the cluster's counted
// power, and the cycle whose increases (Budget.inc, by node state) are
// the pod's. A NodeInfo that Filter sees changed, as preemption's are, is
// modelled afresh: its state's increase is used if this cycle computed
// it, else computed.
type budgetData struct {
	clusterW hw.Watts
	cycle    uint64
	// anywhere: the pod's largest increase on any node (power.Ceiling)
	// keeps the cluster within the budget, so every node passes.
	anywhere bool
	// epoch is the shared state's id epoch the increases were computed
	// in: ids of another epoch (a reset by a plugin running after this
	// one) name other states.
	epoch uint64
	// dom is the cycle's power domains and their loads (nil without
	// domains).
	dom *domainCycle
}

type nodeIncrease struct {
	w    hw.Watts
	fits bool
	// exact: w is the increase with the GPUs the selector picks; else an
	// upper bound over every choice (PowerGate.MaxIncrease).
	exact bool
}

func (d *budgetData) Clone() fwk.StateData { return d }

func (b *Budget) admit(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, w := range b.waiting {
		if w.uid == uid {
			b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
			return
		}
	}
}

// drop removes uid from the waiting list without admitting it and, if it
// was there, moves the pods still waiting back to the active queue.
func (b *Budget) drop(uid types.UID) {
	b.mu.Lock()
	found := false
	var rest []waiter
	for _, w := range b.waiting {
		if w.uid == uid {
			found = true
		} else {
			rest = append(rest, w)
		}
	}
	b.waiting = rest
	b.mu.Unlock()
	if found {
		b.activate(rest)
	}
}

// activate moves the listed waiting pods back to the active queue.
func (b *Budget) activate(ws []waiter) {
	if b.act == nil || b.pods == nil || len(ws) == 0 {
		return
	}
	pods := map[string]*v1.Pod{}
	for _, w := range ws {
		if p, err := b.pods.Pods(w.namespace).Get(w.pod); err == nil {
			pods[w.name] = p
		}
	}
	if len(pods) > 0 {
		b.act.Activate(klog.Background(), pods)
	}
}

// wait records pod as waiting (once) and returns the oldest waiting pod.
func (b *Budget) wait(pod *v1.Pod) waiter {
	b.mu.Lock()
	defer b.mu.Unlock()
	found := false
	for _, w := range b.waiting {
		found = found || w.uid == pod.UID
	}
	if !found {
		b.waiting = append(b.waiting, waiter{uid: pod.UID, at: pod.CreationTimestamp.UnixNano(), name: pod.Namespace + "/" + pod.Name, gang: gangOf(pod),
			namespace: pod.Namespace, pod: pod.Name, gen: pod.Generation, ann: maps.Clone(pod.Annotations)})
		sort.SliceStable(b.waiting, func(i, j int) bool {
			if b.waiting[i].at != b.waiting[j].at {
				return b.waiting[i].at < b.waiting[j].at
			}
			return b.waiting[i].name < b.waiting[j].name
		})
	}
	return b.waiting[0]
}

// head is the oldest waiting pod that is still waiting: entries for pods
// that were deleted, bound elsewhere or changed since they started
// waiting are dropped first (the changed pod rejoins at its next attempt),
// whatever the order in which the scheduler and this plugin see events.
func (b *Budget) head() (waiter, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	dropped := false
	for len(b.waiting) > 0 {
		w := b.waiting[0]
		if !b.stale(w) {
			break
		}
		b.waiting, dropped = b.waiting[1:], true
	}
	if dropped {
		go b.activate(slices.Clone(b.waiting))
	}
	if len(b.waiting) == 0 {
		return waiter{}, false
	}
	return b.waiting[0], true
}

func (b *Budget) stale(w waiter) bool {
	if b.pods == nil {
		return false
	}
	p, err := b.pods.Pods(w.namespace).Get(w.pod)
	if err != nil {
		return apierrors.IsNotFound(err)
	}
	return p.UID != w.uid || p.Spec.NodeName != "" || p.DeletionTimestamp != nil || p.Generation != w.gen || !maps.Equal(p.Annotations, w.ann)
}

// PreFilter implements the admission gate.
func (b *Budget) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	cd := b.s.demand(state, pod)
	if cd.err != nil {
		b.drop(pod.UID) // a pod that cannot be read never holds others back
		budgetDecisions.WithLabelValues("rejected", "unreadable").Inc()
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, cd.err.Error())
	}
	// A gang's members are behind no one once its power is held, nor
	// behind a member of their own gang (gang.go).
	g := gangOf(pod)
	if h, ok := b.head(); ok && h.uid != pod.UID && (g == "" || h.gang != g) && !b.holding(g) {
		b.wait(pod)
		budgetDecisions.WithLabelValues("waiting", "behind_older_pod").Inc()
		return nil, fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("power budget: waiting behind %s, which waits for power", h.name))
	}
	est, total := b.count(nodes)
	// Power held for gangs' members not yet placed counts as placed.
	heldW, heldBy := b.held(pod.UID)
	total += heldW
	lastDecision.publish(b)
	b.cycle++
	if k := b.s.numStates(); len(b.stamp) < k {
		b.stamp = append(b.stamp, make([]uint64, k-len(b.stamp))...)
		b.inc = append(b.inc, make([]nodeIncrease, k-len(b.inc))...)
	}
	bd := &budgetData{clusterW: total, cycle: b.cycle, epoch: b.memoEpoch}
	if b.dom != nil {
		dc, err := b.buildDomains(heldBy)
		if err != nil {
			// A topology that cannot be bound holds no one back: every
			// pod gets the error until the nodes' labels change.
			b.drop(pod.UID)
			budgetDecisions.WithLabelValues("rejected", "bad_topology").Inc()
			return nil, fwk.NewStatus(fwk.Unschedulable, err.Error())
		}
		bd.dom = dc
	}
	clusterPower.Set(float64(est))
	gateClusterPower.Set(float64(total))
	budgetHeadroom.Set(float64(b.gate.Limit.Headroom(total)))
	if g != "" && !b.holding(g) {
		// The first member of a gang: the gang's power as a whole.
		ns, _ := b.modelled()
		if st := b.gangPreFilter(state, pod, g, ns, total, bd.dom); st != nil {
			return nil, st
		}
	}
	d := &cd.task.Demand
	// With domains, the shortcuts over the cluster's headroom do not
	// apply: every node's exact increase is needed for its domains.
	if hold, _ := b.gate.Hold(total, b.ceiling.Increase(d)); !hold && bd.dom == nil {
		// More headroom than the pod could add on any node, in any state:
		// admitted without looking at the nodes, and the framework skips
		// Filter for this cycle (Filter would pass every node).
		bd.anywhere = true
		state.Write(budgetKey, bd)
		b.admit(pod.UID)
		budgetDecisions.WithLabelValues("admitted", "").Inc()
		return nil, fwk.NewStatus(fwk.Skip)
	}
	ns, ids := b.modelled()
	if bd.dom == nil && b.admitsAtBound(d, cd, ns, ids, total) {
		state.Write(budgetKey, bd)
		b.admit(pod.UID)
		budgetDecisions.WithLabelValues("admitted", "").Inc()
		return nil, nil
	}
	cheapest, fits := hw.Watts(math.Inf(1)), false
	for k, n := range ns {
		id := ids[k]
		m := &b.inc[id]
		if b.stamp[id] != b.cycle || !m.exact {
			inc, ok := b.increase(d, n, cd)
			*m, b.stamp[id] = nodeIncrease{w: inc, fits: ok, exact: true}, b.cycle
		}
		if m.fits {
			cheapest, fits = min(cheapest, m.w), true
		}
	}
	state.Write(budgetKey, bd)
	if !fits {
		// Fits nowhere: a capacity question, not a power one.
		b.admit(pod.UID)
		budgetDecisions.WithLabelValues("passed", "fits_nowhere").Inc()
		return nil, nil
	}
	if hold, reason := b.gate.Hold(total, cheapest); hold {
		// A pod that could not be admitted even on an idle cluster must
		// not wait: nothing will free enough power, and every pod behind
		// it would wait forever.
		pick := func(d *job.Demand, n *cluster.Node) []int { return b.s.selectGPUs(&cd.task, n) }
		if never, why := b.gate.NeverFits(&cd.task.Demand, ns, pick); never {
			b.drop(pod.UID)
			budgetDecisions.WithLabelValues("rejected", "never_fits").Inc()
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, why)
		}
		b.wait(pod)
		budgetDecisions.WithLabelValues("waiting", "over_budget").Inc()
		return nil, fwk.NewStatus(fwk.Unschedulable, reason)
	}
	if bd.dom != nil {
		if hold, reason := b.domainHold(bd.dom, ns, ids, total); hold {
			pick := func(d *job.Demand, n *cluster.Node) []int { return b.s.selectGPUs(&cd.task, n) }
			if never, why := b.domainNever(bd.dom, &cd.task.Demand, pick); never {
				b.drop(pod.UID)
				budgetDecisions.WithLabelValues("rejected", "never_fits").Inc()
				return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, why)
			}
			b.wait(pod)
			budgetDecisions.WithLabelValues("waiting", "over_domain_limit").Inc()
			return nil, fwk.NewStatus(fwk.Unschedulable, reason)
		}
	}
	b.admit(pod.UID)
	budgetDecisions.WithLabelValues("admitted", "").Inc()
	return nil, nil
}

// Metrics on kube-scheduler's metrics endpoint (Prometheus naming: the
// wattsched_ prefix, units in the names, _total counters).
var (
	budgetWatts = metrics.NewGauge(&metrics.GaugeOpts{Subsystem: "wattsched", Name: "power_budget_watts",
		Help: "The PowerBudget plugin's cluster power budget.", StabilityLevel: metrics.ALPHA})
	clusterPower = metrics.NewGauge(&metrics.GaugeOpts{Subsystem: "wattsched", Name: "estimated_cluster_power_watts",
		Help: "The cluster's estimated power (PWR model, placed and assumed pods) at the last admission decision.", StabilityLevel: metrics.ALPHA})
	budgetHeadroom = metrics.NewGauge(&metrics.GaugeOpts{Subsystem: "wattsched", Name: "power_headroom_watts",
		Help: "Budget minus the cluster power PowerBudget counted at the last admission decision (the estimate, or max(measured, estimated) per node in measured mode; negative: over).", StabilityLevel: metrics.ALPHA})
	budgetDecisions = metrics.NewCounterVec(&metrics.CounterOpts{Subsystem: "wattsched", Name: "power_budget_decisions_total",
		Help: "PowerBudget admission decisions: admitted, waiting (over_budget, behind_older_pod), rejected (never_fits, unreadable), passed (fits_nowhere).", StabilityLevel: metrics.ALPHA},
		[]string{"decision", "reason"})
)

func init() {
	legacyregistry.MustRegister(budgetWatts, clusterPower, budgetHeadroom, budgetDecisions)
	legacyregistry.CustomMustRegister(&nodeCollector{})
}

// nodeSample is one node's power at an admission decision.
type nodeSample struct {
	node         string
	est, counted hw.Watts
	measured     hw.Watts // with hasReading: the reading the gate used
	hasReading   bool
}

// lastDecision is the budget plugin (of any profile) that made the last
// admission decision, whose per-node figures nodeCollector exports when
// scraped. Setting a gauge per node at every cycle cost more than the
// rest of the budget check at 500 nodes (label lookups, four metrics per
// node), and copying the figures every cycle grew with the cluster.
var lastDecision decisionSamples

type decisionSamples struct {
	mu sync.Mutex
	b  *Budget
}

// publish makes b the last decision's plugin.
func (d *decisionSamples) publish(b *Budget) {
	d.mu.Lock()
	d.b = b
	d.mu.Unlock()
}

// samples are the last decision's per-node figures, and whether it was
// in measured mode (export readings and fallbacks).
func (d *decisionSamples) samples() ([]nodeSample, bool) {
	d.mu.Lock()
	b := d.b
	d.mu.Unlock()
	if b == nil {
		return nil, false
	}
	b.memoMu.Lock()
	defer b.memoMu.Unlock()
	out := make([]nodeSample, 0, len(b.memo))
	for _, m := range b.memo {
		if m.e != nil {
			out = append(out, m.sample)
		}
	}
	return out, b.meter != nil
}

// count is the cluster's estimated power and the power the gate counts
// (the sums over the modelled nodes), from the memo where it holds.
func (b *Budget) count(nodes []fwk.NodeInfo) (est, total hw.Watts) {
	b.memoMu.Lock()
	defer b.memoMu.Unlock()
	valid := true // an empty memo (the first cycle) recounts every node anyway
	if epoch := b.s.stateEpoch(); epoch != b.memoEpoch {
		b.memoEpoch, valid = epoch, false
	}
	if b.meter != nil {
		gen, now, until, ok := b.meter.answers()
		if !ok || gen != b.meterGen || (!b.meterUntil.IsZero() && now.After(b.meterUntil)) {
			valid = false
		}
		if !valid {
			b.meterGen, b.meterUntil = gen, until
		}
		valid = valid && ok
	}
	if !valid {
		clear(b.memo)
		b.ceiling = power.Ceiling{}
	}
	if len(b.memo) > len(nodes) {
		clear(b.memo[len(nodes):])
		b.memo = b.memo[:len(nodes)]
	} else {
		b.memo = append(b.memo, make([]nodeMemo, len(nodes)-len(b.memo))...)
	}
	for i, ni := range nodes {
		m, gen := &b.memo[i], ni.GetGeneration()
		if m.ni != ni || m.gen != gen {
			*m = nodeMemo{ni: ni, gen: gen}
			if e, err := b.s.entry(ni); err == nil && e.err == nil {
				ew, counted, r, measured := b.gate.CountReading(e.n)
				m.e = e
				m.sample = nodeSample{node: e.n.Name, est: ew, counted: counted, measured: r.Watts, hasReading: measured}
				b.ceiling.Add(e.n)
			} // else the GPU plugin's Filter reports it
		}
		if m.e != nil {
			est, total = est+m.sample.est, total+m.sample.counted
		}
	}
	return est, total
}

// modelled lists the memo's modelled nodes and their state ids, in the
// snapshot's order, in PreFilter's buffers.
func (b *Budget) modelled() ([]*cluster.Node, []int32) {
	b.memoMu.Lock()
	defer b.memoMu.Unlock()
	ns, ids := b.ns[:0], b.ids[:0]
	for _, m := range b.memo {
		if m.e != nil {
			ns, ids = append(ns, m.e.n), append(ids, m.e.state)
		}
	}
	b.ns, b.ids = ns, ids
	return ns, ids
}

// Per-node gauges, exported from lastDecision at each scrape: a node
// that has left the cluster leaves them at the next decision.
var (
	nodePowerDesc = metrics.NewDesc("wattsched_estimated_node_power_watts",
		"Each node's estimated power (PWR model) at the last admission decision.", []string{"node"}, nil, metrics.ALPHA, "")
	gateNodePowerDesc = metrics.NewDesc("wattsched_gate_node_power_watts",
		"The power PowerBudget counted for each node at the last admission decision: the estimate, or max(measured, estimated) in measured mode.", []string{"node"}, nil, metrics.ALPHA, "")
	measuredNodePowerDesc = metrics.NewDesc("wattsched_measured_node_power_watts",
		"Each node's measured power (the sum of its series: GPUs for DCGM, the whole node for Kepler) used at the last admission decision; absent while the node falls back to its estimate.", []string{"node"}, nil, metrics.ALPHA, "")
	measuredFallbackDesc = metrics.NewDesc("wattsched_measured_power_fallback",
		"In measured mode, 1 when a node had no usable measured power at the last admission decision and PowerBudget counted its estimate, else 0.", []string{"node"}, nil, metrics.ALPHA, "")
)

type nodeCollector struct{ metrics.BaseStableCollector }

// DescribeWithStability implements metrics.StableCollector.
func (*nodeCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- nodePowerDesc
	ch <- gateNodePowerDesc
	ch <- measuredNodePowerDesc
	ch <- measuredFallbackDesc
}

// CollectWithStability implements metrics.StableCollector.
func (*nodeCollector) CollectWithStability(ch chan<- metrics.Metric) {
	samples, measured := lastDecision.samples()
	gauge := func(d *metrics.Desc, v hw.Watts, node string) {
		ch <- metrics.NewLazyConstMetric(d, metrics.GaugeValue, float64(v), node)
	}
	for _, s := range samples {
		gauge(nodePowerDesc, s.est, s.node)
		gauge(gateNodePowerDesc, s.counted, s.node)
		if !measured {
			continue
		}
		if s.hasReading {
			gauge(measuredNodePowerDesc, s.measured, s.node)
			gauge(measuredFallbackDesc, 0, s.node)
		} else {
			gauge(measuredFallbackDesc, 1, s.node)
		}
	}
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (b *Budget) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects nodes where the pod would break the budget.
func (b *Budget) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	cd := b.s.demand(state, pod)
	d, err := state.Read(budgetKey)
	if err != nil || cd.err != nil {
		return nil
	}
	bd := d.(*budgetData)
	if bd.anywhere {
		return nil
	}
	e, err := b.s.entry(ni)
	if err != nil || e.err != nil {
		return nil
	}
	if id := int(e.state); bd.cycle == b.cycle && id < len(b.stamp) && b.stamp[id] == bd.cycle && bd.epoch == b.s.stateEpoch() {
		m := b.inc[id]
		if !m.fits {
			return nil
		}
		ok, reason := b.gate.Admit(bd.clusterW, m.w)
		switch {
		case ok && bd.dom == nil:
			return nil
		case ok && m.exact:
			return bd.dom.check(e.n.Name, m.w)
		case !ok && m.exact:
			return fwk.NewStatus(fwk.Unschedulable, reason)
		}
		// Over the budget at the bound: the GPUs the selector picks
		// decide.
	}
	inc, ok := b.increase(&cd.task.Demand, e.n, cd)
	if !ok {
		return nil
	}
	if ok, reason := b.gate.Admit(bd.clusterW, inc); !ok {
		return fwk.NewStatus(fwk.Unschedulable, reason)
	}
	if bd.dom != nil {
		return bd.dom.check(e.n.Name, inc)
	}
	return nil
}

// admitsAtBound reports whether the pod can be admitted without running
// the GPU selector on every node, and fills b.inc with what it computed,
// once per node state. Each state where the pod fits gets its bound
// (PowerGate.MaxIncrease); the first node with the smallest bound gets
// the selector's exact increase, a witness: if the cluster with it stays
// within the budget, the pod's cheapest placement does too, and Filter
// admits every node whose bound does. False (the increases then to be
// computed exactly) when the model gives no bound, the pod fits nowhere,
// or the witness is over the budget.
func (b *Budget) admitsAtBound(d *job.Demand, cd *cycleData, ns []*cluster.Node, ids []int32, total hw.Watts) bool {
	witness, least := -1, hw.Watts(0)
	for k, n := range ns {
		id := ids[k]
		if b.stamp[id] == b.cycle {
			continue // a state already seen: its bound cannot be smaller
		}
		e := nodeIncrease{exact: true}
		if ok, _ := cluster.Fits(d, n); ok {
			w, bounded := b.gate.MaxIncrease(d, n)
			if !bounded {
				return false
			}
			e = nodeIncrease{w: w, fits: true}
			if witness < 0 || w < least {
				witness, least = k, w
			}
		}
		b.inc[id], b.stamp[id] = e, b.cycle
	}
	if witness < 0 {
		return false
	}
	w, ok := b.increase(d, ns[witness], cd)
	if !ok {
		return false
	}
	b.inc[ids[witness]] = nodeIncrease{w: w, fits: true, exact: true}
	hold, _ := b.gate.Hold(total, w)
	return !hold
}

// increase is the estimated power the pod adds on n with the GPUs the
// selector would pick; false when it does not fit there.
func (b *Budget) increase(d *job.Demand, n *cluster.Node, cd *cycleData) (hw.Watts, bool) {
	if ok, _ := cluster.Fits(d, n); !ok {
		return 0, false
	}
	gpus := b.s.selectGPUs(&cd.task, n)
	if d.GPUCount > 0 && gpus == nil {
		return 0, false
	}
	return b.gate.Increase(d, n, gpus), true
}

// EventsToRegister implements fwk.EnqueueExtensions: power frees up
// when a pod leaves; a pod placed or a node changed can also change the
// estimate or the order.
func (b *Budget) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Add | fwk.Delete | fwk.Update}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.Update | fwk.Delete}},
	}, nil
}
