package plugins

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/power"
)

// LabelPodGroup is the label that puts a pod in a gang: the pods of one
// namespace with the same value are one gang. It is the label of
// scheduler-plugins' Coscheduling PodGroups, which clusters using
// Coscheduling (and Kueue or Volcano adapters that emit it) already carry.
// The Workload API's pods name their group in spec.schedulingGroup
// instead (Kubernetes 1.36 and later; docs/kubernetes.md, "Gangs").
const LabelPodGroup = "scheduling.x-k8s.io/pod-group"

// gangOf is the gang pod belongs to, "namespace/name", or "" for a pod of
// its own: the Workload API's PodGroup (1.36 and later), else the label.
func gangOf(p *v1.Pod) string {
	if g := podGroupName(p); g != "" {
		return p.Namespace + "/" + g
	}
	if g := p.Labels[LabelPodGroup]; g != "" {
		return p.Namespace + "/" + g
	}
	return ""
}

// PowerBudget admits a gang as a whole (docs/kubernetes.md, "Gangs"):
//
//   - At the PreFilter of a gang's first member (no power held for the
//     gang), the gang's unplaced members are placed tentatively, largest
//     first (ties by name), each on the node where it adds the least power
//     (ties by node name) with the GPUs the selector picks, on copies of
//     the nodes that hold the members placed before it, and within every
//     power domain. The sum of their increases is the gang's power; if the
//     cluster with it would exceed the budget (or no tentative placement
//     keeps the domains within their limits), the member waits, and the
//     message names the gang (and the domain). A gang that would not fit
//     even on an idle cluster is refused for good.
//   - At that member's Reserve, the power of the other members (their
//     tentative increases, on their tentative nodes) is held: every later
//     decision counts it, as if those members were placed, until each
//     member is reserved (its share then counts as the placed pod it is)
//     or leaves. A member of a gang with power held is behind no one.
//   - At Unreserve of any member (the gang mechanism rejects a gang at
//     Permit when one member fails or its wait times out), everything held
//     for the gang is released.
//
// So the budget never admits half a gang: either the whole gang's power
// is counted, or none of it.
type gangHold struct {
	pods  int                     // members planned when the hold was made
	share map[types.UID]gangShare // held for the members not yet reserved
}

// gangShare is the power held for one member, on the node of its
// tentative placement.
type gangShare struct {
	node string
	w    hw.Watts
}

var _ fwk.ReservePlugin = (*Budget)(nil)

const gangPlanKey fwk.StateKey = "wattsched.io/gang-plan"

// gangPlan is the tentative placement of a gang's unplaced members, which
// the first member's PreFilter leaves for its Reserve.
type gangPlan struct {
	gang  string
	pods  int
	share map[types.UID]gangShare
	total hw.Watts
}

func (p *gangPlan) Clone() fwk.StateData { return p }

// held is the power held for gangs' members that are not placed yet,
// except uid's own share, and the same by node (nil when none is held).
// Sums run in a fixed order (gangs, then members, by name): the figure
// never depends on map order.
func (b *Budget) held(uid types.UID) (hw.Watts, map[string]hw.Watts) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var w hw.Watts
	var byNode map[string]hw.Watts
	for _, g := range sortedKeys(b.gangs) {
		h := b.gangs[g]
		for _, u := range sortedKeys(h.share) {
			if u == uid {
				continue
			}
			s := h.share[u]
			w += s.w
			if byNode == nil {
				byNode = map[string]hw.Watts{}
			}
			byNode[s.node] += s.w
		}
	}
	return w, byNode
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// holding reports whether power is held for gang g.
func (b *Budget) holding(g string) bool {
	if g == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.gangs[g]
	return ok
}

// gangMembers are the members of pod's gang still to be placed: pods of
// the gang that are not bound, not being deleted and not reserved by this
// scheduler (whose power the snapshot counts), with pod itself; by name.
func (b *Budget) gangMembers(pod *v1.Pod) []*v1.Pod {
	out := []*v1.Pod{pod}
	if b.pods == nil {
		return out
	}
	sel := labels.Everything() // the Workload API names the group in the spec
	if podGroupName(pod) == "" {
		sel = labels.SelectorFromSet(labels.Set{LabelPodGroup: pod.Labels[LabelPodGroup]})
	}
	ps, err := b.pods.Pods(pod.Namespace).List(sel)
	if err != nil {
		return out
	}
	g := gangOf(pod)
	b.s.mu.RLock()
	for _, p := range ps {
		_, reserved := b.s.pending[p.UID]
		if p.UID != pod.UID && gangOf(p) == g && p.Spec.NodeName == "" && p.DeletionTimestamp == nil && !reserved {
			out = append(out, p)
		}
	}
	b.s.mu.RUnlock()
	slices.SortFunc(out, func(x, y *v1.Pod) int { return cmp.Compare(x.Name, y.Name) })
	return out
}

