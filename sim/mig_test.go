package sim_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/energy"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/policy/pwr"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// migTask asks for one MIG instance of profile (share: its compute
// slices x 1000 / 7).
func migTask(id int, name, profile string, submitS int64, workS float64) job.Task {
	_, milli, err := hw.MIGProfileFor(hw.Default(), []string{"A100"}, profile)
	if err != nil {
		panic(err)
	}
	return job.Task{ID: job.ID(id), Name: name, Class: -1, Submit: job.Time(submitS * 1000), Work: workS,
		Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: milli, MIGProfile: profile}}
}

func share(id int, name string, milli int64, submitS int64, workS float64) job.Task {
	return job.Task{ID: job.ID(id), Name: name, Class: -1, Submit: job.Time(submitS * 1000), Work: workS,
		Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: 1, GPUMilli: milli}}
}

// A static layout of two 3g.40gb instances on an A100 holds two 3g tasks
// at once: the third waits until one ends (at 50 s) and takes the freed
// instance; share and whole-GPU tasks never land on the MIG node, MIG
// tasks never on the time-sliced one.
func TestMIGStaticReplay(t *testing.T) {
	two3g := []cluster.MIGSlot{{Profile: "3g.40gb", Start: 0}, {Profile: "3g.40gb", Start: 4}}
	c := clustertest.New().Node("mig").GPUs(1, "A100").MIG(two3g...).Node("plain").GPUs(2, "A100").Build()
	// s and w arrive first, when bestfit would prefer the MIG node's
	// one idle GPU (the least free GPU capacity) were it not in MIG mode.
	tasks := []job.Task{
		share(0, "s", 300, 0, 10),
		{ID: 1, Name: "w", Class: -1, Submit: 0, Work: 10, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}},
		migTask(2, "a", "3g.40gb", 0, 100),
		migTask(3, "b", "3g.40gb", 0, 50),
		migTask(4, "c", "3g.40gb", 1, 10),
	}
	var chosen []string
	o := online(t)
	o.Explain = func(_ job.Time, tk *job.Task, x *policy.Explanation) {
		if x.MIG != nil {
			chosen = append(chosen, tk.Name+" "+x.MIG.String())
		}
	}
	res := runGang(t, c, tasks, o, sim.Options{})
	got := byName(res)
	if got["c"].Start != 50000 || got["c"].Node != 0 {
		t.Errorf("c started at %d ms on node %d, want 50000 on the MIG node (the first free 3g instance)", got["c"].Start, got["c"].Node)
	}
	for _, n := range []string{"a", "b", "c"} {
		if got[n].Node != 0 {
			t.Errorf("MIG task %s on node %d, want the MIG node 0", n, got[n].Node)
		}
	}
	for _, n := range []string{"s", "w"} {
		if got[n].Node != 1 || got[n].Start != got[n].Submit {
			t.Errorf("%s on node %d at %d ms, want the time-sliced node 1 at once", n, got[n].Node, got[n].Start)
		}
	}
	// Explain names the instance: a and b take the two 3g instances
	// (lowest start first), c the one b freed at start 4.
	if d := cmp.Diff([]string{"a gpu0:3g.40gb@0", "b gpu0:3g.40gb@4", "c gpu0:3g.40gb@4"}, chosen); d != "" {
		t.Errorf("explained instances (-want +got):\n%s", d)
	}
	// At 1 s both 3g instances are busy: the MIG A100 draws
	// 50 + (400-50) x 6/7 = 350 W (power.MIGGPUPower), the plain node's
	// two GPUs, one with s and one with w, their 400 W TDP each (pwr-fgd
	// eq. 2).
	found := false
	for _, s := range res.Samples {
		if s.At == 1000 {
			found = true
			if want := hw.Watts(350 + 400 + 400); math.Abs(float64(s.GPUW-want)) > 1e-9 {
				t.Errorf("GPU power at 1 s %v W, want %v", s.GPUW, want)
			}
		}
	}
	if !found {
		t.Fatal("no sample at 1 s")
	}
}

// Dynamic MIG: instances are created where the policy says. A 3g.40gb
// task may start at memory slice 0 or 4, a 4g.40gb only at 0. The
// default rule (lowest start) puts the 3g at 0 and the 4g arriving next
// cannot start; FGD's MIG-aware reading, whose workload asks for 4g too,
// puts the 3g at 4 and both run at once.
func TestMIGDynamicFGDChoosesStart(t *testing.T) {
	tasks := []job.Task{migTask(0, "three", "3g.40gb", 0, 100), migTask(1, "four", "4g.40gb", 1, 100)}
	build := func() *cluster.Cluster { return clustertest.New().Node("dyn").GPUs(1, "A100").MIG().Build() }

	res := runGang(t, build(), tasks, online(t), sim.Options{})
	if s := byName(res)["four"].Start; s != 100000 {
		t.Errorf("bestfit (default start rule): 4g started at %d ms, want 100000 (after the 3g at slice 0 ends)", s)
	}

	f, err := fgd.New(fgd.Args{}.Default(), policy.Deps{Workload: tasks})
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "fgd", Scorer: f, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	res = runGang(t, build(), tasks, &policy.Online{Placer: p}, sim.Options{})
	if s := byName(res)["four"].Start; s != 1000 {
		t.Errorf("FGD: 4g started at %d ms, want 1000 (the 3g placed at slice 4)", s)
	}
}

