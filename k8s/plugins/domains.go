package plugins

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// DomainArgs turn on PowerBudget's power domains: nodes are grouped into
// nested domains (rack, PDU, row, zone...) by their labels, each domain
// with a limit, and a pod is admitted on a node only if every domain on
// the node's path keeps within its limit with the pod (as well as the
// cluster within budgetWatts). See docs/power-domains.md.
type DomainArgs struct {
	// Levels lists the domain levels, innermost first (e.g. rack, then
	// PDU, then row): every node must carry each level's label, and the
	// nodes sharing a label value form one domain of that level, inside
	// the domain its nodes name at the next level.
	Levels []DomainLevel `json:"levels"`
}

// DomainLevel is one level of the power topology.
type DomainLevel struct {
	// Name is the level's name in messages ("rack").
	Name string `json:"name"`
	// LabelKey is the node label whose value names a node's domain at
	// this level ("wattsched.io/rack"). The domain is called
	// "<labelKey>=<value>".
	LabelKey string `json:"labelKey"`
	// LimitWatts is the limit of every domain of this level that Limits
	// does not name.
	LimitWatts float64 `json:"limitWatts"`
	// Limits overrides LimitWatts per label value.
	Limits map[string]float64 `json:"limits,omitempty"`
}

func (a *DomainArgs) validate() error {
	if len(a.Levels) == 0 {
		return fmt.Errorf("domains.levels: empty (leave domains out for no domains)")
	}
	keys := map[string]bool{}
	for i, lv := range a.Levels {
		at := fmt.Sprintf("domains.levels[%d]", i)
		switch {
		case strings.TrimSpace(lv.Name) == "":
			return fmt.Errorf("%s.name: empty", at)
		case strings.TrimSpace(lv.LabelKey) == "":
			return fmt.Errorf("%s.labelKey: empty", at)
		case keys[lv.LabelKey]:
			return fmt.Errorf("%s.labelKey: %q used by two levels", at, lv.LabelKey)
		case !positiveWatts(lv.LimitWatts):
			return fmt.Errorf("%s.limitWatts %v: want a positive number of watts", at, lv.LimitWatts)
		}
		keys[lv.LabelKey] = true
		vals := make([]string, 0, len(lv.Limits))
		for v := range lv.Limits {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		for _, v := range vals {
			if !positiveWatts(lv.Limits[v]) {
				return fmt.Errorf("%s.limits[%q] %v: want a positive number of watts", at, v, lv.Limits[v])
			}
		}
	}
	return nil
}

func positiveWatts(w float64) bool { return w > 0 && !math.IsInf(w, 0) }

// domainCycle is the power topology of one scheduling cycle: the
// snapshot's modelled nodes bound to the domains their labels name
// (power.Topology.Bind, each node's idle power from the catalog), and
// each domain's load (the power the gate counts for its nodes: the
// estimate, or max(measured, estimated) in measured mode). Filter reads
// it concurrently; nothing writes it after PreFilter built it.
type domainCycle struct {
	d    *power.Domains
	load *power.DomainLoad
	idx  map[string]int // node name -> index in d
	// nodes are the nodes in a domain, by index in d.
	nodes []*cluster.Node
	// outside says, per modelled node that is in no domain, why.
	outside map[string]string
}

// buildDomains binds the topology to the nodes PreFilter just counted,
// with the power held for gangs on each node (held, by node name). An error is a topology that cannot be bound (a domain whose limit is
// below its nodes' idle power, a label value under two parents).
func (b *Budget) buildDomains(held map[string]hw.Watts) (*domainCycle, error) {
	type nodeIn struct {
		name    string
		labels  map[string]string
		counted hw.Watts
		n       *cluster.Node
	}
	b.memoMu.Lock()
	nodes := make([]nodeIn, 0, len(b.memo))
	for _, m := range b.memo {
		if m.e != nil && m.ni.Node() != nil {
			nodes = append(nodes, nodeIn{m.e.n.Name, m.ni.Node().Labels, m.sample.counted, m.e.n})
		}
	}
	b.memoMu.Unlock()
	// By name: the topology and its errors never depend on the snapshot's order.
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].name < nodes[j].name })

	levels := b.dom.Levels
	c := &domainCycle{idx: map[string]int{}, outside: map[string]string{}}
	topo := power.Topology{Member: map[string]string{}}
	declared := map[string]int{}      // domain name -> index in topo.Domains
	parentFrom := map[string]string{} // domain name -> the node that gave its parent
	var names []string
	var idle []hw.Watts
	var counted []hw.Watts
	for _, n := range nodes {
		path := make([]string, len(levels))
		missing := ""
		for li, lv := range levels {
			v := n.labels[lv.LabelKey]
			if v == "" {
				missing = lv.LabelKey
				break
			}
			path[li] = lv.LabelKey + "=" + v
		}
		if missing != "" {
			c.outside[n.name] = fmt.Sprintf("power domains: node %s has no %s label, so it is in no power domain", n.name, missing)
			continue
		}
		for li, dn := range path {
			parent := ""
			if li+1 < len(path) {
				parent = path[li+1]
			}
			if k, ok := declared[dn]; ok {
				if topo.Domains[k].Parent != parent {
					return nil, fmt.Errorf("power domains: %s is inside %s by node %s's labels but inside %s by node %s's",
						dn, topo.Domains[k].Parent, parentFrom[dn], parent, n.name)
				}
				continue
			}
			lv := levels[li]
			limit, ok := lv.Limits[strings.TrimPrefix(dn, lv.LabelKey+"=")]
			if !ok {
				limit = lv.LimitWatts
			}
			declared[dn], parentFrom[dn] = len(topo.Domains), n.name
			topo.Domains = append(topo.Domains, power.Domain{Name: dn, Level: lv.Name, Parent: parent, Limit: hw.Watts(limit)})
		}
		topo.Member[n.name] = path[0]
		c.idx[n.name] = len(names)
		c.nodes = append(c.nodes, n.n)
		names = append(names, n.name)
		idle = append(idle, b.gate.Model.NodePower(n.n.IdleCopy()).Total())
		counted = append(counted, n.counted+held[n.name])
	}
	if len(topo.Domains) == 0 {
		c.d = &power.Domains{}
		c.load = c.d.NewLoad()
		return c, nil
	}
	d, warn, err := topo.Bind(names, idle)
	if err != nil {
		return nil, err
	}
	if w := fmt.Sprint(warn); len(warn) > 0 && w != b.domWarned {
		b.domWarned = w
		klog.InfoS("PowerBudget: power topology warnings", "warnings", w)
	}
	c.d, c.load = d, d.NewLoad()
	for i, w := range counted {
		c.load.Add(i, w)
	}
	lastDomains.Store(c)
	return c, nil
}