// gangPreFilter is PreFilter's whole-gang test for pod, the first member
// of its gang to be considered (no power held for the gang): nil when
// the gang's power fits (the plan is left for Reserve), else the status
// for the pod. total is the power counted now (with the power held for
// other gangs), ns and ids the modelled nodes.
func (b *Budget) gangPreFilter(state fwk.CycleState, pod *v1.Pod, g string, ns []*cluster.Node, total hw.Watts, dom *domainCycle) *fwk.Status {
	type member struct {
		uid  types.UID
		name string
		task job.Task
	}
	var ms []member
	for _, p := range b.gangMembers(pod) {
		d, err := gpushare.Demand(p)
		if err != nil {
			// An unreadable member fails at its own PreFilter; the gang
			// cannot start without it, so nothing is planned for it.
			return nil
		}
		ms = append(ms, member{p.UID, p.Namespace + "/" + p.Name, job.Task{Name: p.Name, Demand: d, Class: -1}})
	}
	// Largest first, ties by name: the order of the engine's PlaceGang.
	slices.SortStableFunc(ms, func(x, y member) int {
		if c := cmp.Compare(y.task.TotalGPUMilli(), x.task.TotalGPUMilli()); c != 0 {
			return c
		}
		if c := cmp.Compare(y.task.CPUMilli, x.task.CPUMilli); c != 0 {
			return c
		}
		return cmp.Compare(x.name, y.name)
	})
	tasks := make([]job.Task, len(ms))
	for i := range ms {
		tasks[i] = ms[i].task
	}
	var load domainChecker
	if dom != nil {
		load = dom.tentative()
	}
	nodes, inc, bind, ok := b.planGang(tasks, ns, load)
	if !ok && bind == "" {
		// The gang fits nowhere as a whole now: a capacity question, not a
		// power one (the gang mechanism holds its pods).
		budgetDecisions.WithLabelValues("passed", "fits_nowhere").Inc()
		return nil
	}
	var sum hw.Watts
	for _, w := range inc {
		sum += w
	}
	what := fmt.Sprintf("power budget: gang %s: its %d pods", g, len(ms))
	idle := make([]*cluster.Node, len(ns))
	var idleW hw.Watts
	for i, n := range ns {
		idle[i] = n.IdleCopy()
		idleW += b.gate.Model.NodePower(idle[i]).Total()
	}
	if !ok {
		// A gang that no tentative placement fits into its domains even
		// on an idle cluster must not wait: it would hold every pod
		// behind it for ever.
		if _, _, never, fits := b.planGang(tasks, idle, dom.idleTentative(b)); !fits && never != "" {
			b.drop(pod.UID)
			budgetDecisions.WithLabelValues("rejected", "never_fits").Inc()
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, what+" do not fit as a whole even on an idle cluster: "+never+": the gang can never be admitted")
		}
		b.wait(pod)
		budgetDecisions.WithLabelValues("waiting", "over_domain_limit").Inc()
		return fwk.NewStatus(fwk.Unschedulable, what+" do not fit as a whole: "+bind)
	}
	if hold, _ := b.gate.Hold(total, sum); hold {
		_, idleInc, _, fits := b.planGang(tasks, idle, nil)
		var least hw.Watts
		for _, w := range idleInc {
			least += w
		}
		if fits && !b.gate.Limit.Allows(idleW+least) {
			b.drop(pod.UID)
			budgetDecisions.WithLabelValues("rejected", "never_fits").Inc()
			return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("%s would add at least %.0f W even on an idle cluster (%.0f W), over the budget of %.0f W: the gang can never be admitted",
				what, least, idleW, b.gate.Limit))
		}
		b.wait(pod)
		budgetDecisions.WithLabelValues("waiting", "over_budget").Inc()
		return fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("%s need at least %.0f W in all: cluster power %.0f W + %.0f W exceeds the budget of %.0f W",
			what, sum, total, sum, b.gate.Limit))
	}
	plan := &gangPlan{gang: g, pods: len(ms), share: map[types.UID]gangShare{}, total: sum}
	for i, m := range ms {
		plan.share[m.uid] = gangShare{node: nodes[i], w: inc[i]}
	}
	state.Write(gangPlanKey, plan)
	return nil
}

// domainChecker is a copy of a cycle's domain loads that a tentative
// placement adds to.
type domainChecker interface {
	// fits reports whether inc more on node keeps its domains within
	// their limits, and which domain binds when not.
	fits(node string, inc hw.Watts) (ok bool, why string)
	add(node string, inc hw.Watts)
}

type tentativeDomains struct {
	c    *domainCycle
	load *power.DomainLoad
}

func (c *domainCycle) tentative() domainChecker {
	return &tentativeDomains{c: c, load: c.load.Clone()}
}

// idleTentative is tentative over the domains with every node idle (the
// power model's idle power of each node in a domain).
func (c *domainCycle) idleTentative(b *Budget) domainChecker {
	l := c.d.NewLoad()
	for i, n := range c.nodes {
		l.Add(i, b.gate.Model.NodePower(n.IdleCopy()).Total())
	}
	return &tentativeDomains{c: c, load: l}
}

