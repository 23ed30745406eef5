package sim_test

import (
	"math"
	"testing"

	"github.com/wattsched/wattsched/experiment/eaco"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/perf/coloc"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/builtin"
	"github.com/wattsched/wattsched/sim"
)

// TestColocPowerKeptMatchesRecomputed: the co-location engine recomputes
// only the nodes an event touched and charges a node's energy only when its
// power changes. For every policy, with and without idle nodes asleep, on a
// loaded cluster (queues, sharing, observation windows and undos), every
// node's kept power must equal a recomputation from scratch after every
// event, and the energy must equal the integral of the timeline's power
// (plus the idle cluster before the first event).
func TestColocPowerKeptMatchesRecomputed(t *testing.T) {
	env, err := eaco.NewEnv(hw.Default())
	if err != nil {
		t.Fatal(err)
	}
	const nodes = 6
	jobs := env.Workload(7, 300, 40) // 300 jobs at 40 per hour on 6 nodes
	reg := builtin.Registries()
	for _, pol := range []string{"fifo", "fifo_packed", "gandiva_packing", "eaco"} {
		for _, sleep := range []bool{false, true} {
			args := "{}"
			if sleep {
				args = "{sleep_idle: true}"
			}
			s, err := reg.Coloc.New(pol, []byte(args), policy.ColocDeps{History: env.History, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			sleeps := sleep
			if z, ok := s.(policy.IdleSleeper); ok {
				sleeps = z.SleepsIdleNodes()
			}
			res, err := sim.RunColocChecked(jobs, s, sim.ColocOptions{Nodes: nodes, GPUsPerNode: 8, GPUMemGiB: eaco.GPUMemGiB, Power: env.Power,
				SleepIdle: sleeps, TruthSet: coloc.PairRule(env.Truth.Pair), MaxShare: eaco.MaxShare, Timeline: true})
			if err != nil {
				t.Fatalf("%s %s: %v", pol, args, err)
			}
			idle := env.Power.Node(0, make([]float64, 8))
			if sleeps {
				idle = env.Power.Sleep
			}
			integral := float64(idle) * nodes * res.Timeline[0].At.Seconds()
			for i, p := range res.Timeline {
				end := res.Makespan
				if i+1 < len(res.Timeline) {
					end = res.Timeline[i+1].At
				}
				integral += float64(p.Power) * (end - p.At).Seconds()
			}
			if d := math.Abs(float64(res.Energy)-integral) / integral; d > 1e-9 {
				t.Errorf("%s %s: energy %.3f J, timeline integral %.3f J (relative %.2g)", pol, args, float64(res.Energy), integral, d)
			}
			if parts := res.ActiveEnergy + res.IdleEnergy + res.SleepEnergy; math.Abs(float64(res.Energy-parts)) > 1e-9*float64(res.Energy) {
				t.Errorf("%s %s: energy %v J, active+idle+sleep %v J", pol, args, res.Energy, parts)
			}
		}
	}
}