// lastDomains is the domains of the last admission decision (of any
// profile with domains), which domainCollector exports when scraped. A
// domainCycle is never written after it is built.
var lastDomains atomic.Pointer[domainCycle]

var (
	domainPowerDesc = metrics.NewDesc("wattsched_power_domain_watts",
		"The power PowerBudget counted in each power domain at the last admission decision with domains (the sum over its nodes of the estimate, or of max(measured, estimated) in measured mode).",
		[]string{"domain", "level"}, nil, metrics.ALPHA, "")
	domainLimitDesc = metrics.NewDesc("wattsched_power_domain_limit_watts",
		"Each power domain's limit (PowerBudget's domains arguments).", []string{"domain", "level"}, nil, metrics.ALPHA, "")
)

type domainCollector struct{ metrics.BaseStableCollector }

func init() { legacyregistry.CustomMustRegister(&domainCollector{}) }

// DescribeWithStability implements metrics.StableCollector.
func (*domainCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- domainPowerDesc
	ch <- domainLimitDesc
}

// CollectWithStability implements metrics.StableCollector.
func (*domainCollector) CollectWithStability(ch chan<- metrics.Metric) {
	c := lastDomains.Load()
	if c == nil {
		return
	}
	for i, d := range c.d.List {
		ch <- metrics.NewLazyConstMetric(domainPowerDesc, metrics.GaugeValue, float64(c.load.W[i]), d.Name, d.Level)
		ch <- metrics.NewLazyConstMetric(domainLimitDesc, metrics.GaugeValue, float64(d.Limit), d.Name, d.Level)
	}
}

