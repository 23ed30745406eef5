package sim_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// Two identical nodes (1 GPU each), power-down after 10 s, 5 s to wake,
// 8 W while off. One task at t=0 for 20 s on node 0 (best fit picks the
// lowest ID among equals); another at t=100 s for 20 s.
//
//	node 0: busy 0-20, idle 20-30, off 30-100, woken by the 2nd task:
//	        boots 100-105 (idle power), busy 105-125, idle 125-135.
//	node 1: idle 0-10, off 10-125 (the end of the run).
//
// The run ends at 125 s, when the last task ends (pending power-off checks
// do not stretch it).
func TestPowerDown(t *testing.T) {
	b := clustertest.New()
	b.Node("a").GPUs(1, "T4").CPU(8000)
	b.Node("b").GPUs(1, "T4").CPU(8000)
	c := b.Build()
	idle := power.PWR{}.NodePower(c.Nodes[0]).Total()
	d := job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}
	tasks := []job.Task{
		{ID: 1, Name: "first", Demand: d, Class: -1, Submit: 0, Work: 20},
		{ID: 2, Name: "second", Demand: d, Class: -1, Submit: 100_000, Work: 20},
	}
	pd := &sim.PowerDown{IdleAfter: 10_000, Wake: 5_000, OffW: 8}
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, PowerDown: pd, CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(tasks)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Tasks[1]; got.Start != 105_000 || got.End != 125_000 || got.Node != 0 {
		t.Errorf("second task: start %d end %d node %d, want 105000, 125000, node 0 (woken)", got.Start, got.End, got.Node)
	}
	if res.End != 125_000 {
		t.Errorf("run ends at %d ms, want 125000", res.End)
	}
	if res.PowerOffs != 2 || res.Wakes != 1 {
		t.Errorf("%d power-offs and %d wakes, want 2 and 1", res.PowerOffs, res.Wakes)
	}
	// Off: node 0 for 70 s (30-100), node 1 for 115 s (10-125).
	if res.OffNodeSeconds != 185 {
		t.Errorf("off node-seconds %v, want 70 + 115 = 185", res.OffNodeSeconds)
	}
	// Idle energy: node 0 idle 20-30 and booting 100-105 (15 s) plus
	// node 1 idle 0-10 (10 s) at the idle power, plus 185 s at 8 W, plus
	// the idle part of node 0's 40 busy seconds.
	wantIdle := float64(idle)*(15+10+40) + 8*185
	if math.Abs(float64(res.IdleEnergy)-wantIdle) > 1e-6*wantIdle {
		t.Errorf("idle energy %.1f J, want %.1f J", float64(res.IdleEnergy), wantIdle)
	}
}

// Power-down changes when energy is spent, not what runs: over random
// replays every task still ends, energy is the integral of the sampled
// power, and no more energy is used than with every node always on.
func TestPowerDownProperties(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			var energy [2]float64
			for k, pd := range []*sim.PowerDown{nil, {IdleAfter: 5_000, Wake: 0, OffW: 0}} {
				c, tasks := randomScenario(seed)
				var idle power.Breakdown
				for _, n := range c.Nodes {
					p := power.PWR{}.NodePower(n)
					idle.CPU, idle.GPU = idle.CPU+p.CPU, idle.GPU+p.GPU
				}
				e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, PowerDown: pd, CheckInvariants: true})
				if err != nil {
					t.Fatal(err)
				}
				res, err := e.Run(tasks)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res.Tasks {
					if r.End < 0 {
						t.Fatalf("power-down %v: task %d never ended", pd != nil, r.ID)
					}
				}
				energy[k] = checkEnergyIsIntegral(t, res, idle.Total())
			}
			// With no wake latency and 0 W off, sleeping never costs energy
			// over the same schedule; the schedule can differ (a woken node
			// is chosen differently), so allow 1% for that.
			if energy[1] > energy[0]*1.01 {
				t.Errorf("with power-down %.0f J, always on %.0f J", energy[1], energy[0])
			}
		})
	}
}

func TestPowerDownOptions(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(1, "T4").Build()
	for _, pd := range []*sim.PowerDown{{IdleAfter: -1}, {IdleAfter: 999}, {IdleAfter: 1000, Wake: -1}, {IdleAfter: 1000, OffW: -1}, {IdleAfter: 1000, OffW: hw.Watts(math.NaN())}} {
		if _, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, PowerDown: pd}); err == nil {
			t.Errorf("%+v: no error", *pd)
		}
	}
	if _, err := sim.New(c, online(t), sim.Options{Mode: sim.Inflation, PowerDown: &sim.PowerDown{}}); err == nil {
		t.Error("power-down in inflation mode: no error")
	}
}