func (t *tentativeDomains) fits(node string, inc hw.Watts) (bool, string) {
	if why, out := t.c.outside[node]; out {
		return false, why
	}
	i, ok := t.c.idx[node]
	if !ok {
		return true, ""
	}
	if bi, ok := t.load.Fits(i, inc); !ok {
		d := t.c.d.List[bi]
		return false, fmt.Sprintf("power domain %s (%s) cannot take %.0f W more on node %s within its limit of %.0f W", d.Name, d.Level, inc, node, d.Limit)
	}
	return true, ""
}

func (t *tentativeDomains) add(node string, inc hw.Watts) {
	if i, ok := t.c.idx[node]; ok {
		t.load.Add(i, inc)
	}
}

// planGang places tasks one by one, each on the node (of ns) where it adds
// the least power with the GPUs the selector picks (ties by node name),
// on copies that hold the tasks placed before it, within the domains of
// load (nil: none). It returns each task's node and increase, and ok;
// when not ok, bind is the domain refusal that left a task without a
// node (its first, by node name), or "" when a task fits on no node at
// all.
func (b *Budget) planGang(tasks []job.Task, ns []*cluster.Node, load domainChecker) (nodes []string, inc []hw.Watts, bind string, ok bool) {
	cur := slices.Clone(ns)
	order := make([]int, len(cur))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(cur[x].Name, cur[y].Name) })
	for ti := range tasks {
		t := &tasks[ti]
		best, bestW, bestGPUs := -1, hw.Watts(0), []int(nil)
		bind = "" // the refusals of the task left without a node
		for _, k := range order {
			n := cur[k]
			if fits, _ := cluster.Fits(&t.Demand, n); !fits {
				continue
			}
			gpus := b.s.selectGPUs(t, n)
			if t.GPUCount > 0 && gpus == nil {
				continue
			}
			w := b.gate.Increase(&t.Demand, n, gpus)
			if load != nil {
				if fits, why := load.fits(n.Name, w); !fits {
					if bind == "" {
						bind = why
					}
					continue
				}
			}
			if best < 0 || w < bestW {
				best, bestW, bestGPUs = k, w, gpus
			}
		}
		if best < 0 {
			return nodes, inc, bind, false
		}
		cur[best] = withTask(cur[best], &t.Demand, bestGPUs)
		if load != nil {
			load.add(cur[best].Name, bestW)
		}
		nodes, inc = append(nodes, cur[best].Name), append(inc, bestW)
	}
	return nodes, inc, "", true
}

// withTask is a copy of n with demand d placed on the listed GPUs: the
// free resources and task count that Cluster.Allocate would leave (the
// affinity counts, which no power model reads, are left as they are).
func withTask(n *cluster.Node, d *job.Demand, gpus []int) *cluster.Node {
	c := *n
	c.GPUFree = slices.Clone(n.GPUFree)
	for _, g := range gpus {
		c.GPUFree[g] -= d.GPUMilli
	}
	c.FreeCPUMilli -= d.CPUMilli
	c.FreeMemMiB -= d.MemMiB
	c.Tasks++
	return &c
}

// Reserve holds the power of the other members of a gang whose first
// member this is (the plan its PreFilter left), or lets go of this
// member's share of what is held (it now counts as the placed pod it is).
func (b *Budget) Reserve(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ string) *fwk.Status {
	g := gangOf(pod)
	if g == "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.gangs[g]; ok {
		delete(h.share, pod.UID)
		if len(h.share) == 0 {
			delete(b.gangs, g)
		}
		return nil
	}
	d, err := state.Read(gangPlanKey)
	if err != nil {
		return nil
	}
	plan := d.(*gangPlan)
	h := &gangHold{pods: plan.pods, share: map[types.UID]gangShare{}}
	for u, s := range plan.share {
		if u != pod.UID {
			h.share[u] = s
		}
	}
	if len(h.share) > 0 {
		if b.gangs == nil {
			b.gangs = map[string]*gangHold{}
		}
		b.gangs[g] = h
	}
	return nil
}

// Unreserve releases everything held for the pod's gang: a member that
// fails after Reserve fails its gang (the gang mechanism rejects the
// members waiting at Permit), and the pods waiting for power are retried.
func (b *Budget) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	g := gangOf(pod)
	if g == "" {
		return
	}
	b.mu.Lock()
	_, had := b.gangs[g]
	delete(b.gangs, g)
	ws := slices.Clone(b.waiting)
	b.mu.Unlock()
	if had {
		b.activate(ws)
	}
}

// forgetMember drops uid's share of what is held (a member deleted before
// it was placed); a gang left with nothing held is forgotten.
func (b *Budget) forgetMember(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for g, h := range b.gangs {
		delete(h.share, uid)
		if len(h.share) == 0 {
			delete(b.gangs, g)
		}
	}
}
