package pwr

import (
	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
)

// MIGPower is the MIG-aware reading of PWR's GPU power (docs/policies/pwr.md#mig-aware-reading):
// a MIG GPU with no busy instance draws its idle power; otherwise idle
// plus its dynamic range (TDP - idle) in proportion to the compute slices
// of its busy instances. The catalog holds no measured power per MIG
// instance, so this is a rule: MIG instances own disjoint SMs, so a
// partly used GPU is modelled as partly busy, and a fully used one draws
// the TDP, as PWR's whole-GPU model (pwr-fgd eq. 2) has it.
//
// The rule lives in package power (power.MIGGPUPower), which prices every
// node in MIG mode in a run; this is the same function.
func MIGPower(g *hw.GPUModel, m *cluster.MIGGPU) hw.Watts { return power.MIGGPUPower(g, m) }

// SelectMIG implements policy.MIGSelector: PWR's instance for a MIG task
// is the default rule's (cluster.FirstMIG, the lowest GPU and start with
// room), as the power added is the same on every GPU with room.
func (p *Policy) SelectMIG(t *job.Task, n *cluster.Node) (gpu, start int, ok bool) {
	return cluster.FirstMIG(&t.Demand, n)
}

var _ policy.MIGSelector = (*Policy)(nil)

// MIGIncrease is the power a request for profile adds on m: its share of
// the dynamic range, plus nothing for the idle power, which the GPU draws
// either way. ok is false when the profile fits nowhere on m.
func MIGIncrease(g *hw.GPUModel, m *cluster.MIGGPU, profile string) (hw.Watts, bool) {
	starts := m.Starts(profile)
	if len(starts) == 0 {
		return 0, false
	}
	p, _ := m.Geometry.Profile(profile)
	before := MIGPower(g, m)
	busy := m.BusyCompute() + p.Compute
	after := g.IdleW + (g.TDPW-g.IdleW)*hw.Watts(busy)/hw.Watts(m.Geometry.ComputeSlices)
	return after - before, true
}
