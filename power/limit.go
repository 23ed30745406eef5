package power

import (
	"math"

	"github.com/wattsched/wattsched/hw"
)

// Limit is a cluster power limit: the one concept behind the VAHRM paper's
// power cap (PCR x system TDP), PowerFlow's eta*G*Pmax and the Kubernetes
// PowerBudget plugin. A scenario sets it, the engine enforces it on the
// power it predicts after every decision, and policies read it from their
// state. Zero means no limit.
type Limit hw.Watts

// Allows reports whether power w is within the limit: the admission rule
// every policy and the Kubernetes gate apply.
func (l Limit) Allows(w hw.Watts) bool { return l <= 0 || w <= hw.Watts(l) }

// LimitSlack is the relative slack an engine grants when it re-adds a
// policy's predicted power in its own order (floating-point sums differ in
// the last bits with the order of their terms).
const LimitSlack = 1e-9

// AllowsRecomputed is Allows with LimitSlack, for engines checking a total
// they summed themselves.
func (l Limit) AllowsRecomputed(w hw.Watts) bool {
	return l <= 0 || w <= hw.Watts(l)*(1+LimitSlack)
}

// Headroom is how much more power the limit allows above w (+Inf without a
// limit; negative when w is over it).
func (l Limit) Headroom(w hw.Watts) hw.Watts {
	if l <= 0 {
		return hw.Watts(math.Inf(1))
	}
	return hw.Watts(l) - w
}
