package power_test

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
)

func TestPWRNodePower(t *testing.T) {
	// G2 node: 96 vCPU = 3 sockets of 16 cores x 2 threads, 8 A10 GPUs (30 W idle, 150 W TDP).
	c := clustertest.New().Node("g2").GPUs(8, "G2").CPU(96000).Mem(393216).Build()
	n := c.Nodes[0]
	cases := []struct {
		name     string
		task     *job.Task
		gpus     []int
		cpu, gpu hw.Watts
	}{
		// Idle: 3 sockets x 15 W = 45 W; 8 GPUs x 30 W = 240 W.
		{"idle", nil, nil, 45, 240},
		// 3 vCPU busy -> 2 cores -> 1 busy socket: 120 + 2x15 = 150 W; one GPU busy: 150 + 7x30 = 360 W.
		{"one shared task", &job.Task{ID: 1, Demand: job.Demand{CPUMilli: 3000, GPUCount: 1, GPUMilli: 200}}, []int{0}, 150, 360},
		// 40 more vCPU: 43 vCPU -> 96/2 - floor(53/2) = 22 busy cores -> 2 sockets: 2x120 + 15 = 255 W.
		{"second task", &job.Task{ID: 2, Demand: job.Demand{CPUMilli: 40000}}, nil, 255, 360},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.task != nil {
				if err := c.Allocate(tc.task, 0, tc.gpus); err != nil {
					t.Fatal(err)
				}
			}
			got := power.PWR{}.NodePower(n)
			if got.CPU != tc.cpu || got.GPU != tc.gpu {
				t.Errorf("NodePower = %+v, want CPU %v GPU %v", got, tc.cpu, tc.gpu)
			}
		})
	}
}

func TestIncreaseLeavesNodeUnchanged(t *testing.T) {
	c := clustertest.New().Node("t4").GPUs(2, "T4").CPU(64000).Build()
	n := c.Nodes[0]
	d := job.Demand{CPUMilli: 2000, GPUCount: 1, GPUMilli: 500}
	// One T4 goes from idle (10 W) to TDP (70 W): +60 W; one socket from 15 W to 120 W: +105 W.
	if got := power.Increase(power.PWR{}, n, &d, []int{1}); got != 165 {
		t.Errorf("Increase = %v, want 60 + 105 = 165", got)
	}
	if n.FreeCPUMilli != 64000 || n.GPUFree[1] != 1000 {
		t.Errorf("node changed: %+v", n)
	}
}