// migStartAt starts every queued task on node 0, GPU 0, at memory slice
// start.
type migStartAt struct{ start int }

func (m migStartAt) Schedule(st *policy.State) []policy.Action {
	if len(st.Queue) == 0 {
		return nil
	}
	return []policy.Action{policy.Start{Task: st.Queue[0].ID, Node: 0, GPUs: []int{0}, MIGStart: m.start}}
}

// The engine refuses an instance at a start the profile may not take (a
// 3g.40gb at memory slice 2) and a MIG task on a time-sliced GPU.
func TestMIGInvalidStartFailsLoudly(t *testing.T) {
	for name, c := range map[string]*cluster.Cluster{
		"illegal start": clustertest.New().Node("dyn").GPUs(1, "A100").MIG().Build(),
		"no MIG GPU":    clustertest.New().Node("plain").GPUs(1, "A100").Build(),
	} {
		t.Run(name, func(t *testing.T) {
			e, err := sim.New(c, migStartAt{start: 2}, sim.Options{Mode: sim.Replay})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Run([]job.Task{migTask(0, "three", "3g.40gb", 0, 10)})
			if !errors.Is(err, sim.ErrPolicy) {
				t.Fatalf("err = %v, want ErrPolicy", err)
			}
		})
	}
}

// Properties over random replays on MIG (static and dynamic) and
// time-sliced A100 nodes under FGD, PWR and the energy scorer: no
// over-allocation and MIG instances exactly those the placements hold
// (cluster.Check after every step), every task starts and ends, MIG
// tasks only on MIG nodes and the others never there, energy the
// integral of power.
func TestMIGReplayProperties(t *testing.T) {
	profiles := []string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		b := clustertest.New()
		b.Node("dyn").GPUs(2, "A100").MIG()
		b.Node("static").GPUs(1, "A100").MIG(cluster.MIGSlot{Profile: "4g.40gb", Start: 0}, cluster.MIGSlot{Profile: "2g.20gb", Start: 4}, cluster.MIGSlot{Profile: "1g.10gb", Start: 6})
		b.Node("plain").GPUs(2, "A100")
		var tasks []job.Task
		for i := range 40 {
			submit := int64(r.IntN(200))
			if r.IntN(2) == 0 {
				tasks = append(tasks, migTask(i, fmt.Sprintf("m%d", i), profiles[r.IntN(len(profiles))], submit, float64(1+r.IntN(60))))
			} else {
				tasks = append(tasks, share(i, fmt.Sprintf("s%d", i), int64(100+r.IntN(900)), submit, float64(1+r.IntN(60))))
			}
		}
		for _, name := range []string{fgd.Name, pwr.Name, energy.Name} {
			c := b.Build()
			res := runGang(t, c, tasks, placerOnline(t, name, tasks), sim.Options{})
			for i, tr := range res.Tasks {
				mig := tasks[i].MIG()
				if tr.Start < 0 || tr.End < 0 {
					t.Fatalf("seed %d %s: task %s never ran", seed, name, tr.Name)
				}
				if onMIG := c.Nodes[tr.Node].MIG != nil; onMIG != mig {
					t.Fatalf("seed %d %s: task %s (MIG %v) on node %s", seed, name, tr.Name, mig, c.Nodes[tr.Node].Name)
				}
			}
			checkEnergyIsIntegral(t, res, idlePower(c))
		}
	}
}

// placerOnline is Online over one scorer of the registry's MIG-aware
// policies, with tasks as the workload.
func placerOnline(t *testing.T, name string, tasks []job.Task) *policy.Online {
	t.Helper()
	deps := policy.Deps{Workload: tasks, Catalog: hw.Default()}
	var s policy.Scorer
	var err error
	switch name {
	case fgd.Name:
		s, err = fgd.New(fgd.Args{}.Default(), deps)
	case pwr.Name:
		s, err = pwr.New(pwr.Args{}, deps)
	case energy.Name:
		s, err = energy.New(energy.Args{}.Default(), deps)
	}
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: name, Scorer: s, Weight: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return &policy.Online{Placer: p}
}

func idlePower(c *cluster.Cluster) hw.Watts {
	var w hw.Watts
	for _, n := range c.Nodes {
		w += power.PWR{}.NodePower(n).Total()
	}
	return w
}
