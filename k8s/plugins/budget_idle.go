package plugins

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/power"
)

// idleCheck is PowerBudget's check at start that its budget is above the
// modelled idle power of the nodes it sees: below it, every pod that
// raises the count waits for good. done is closed once the check ran;
// warning is then its finding ("" when the budget is above).
type idleCheck struct {
	done    chan struct{}
	warning string
}

// startIdleCheck registers the node informer and, once it has synced,
// compares budget with the idle power (power.Idle, PWR) of the nodes the
// scheduler sees, logging a warning when the budget is not above it. It
// runs once, at start: nodes added later are not checked (the
// wattsched_estimated_cluster_power_watts metric follows them). Nil
// without an informer factory (unit tests of other plugins).
func startIdleCheck(ctx context.Context, h fwk.Handle, s *shared, budget hw.Watts) *idleCheck {
	f := h.SharedInformerFactory()
	if f == nil {
		return nil
	}
	inf := f.Core().V1().Nodes()
	informer := inf.Informer()
	c := &idleCheck{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			return
		}
		nodes, err := inf.Lister().List(labels.Everything())
		if err != nil {
			return
		}
		s.mu.Lock()
		cat := s.cat
		s.mu.Unlock()
		c.warning = idleWarning(cat, nodes, budget)
		if c.warning != "" {
			klog.FromContext(ctx).Error(nil, c.warning, "plugin", BudgetName, "budgetWatts", float64(budget))
		}
	}()
	return c
}

// idleWarning is the warning for a budget not above the idle power of
// nodes under the PWR model (nodes it cannot model are left out, as
// PreFilter leaves them out), or "".
func idleWarning(cat *hw.Catalog, nodes []*v1.Node, budget hw.Watts) string {
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	var idle hw.Watts
	modelled, other := 0, 0
	for _, node := range nodes {
		n, _, err := gpushare.BuildNode(cat, node, nil)
		if err != nil {
			other++
			continue
		}
		modelled++
		idle += power.Idle(n)
	}
	if modelled == 0 || budget > idle {
		return ""
	}
	return fmt.Sprintf("%s: budgetWatts %g W is not above the modelled idle power %.1f W of the %d nodes it can model (%d it cannot): every pod that raises the cluster's power will wait; 'wattsched budget' derives a budget from the cluster (docs/kubernetes.md)",
		BudgetName, float64(budget), float64(idle), modelled, other)
}
