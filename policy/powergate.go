package policy

import (
	"fmt"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

// PowerGate is the power-limit admission rule that the simulator's Placer
// and the Kubernetes PowerBudget plugin share: a task may start on a node
// only if the cluster's estimated power (every node's power from Model)
// plus the task's increase on that node, with the GPUs the placement
// would pick, stays within Limit. Tasks are admitted in arrival order:
// while a task that fits somewhere waits for power, the tasks behind it
// wait too (Online; the plugin's waiting list).
//
// With a Meter (measured mode), the power counted for the running tasks
// is, node by node, the larger of the measured and the estimated power
// (power.AtLeastMeasured); a node without a fresh reading counts its
// estimate. The task being admitted is always counted by its estimated
// increase: it is not running yet, so nothing has measured it.
type PowerGate struct {
	Limit power.Limit
	Model power.Model
	// Meter gives the nodes' measured power (nil: estimates only).
	Meter Meter
	// Domains are the power domains over the nodes (by node index, the
	// cluster's order; nil: none): a task may start on a node only if
	// every domain on the node's path stays within its limit too, with
	// the power counted as for Limit.
	Domains *power.Domains
}

// Meter gives a node's latest fresh measured power by node name; ok is
// false when there is none (no series, stale, or invalid), and the gate
// then counts the estimate.
type Meter interface {
	Reading(node string) (r power.Reading, ok bool)
}

// NodePower is the power the gate counts for n: its estimate, or with a
// Meter and a fresh reading, power.AtLeastMeasured.
func (g *PowerGate) NodePower(n *cluster.Node) hw.Watts {
	_, counted := g.Count(n)
	return counted
}

// Count is n's estimated power and the power the gate counts for it
// (NodePower), from one evaluation of the model.
func (g *PowerGate) Count(n *cluster.Node) (estimated, counted hw.Watts) {
	estimated, counted, _, _ = g.CountReading(n)
	return estimated, counted
}

// CountReading is Count with the measured reading it used; measured is
// false when the gate counted the estimate alone (no Meter, or no fresh
// reading).
func (g *PowerGate) CountReading(n *cluster.Node) (estimated, counted hw.Watts, r power.Reading, measured bool) {
	est := g.Model.NodePower(n)
	if g.Meter != nil {
		if r, ok := g.Meter.Reading(n.Name); ok {
			return est.Total(), power.AtLeastMeasured(est, r), r, true
		}
	}
	return est.Total(), est.Total(), power.Reading{}, false
}

// ClusterPower is the power the gate counts for the nodes: the sum of
// NodePower.
func (g *PowerGate) ClusterPower(nodes []*cluster.Node) hw.Watts {
	var w hw.Watts
	for _, n := range nodes {
		w += g.NodePower(n)
	}
	return w
}

// Increase is the estimated power demand d adds on n with the listed GPUs.
func (g *PowerGate) Increase(d *job.Demand, n *cluster.Node, gpus []int) hw.Watts {
	return power.Increase(g.Model, n, d, gpus)
}

// MaxIncrease bounds Increase over every choice of GPUs where d fits on
// n, without running a GPU selector (power.IncreaseBounder); ok is false
// when the model gives no bound or d fits on too few GPUs. Since Admit is
// monotone in the increase, a node that Admit accepts at the bound is
// accepted with whatever GPUs the placement picks.
func (g *PowerGate) MaxIncrease(d *job.Demand, n *cluster.Node) (hw.Watts, bool) {
	if b, ok := g.Model.(power.IncreaseBounder); ok {
		return b.MaxIncrease(n, d)
	}
	return 0, false
}

// Admit reports whether a task adding inc on one node to a cluster drawing
// total stays within the limit, and why not.
func (g *PowerGate) Admit(total, inc hw.Watts) (ok bool, reason string) {
	if g.Limit.Allows(total + inc) {
		return true, ""
	}
	return false, fmt.Sprintf("power budget: %.0f W more here would take the cluster to %.0f W, over %.0f W", inc, total+inc, g.Limit)
}

// Hold reports whether a task must wait for power before any node is
// considered: even its cheapest placement (cheapest, over the nodes where
// it fits) would break the limit.
func (g *PowerGate) Hold(total, cheapest hw.Watts) (hold bool, reason string) {
	if g.Limit.Allows(total + cheapest) {
		return false, ""
	}
	what := "estimated cluster power"
	if g.Meter != nil {
		what = "cluster power (per node the larger of measured and estimated)"
	}
	return true, fmt.Sprintf("power budget: %s %.0f W + at least %.0f W for this pod exceeds the budget of %.0f W", what, total, cheapest, g.Limit)
}

// NeverFits reports whether demand d could not start within the limit
// even on an idle cluster: the idle cluster's power (every node empty, in
// its current power state) plus d's smallest increase on any node where it
// fits when on (with the GPUs pick chooses; a node that is not on adds its
// switch to idle power) exceeds the limit, or it fits on no node at all.
// It uses the estimates alone, also in measured mode: a measurement says
// what the nodes draw now, not what they would draw idle. Such a task must
// not wait for power: nothing will ever free enough, and the tasks behind
// it would wait forever.
func (g *PowerGate) NeverFits(d *job.Demand, nodes []*cluster.Node, pick func(d *job.Demand, n *cluster.Node) []int) (bool, string) {
	var idle hw.Watts
	cheapest, fits := hw.Watts(0), false
	var load *power.DomainLoad
	if g.Domains.Len() > 0 {
		load = g.Domains.NewLoad()
		for i, n := range nodes {
			load.Add(i, g.Model.NodePower(n.IdleCopy()).Total())
		}
	}
	binding := -1
	for i, n := range nodes {
		e := n.IdleCopy()
		base := g.Model.NodePower(e).Total()
		idle += base
		on := *e
		on.State = cluster.On
		if ok, _ := cluster.Fits(d, &on); !ok {
			continue
		}
		gpus := pick(d, &on)
		if d.GPUCount > 0 && gpus == nil {
			continue
		}
		inc := g.Increase(d, &on, gpus) + g.Model.NodePower(&on).Total() - base
		if b, ok := load.Fits(i, inc); !ok {
			if binding < 0 {
				binding = b
			}
			continue // a domain on its path could never hold it
		}
		if !fits || inc < cheapest {
			cheapest, fits = inc, true
		}
	}
	if fits && g.Limit.Allows(idle+cheapest) {
		return false, ""
	}
	if !fits && binding >= 0 {
		return true, fmt.Sprintf("%s: even on an idle cluster the pod would take %s over its limit on every node where it fits: it can never be admitted", GateReason, g.DomainReason(binding))
	}
	if !fits {
		return true, "power budget: the pod fits on no node even when the cluster is idle"
	}
	return true, fmt.Sprintf("power budget: even on an idle cluster (%.0f W) this pod would add at least %.0f W, over the budget of %.0f W: it can never be admitted", idle, cheapest, g.Limit)
}

// DomainLoad is the power each of the gate's domains carries now, counted
// as ClusterPower counts it (nil without domains).
func (g *PowerGate) DomainLoad(nodes []*cluster.Node) *power.DomainLoad {
	if g.Domains.Len() == 0 {
		return nil
	}
	l := g.Domains.NewLoad()
	for i, n := range nodes {
		l.Add(i, g.NodePower(n))
	}
	return l
}

// DomainReason is the reason a node is refused because domain (an index
// of the gate's domains) would go over its limit: "power domain" and the
// domain's name and level, the same for every node it refuses, so that
// explanations count them together.
func (g *PowerGate) DomainReason(domain int) string {
	d := g.Domains.List[domain]
	if d.Level == "" {
		return fmt.Sprintf("%s %q (limit %.0f W)", DomainGateReason, d.Name, float64(d.Limit))
	}
	return fmt.Sprintf("%s %q (%s, limit %.0f W)", DomainGateReason, d.Name, d.Level, float64(d.Limit))
}

// DomainGateReason begins the reason Explanation gives for nodes where a
// task fits within the cluster's limit but would take a power domain on
// the node's path over its own.
const DomainGateReason = "power domain"