// Under a power limit that only fits the task with the other node off
// (one node's idle power + the task's increase + the other's 5 W standby),
// a task arriving while every node is off is not refused as "can never be
// admitted": the gate counts an off node at its standby draw, so the task
// wakes a node and starts after the boot.
func TestPowerDownUnderLimit(t *testing.T) {
	b := clustertest.New()
	b.Node("a").GPUs(1, "T4").CPU(8000)
	b.Node("b").GPUs(1, "T4").CPU(8000)
	c := b.Build()
	d := job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}
	idle := power.PWR{}.NodePower(c.Nodes[0]).Total()
	probe := clustertest.New().Node("p").GPUs(1, "T4").CPU(8000).Build()
	task := job.Task{ID: 1, Name: "t", Demand: d, Class: -1, Submit: 10_000, Work: 5}
	if err := probe.Allocate(&task, 0, []int{0}); err != nil {
		t.Fatal(err)
	}
	busy := power.PWR{}.NodePower(probe.Nodes[0]).Total()
	limit := power.Limit(idle + (busy - idle) + 5)
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, PowerLimit: limit, CheckInvariants: true,
		PowerDown: &sim.PowerDown{IdleAfter: 1000, Wake: 3000, OffW: 5}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run([]job.Task{{ID: 1, Name: "t", Demand: d, Class: -1, Submit: 10_000, Work: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Tasks[0]; r.Rejected || r.Start != 13_000 {
		t.Errorf("task: rejected %v, start %d; want started at 13000 (woken node)", r.Rejected, r.Start)
	}
}

// Three one-GPU tasks arriving together while four one-GPU nodes sleep
// wake three nodes at once (a booting node covers only what it can hold),
// so all start after one boot.
func TestPowerDownWakesEnough(t *testing.T) {
	b := clustertest.New()
	for _, n := range []string{"a", "b", "c", "d"} {
		b.Node(n).GPUs(1, "T4").CPU(8000)
	}
	c := b.Build()
	d := job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}
	var tasks []job.Task
	for i := 0; i < 3; i++ {
		tasks = append(tasks, job.Task{ID: job.ID(i), Name: fmt.Sprint(i), Demand: d, Class: -1, Submit: 100_000, Work: 10})
	}
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, CheckInvariants: true, PowerDown: &sim.PowerDown{IdleAfter: 1000, Wake: 60_000}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(tasks)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Tasks {
		if r.Start != 160_000 {
			t.Errorf("task %d starts at %d, want 160000 (one boot)", r.ID, r.Start)
		}
	}
	if res.Wakes != 3 {
		t.Errorf("%d wakes, want 3", res.Wakes)
	}
}

// A task that fits on no powered node wakes the sleeping node the policy's
// scorers rank best, not the lowest-numbered one: node "a" (8 GPUs) and
// node "b" (1 GPU) both sleep when a one-GPU task arrives at 100 s; best
// fit prefers b, where the task leaves no GPU idle (a would keep 7 idle).
// Node "a" comes first, so the old rule (lowest node ID) would wake it.
func TestPowerDownWakesByPolicy(t *testing.T) {
	b := clustertest.New()
	b.Node("a").GPUs(8, "T4").CPU(8000)
	b.Node("b").GPUs(1, "T4").CPU(8000)
	c := b.Build()
	d := job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}
	tasks := []job.Task{{ID: 1, Name: "late", Demand: d, Class: -1, Submit: 100_000, Work: 10}}
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, CheckInvariants: true, PowerDown: &sim.PowerDown{IdleAfter: 1000, Wake: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(tasks)
	if err != nil {
		t.Fatal(err)
	}
	if res.Wakes != 1 {
		t.Errorf("%d wakes, want 1", res.Wakes)
	}
	if got := res.Tasks[0]; got.Node != 1 || got.Start != 105_000 {
		t.Errorf("task on node %d from %d ms, want node 1 (b, woken) from 105000 ms", got.Node, got.Start)
	}
}

// badWaker wakes a node the engine did not offer.
type badWaker struct{ *policy.Online }

func (badWaker) Wake(*policy.State, *job.Task, []*cluster.Node) (cluster.NodeID, bool) {
	return 0, true
}

// A scheduler that names a node the engine did not offer (here a powered
// node) fails the run, as any invalid decision does.
func TestPowerDownBadWake(t *testing.T) {
	b := clustertest.New()
	b.Node("a").CPU(8000)
	b.Node("b").GPUs(1, "T4").CPU(8000)
	c := b.Build()
	d := job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: 1000}
	tasks := []job.Task{
		{ID: 1, Name: "cpu", Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024}, Class: -1, Submit: 0, Work: 200},
		{ID: 2, Name: "gpu", Demand: d, Class: -1, Submit: 100_000, Work: 10},
	}
	e, err := sim.New(c, badWaker{online(t)}, sim.Options{Mode: sim.Replay, PowerDown: &sim.PowerDown{IdleAfter: 1000, Wake: 5000}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(tasks); !errors.Is(err, sim.ErrPolicy) {
		t.Errorf("run error %v, want sim.ErrPolicy", err)
	}
}