// With a measured curve, a node's GPU power follows each GPU's allocated
// share: a quarter-used GPU on the curve idle 50 W -> 300 W at half -> TDP
// 400 W draws 175 W, not the PWR model's TDP.
func TestGPUPowerFollowsACurve(t *testing.T) {
	cat, err := hw.Default().With(&hw.Catalog{GPUs: []hw.GPUModel{{Name: "Curved", IdleW: 50, TDPW: 400, Source: "test",
		Curve: []hw.CurvePoint{{Share: 0.5, Watts: 300}}}}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(cat, []cluster.NodeSpec{{Name: "n", CPUMilli: 32000, MemMiB: 1024, GPUs: 2, GPUModel: "Curved"}})
	if err != nil {
		t.Fatal(err)
	}
	n := c.Nodes[0]
	task := &job.Task{ID: 1, Class: -1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 250}}
	if err := c.Allocate(task, 0, []int{0}); err != nil {
		t.Fatal(err)
	}
	if got := power.GPUPower(n); got != 175+50 {
		t.Errorf("GPU power %v W, want 225 W (175 W at a quarter, 50 W idle)", got)
	}
}

// MaxIncrease bounds Increase over every choice of GPUs, and reaches it:
// checked against every feasible GPU set on random nodes, with the PWR
// model's two levels and with a measured curve (a concave part and a
// convex one).
func TestMaxIncreaseIsTheLargestIncrease(t *testing.T) {
	cat, err := hw.Default().With(&hw.Catalog{GPUs: []hw.GPUModel{{Name: "Curved", IdleW: 50, TDPW: 400, Source: "test",
		Curve: []hw.CurvePoint{{Share: 0.3, Watts: 300}, {Share: 0.8, Watts: 320}}}}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	shares := []int64{0, 0, 100, 250, 500, 700, 1000}
	for _, model := range []string{"T4", "Curved"} {
		for trial := range 300 {
			c, err := cluster.New(cat, []cluster.NodeSpec{{Name: "n", CPUMilli: 64000, MemMiB: 1 << 20, GPUs: 4, GPUModel: model}})
			if err != nil {
				t.Fatal(err)
			}
			n := c.Nodes[0]
			for g := range n.GPUFree {
				if s := shares[rng.IntN(len(shares))]; s > 0 {
					task := &job.Task{ID: job.ID(g + 1), Class: -1, Demand: job.Demand{CPUMilli: 1000 * rng.Int64N(8), GPUCount: 1, GPUMilli: s}}
					if err := c.Allocate(task, 0, []int{g}); err != nil {
						t.Fatal(err)
					}
				}
			}
			d := job.Demand{CPUMilli: 1000 * rng.Int64N(8), GPUCount: 1, GPUMilli: []int64{150, 400, 600, 1000}[rng.IntN(4)]}
			if rng.IntN(3) == 0 {
				d.GPUCount, d.GPUMilli = 1+rng.IntN(3), 1000
			}
			// Brute force over every set of d.GPUCount GPUs with room.
			best, any := hw.Watts(0), false
			for mask := range 1 << len(n.GPUFree) {
				var gpus []int
				for g := range n.GPUFree {
					if mask&(1<<g) != 0 && n.GPUFree[g] >= d.GPUMilli {
						gpus = append(gpus, g)
					}
				}
				if len(gpus) != d.GPUCount || bits.OnesCount(uint(mask)) != d.GPUCount {
					continue
				}
				if w := power.Increase(power.PWR{}, n, &d, gpus); !any || w > best {
					best, any = w, true
				}
			}
			bound, ok := power.PWR{}.MaxIncrease(n, &d)
			if ok != any {
				t.Fatalf("%s trial %d: MaxIncrease ok %v, brute force found a set: %v (free %v, demand %+v)", model, trial, ok, any, n.GPUFree, d)
			}
			if ok && (bound < best || bound-best > 1e-5) {
				t.Fatalf("%s trial %d: MaxIncrease %v W, largest Increase %v W (free %v, demand %+v)", model, trial, bound, best, n.GPUFree, d)
			}
		}
	}
}

// Ceiling bounds Increase on every node it was shown, in every state and
// with every GPU choice: random nodes of several CPU and GPU models
// (a measured curve among them), random allocations, random demands.
func TestCeilingBoundsEveryIncrease(t *testing.T) {
	cat, err := hw.Default().With(&hw.Catalog{GPUs: []hw.GPUModel{{Name: "Curved", IdleW: 50, TDPW: 400, Source: "test",
		Curve: []hw.CurvePoint{{Share: 0.3, Watts: 300}, {Share: 0.8, Watts: 320}}}}}, "test")
	if err != nil {
		t.Fatal(err)
	}
	specs := []cluster.NodeSpec{
		{Name: "t4", CPUMilli: 104000, MemMiB: 1 << 20, GPUs: 2, GPUModel: "T4"},
		{Name: "curved", CPUMilli: 64000, MemMiB: 1 << 20, GPUs: 4, GPUModel: "Curved"},
		{Name: "v100", CPUMilli: 96000, MemMiB: 1 << 20, GPUs: 8, GPUModel: "V100M32"},
		{Name: "cpu", CPUMilli: 256000, MemMiB: 1 << 20},
	}
	c, err := cluster.New(cat, specs)
	if err != nil {
		t.Fatal(err)
	}
	var ceil power.Ceiling
	for _, n := range c.Nodes {
		ceil.Add(n)
	}
	if w := ceil.Increase(&job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}); !(w > 0) {
		t.Fatalf("Ceiling of a real demand: %v W, want a positive bound", w)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	worst := hw.Watts(0)
	for trial := range 2000 {
		n := c.Nodes[rng.IntN(len(c.Nodes))]
		saved := *n
		saved.GPUFree = slices.Clone(n.GPUFree)
		n.FreeCPUMilli = 1000 * rng.Int64N(n.CPUMilli/1000+1)
		for g := range n.GPUFree {
			n.GPUFree[g] = []int64{0, 200, 500, 900, 1000}[rng.IntN(5)]
		}
		d := job.Demand{CPUMilli: 500 * rng.Int64N(2*(n.FreeCPUMilli/1000)+1)}
		var gpus []int
		if len(n.GPUFree) > 0 && rng.IntN(4) > 0 {
			d.GPUCount, d.GPUMilli = 1+rng.IntN(len(n.GPUFree)), []int64{100, 300, 500, 1000}[rng.IntN(4)]
			for _, g := range rng.Perm(len(n.GPUFree)) {
				if len(gpus) < d.GPUCount && n.GPUFree[g] >= d.GPUMilli {
					gpus = append(gpus, g)
				}
			}
			if len(gpus) < d.GPUCount {
				*n = saved
				continue
			}
		}
		inc, bound := power.Increase(power.PWR{}, n, &d, gpus), ceil.Increase(&d)
		if inc > bound {
			t.Fatalf("trial %d on %s: Increase %v W above the ceiling %v W (free cpu %d, gpus %v, demand %+v on %v)", trial, n.Name, inc, bound, n.FreeCPUMilli, n.GPUFree, d, gpus)
		}
		worst = max(worst, inc)
		*n = saved
	}
	if worst == 0 {
		t.Fatal("no trial increased power: the test checks nothing")
	}
}

func TestIdleIsTheEmptyNodesPower(t *testing.T) {
	// G2 node: 96 vCPU = 3 sockets x 15 W idle = 45 W; 8 A10 x 30 W = 240 W: 285 W.
	// A CPU-only node of 64 vCPU: 2 sockets x 15 W = 30 W.
	c := clustertest.New().Node("g2").GPUs(8, "G2").CPU(96000).Mem(393216).Node("c").CPU(64000).Mem(1024).Build()
	for i, want := range []hw.Watts{285, 30} {
		n := c.Nodes[i]
		if got := power.Idle(n); got != want {
			t.Errorf("Idle(%s) = %v, want %v", n.Name, got, want)
		}
		if got := (power.PWR{}).NodePower(n).Total(); got != want {
			t.Errorf("NodePower(%s) of the empty node = %v, want Idle's %v", n.Name, got, want)
		}
	}
	// Allocating does not change Idle (it is the empty node's figure).
	task := &job.Task{ID: 1, Demand: job.Demand{CPUMilli: 3000, GPUCount: 1, GPUMilli: 200}}
	if err := c.Allocate(task, 0, []int{0}); err != nil {
		t.Fatal(err)
	}
	if got := power.Idle(c.Nodes[0]); got != 285 {
		t.Errorf("Idle(g2) with a task = %v, want 285", got)
	}
}