// check is Filter's domain test: whether inc more watts on node keeps
// every domain on its path within its limit; the refusal names the
// binding domain.
func (c *domainCycle) check(node string, inc hw.Watts) *fwk.Status {
	if why, out := c.outside[node]; out {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, why)
	}
	i, ok := c.idx[node]
	if !ok {
		return nil // not modelled: the GPU plugin's Filter reports it
	}
	if bi, fits := c.load.Fits(i, inc); !fits {
		return fwk.NewStatus(fwk.Unschedulable, c.refusal(bi, inc, "", node))
	}
	return nil
}

// refusal says that domain bi cannot take inc more watts.
func (c *domainCycle) refusal(bi int, inc hw.Watts, atLeast, node string) string {
	d := c.d.List[bi]
	return fmt.Sprintf("power domain %s (%s): %.0f W + %s%.0f W for this pod on node %s exceeds its limit of %.0f W",
		d.Name, d.Level, c.load.W[bi], atLeast, inc, node, d.Limit)
}

// domainHold is PreFilter's domain test, after the cluster's: the pod
// waits unless some node where it fits keeps both the cluster within the
// budget (total) and every domain on its path within its limit. The
// reason names each binding domain once, with the pod's smallest
// increase under it. The increases are this cycle's (b.inc, exact).
func (b *Budget) domainHold(c *domainCycle, ns []*cluster.Node, ids []int32, total hw.Watts) (hold bool, reason string) {
	type refused struct {
		inc  hw.Watts
		node string
	}
	by := map[int]refused{}
	for k, n := range ns {
		m := b.inc[ids[k]]
		if !m.fits {
			continue
		}
		if ok, _ := b.gate.Admit(total, m.w); !ok {
			continue
		}
		i, in := c.idx[n.Name]
		if !in {
			continue
		}
		bi, fits := c.load.Fits(i, m.w)
		if fits {
			return false, ""
		}
		if r, seen := by[bi]; !seen || m.w < r.inc || (m.w == r.inc && n.Name < r.node) {
			by[bi] = refused{m.w, n.Name}
		}
	}
	if len(by) == 0 {
		// No node where the pod fits is in a domain: Filter rejects
		// each, naming its missing label; nothing to wait for.
		return false, ""
	}
	doms := make([]int, 0, len(by))
	for bi := range by {
		doms = append(doms, bi)
	}
	sort.Slice(doms, func(i, j int) bool { return c.d.List[doms[i]].Name < c.d.List[doms[j]].Name })
	msgs := make([]string, 0, len(doms))
	for _, bi := range doms {
		msgs = append(msgs, c.refusal(bi, by[bi].inc, "at least ", by[bi].node))
	}
	if len(msgs) > 3 {
		msgs = append(msgs[:3], fmt.Sprintf("and %d more domains", len(msgs)-3))
	}
	return true, strings.Join(msgs, "; ")
}

// domainNever reports whether the pod could not start even on an idle
// cluster because of its domains: the core gate's rule
// (policy.PowerGate.NeverFits with the cycle's domains, over the nodes in
// a domain), so that the plugin and the simulator refuse the same pods.
// Such a pod must not wait: nothing will ever free enough power, and the
// pods behind it would wait forever.
func (b *Budget) domainNever(c *domainCycle, d *job.Demand, pick func(d *job.Demand, n *cluster.Node) []int) (bool, string) {
	if c.d.Len() == 0 {
		return false, ""
	}
	g := *b.gate
	g.Domains = c.d
	return g.NeverFits(d, c.nodes, pick)
}
