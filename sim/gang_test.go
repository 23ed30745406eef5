package sim_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// pod is one pod of gang g (size n) asking gpus whole GPUs.
func pod(id int, name, g string, n, gpus int, submitS int64, workS float64) job.Task {
	return job.Task{ID: job.ID(id), Name: name, Class: -1, Gang: g, GangSize: n, Submit: job.Time(submitS * 1000), Work: workS,
		Demand: job.Demand{CPUMilli: 1000, MemMiB: 1024, GPUCount: gpus, GPUMilli: 1000}}
}

// single is a task of its own asking gpus whole GPUs.
func single(id int, name string, gpus int, submitS int64, workS float64) job.Task {
	return pod(id, name, "", 0, gpus, submitS, workS)
}

// fragCluster is three nodes of 4 GPUs; two blockers of 3 GPUs run for
// 100 s, on a and b (3+3 > 4: bestfit cannot stack them), so a gang of
// two 4-GPU pods fits only partially (one pod, on c) until then; 1+1+4 =
// 6 GPUs are free, fewer than the gang's 8.
func fragCluster() (*cluster.Cluster, []job.Task) {
	c := clustertest.New().Node("a").GPUs(4, "G2").Node("b").GPUs(4, "G2").Node("c").GPUs(4, "G2").Build()
	tasks := []job.Task{
		single(0, "blocker-a", 3, 0, 100),
		single(1, "blocker-b", 3, 0, 100),
		pod(2, "g-0", "g", 2, 4, 1, 50),
		pod(3, "g-1", "g", 2, 4, 1, 70),
	}
	return c, tasks
}

func byName(res *sim.Result) map[string]sim.TaskResult {
	m := map[string]sim.TaskResult{}
	for _, r := range res.Tasks {
		m[r.Name] = r
	}
	return m
}

func runGang(t *testing.T, c *cluster.Cluster, tasks []job.Task, o *policy.Online, opt sim.Options) *sim.Result {
	t.Helper()
	opt.Mode, opt.CheckInvariants = sim.Replay, true
	e, err := sim.New(c, o, opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(tasks)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A gang that fits only partially never starts partially: while the
// blockers run, 4+1+1 GPUs are free (one pod of 4 fits on c), and the
// gang holds nothing; it starts whole at 100 s, and both pods end when
// the longer one does (100 + 70 s).
func TestGangAllOrNothing(t *testing.T) {
	c, tasks := fragCluster()
	res := runGang(t, c, tasks, online(t), sim.Options{})
	for _, s := range res.Samples {
		if s.At < 100000 && s.AllocGPUMilli != 6000 {
			t.Fatalf("at %d ms %d milli-GPU allocated, want the blockers' 6000 only: the gang took capacity while waiting", s.At, s.AllocGPUMilli)
		}
	}
	r := byName(res)
	for _, name := range []string{"g-0", "g-1"} {
		if r[name].Start != 100000 || r[name].End != 170000 {
			t.Errorf("%s: start %d end %d ms, want 100000 and 170000 (together, at the slower pod's end)", name, r[name].Start, r[name].End)
		}
	}
	if r["g-0"].Node == r["g-1"].Node {
		t.Errorf("both pods on node %d", r["g-0"].Node)
	}
	want := []sim.GangResult{{Name: "g", Pods: 2, GPUMilli: 8000, Submit: 1000, Start: 100000, End: 170000,
		Energy: r["g-0"].Energy + r["g-1"].Energy,
		// 1 s .. 100 s: 1+1+4 = 6 GPUs free < 8: no fragmentation wait.
		FragWait: 0}}
	if diff := cmp.Diff(want, res.Gangs); diff != "" {
		t.Errorf("gangs (-want +got):\n%s", diff)
	}
}

// backfillCase: three nodes of 4 GPUs; blockers take 3 GPUs on a and on
// b for 100 s; the gang (two 4-GPU pods, from 1 s) fits only partially
// (on c); small, a 4-GPU task from 2 s for 10 s, fits only on c.
func backfillCase() (*cluster.Cluster, []job.Task) {
	c := clustertest.New().Node("a").GPUs(4, "G2").Node("b").GPUs(4, "G2").Node("c").GPUs(4, "G2").Build()
	tasks := []job.Task{
		single(0, "blocker-a", 3, 0, 100),
		single(1, "blocker-b", 3, 0, 100),
		pod(2, "g-0", "g", 2, 4, 1, 50),
		pod(3, "g-1", "g", 2, 4, 1, 50),
		single(4, "small", 4, 2, 10),
	}
	return c, tasks
}

// Backfill (the default) starts small around the waiting gang, on c, the
// only node with 4 idle GPUs: the gang held nothing. Head-of-line blocking
// makes small wait until the gang has started at 100 s (it then takes
// the node left).
func TestGangBackfill(t *testing.T) {
	for _, tc := range []struct {
		name       string
		headOfLine bool
		smallStart job.Time
	}{
		{"backfill", false, 2000},
		{"head-of-line", true, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, tasks := backfillCase()
			o := online(t)
			o.Gangs.HeadOfLine = tc.headOfLine
			res := runGang(t, c, tasks, o, sim.Options{})
			r := byName(res)
			if r["small"].Start != tc.smallStart {
				t.Errorf("small starts at %d ms, want %d", r["small"].Start, tc.smallStart)
			}
			if r["g-0"].Start != 100000 || r["g-1"].Start != 100000 {
				t.Errorf("gang starts at %d/%d ms, want 100000", r["g-0"].Start, r["g-1"].Start)
			}
		})
	}
}

// Fragmentation wait: four nodes of 8 GPUs, three blockers of 5 GPUs for
// 100 s (one per node: 5+5 > 8): 3+3+3+8 = 17 GPUs free >= the gang's 16
// (two 8-GPU pods, from 1 s), but only one pod fits, so its whole wait
// from 1 s to 100 s (99 s) is caused by fragmentation. With small (8
// GPUs, 2 s .. 12 s) backfilled on the idle node, 9 GPUs are free then:
// 99 - 10 = 89 s.
func TestGangFragWait(t *testing.T) {
	mk := func(withSmall bool) []job.Task {
		ts := []job.Task{single(0, "blocker-a", 5, 0, 100), single(1, "blocker-b", 5, 0, 100), single(2, "blocker-c", 5, 0, 100),
			pod(3, "g-0", "g", 2, 8, 1, 50), pod(4, "g-1", "g", 2, 8, 1, 50)}
		if withSmall {
			ts = append(ts, single(5, "small", 8, 2, 10))
		}
		return ts
	}
	for _, tc := range []struct {
		small bool
		want  job.Time
	}{{false, 99000}, {true, 89000}} {
		c := clustertest.New().Node("a").GPUs(8, "G2").Node("b").GPUs(8, "G2").Node("c").GPUs(8, "G2").Node("d").GPUs(8, "G2").Build()
		res := runGang(t, c, mk(tc.small), online(t), sim.Options{})
		if len(res.Gangs) != 1 || res.Gangs[0].FragWait != tc.want || res.Gangs[0].Start != 100000 {
			t.Errorf("small %v: gangs %+v, want a fragmentation wait of %d ms and a start at 100000", tc.small, res.Gangs, tc.want)
		}
	}
}

// The power gate admits a gang as a whole: with a limit that allows one
// 4-GPU pod's increase over the idle cluster but not two, the gang never
// starts and no GPU is ever allocated (admitting pod by pod against the
// real cluster would pass each pod alone and break the limit).
func TestGangPowerGateWhole(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(4, "G2").Node("b").GPUs(4, "G2").Build()
	m := power.PWR{}
	var idle float64
	for _, n := range c.Nodes {
		idle += float64(m.NodePower(n).Total())
	}
	p := pod(0, "g-0", "g", 2, 4, 0, 10)
	inc := float64(power.Increase(m, c.Nodes[0], &p.Demand, []int{0, 1, 2, 3}))
	limit := power.Limit(idle + 1.5*inc)
	tasks := []job.Task{p, pod(1, "g-1", "g", 2, 4, 0, 10)}
	res := runGang(t, c, tasks, online(t), sim.Options{Power: m, PowerLimit: limit})
	for _, s := range res.Samples {
		if s.AllocGPUMilli != 0 {
			t.Fatalf("at %d ms %d milli-GPU allocated: half a gang was admitted", s.At, s.AllocGPUMilli)
		}
	}
	if res.Gangs[0].Start != -1 {
		t.Errorf("gang started at %d ms over the power limit", res.Gangs[0].Start)
	}
	// Twice the limit's headroom admits it.
	c2 := clustertest.New().Node("a").GPUs(4, "G2").Node("b").GPUs(4, "G2").Build()
	res = runGang(t, c2, tasks, online(t), sim.Options{Power: m, PowerLimit: power.Limit(idle + 2.01*inc)})
	if res.Gangs[0].Start != 0 {
		t.Errorf("gang start %d ms, want 0 within a limit that holds it", res.Gangs[0].Start)
	}
}

// Node groups: a gang is packed within one group when one can hold it.
// The busy task takes a GPU on r1-a (bestfit's tie goes to the lowest
// ID); without groups the gang goes to the next nodes by ID, r2-a and
// r1-b, across racks; with racks as groups both pods go to r2.
func TestGangPacksInGroup(t *testing.T) {
	for _, grouped := range []bool{false, true} {
		c := clustertest.New().Node("r1-a").GPUs(4, "G2").Node("r2-a").GPUs(4, "G2").Node("r1-b").GPUs(4, "G2").Node("r2-b").GPUs(4, "G2").Build()
		tasks := []job.Task{single(0, "busy", 1, 0, 100), pod(1, "g-0", "g", 2, 4, 1, 10), pod(2, "g-1", "g", 2, 4, 1, 10)}
		o := online(t)
		if grouped {
			o.Gangs.Group = func(n *cluster.Node) string { return n.Name[:2] }
		}
		res := runGang(t, c, tasks, o, sim.Options{})
		r := byName(res)
		racks := map[string]bool{}
		for _, name := range []string{"g-0", "g-1"} {
			racks[c.Nodes[r[name].Node].Name[:2]] = true
		}
		if want := map[string]bool{"r2": true}; grouped && !cmp.Equal(racks, want) || !grouped && len(racks) != 2 {
			t.Errorf("grouped %v: gang on racks %v", grouped, racks)
		}
	}
}

// loneStarter starts the first queued task alone, whatever it is.
type loneStarter struct{}

func (loneStarter) Schedule(st *policy.State) []policy.Action {
	if len(st.Queue) == 0 {
		return nil
	}
	t := st.Queue[0]
	return []policy.Action{policy.Start{Task: t.ID, Node: 0, GPUs: cluster.FirstIdleGPUs(st.Cluster.Nodes[0], t.GPUCount)}}
}

func TestGangBadInput(t *testing.T) {
	big := func() *cluster.Cluster {
		return clustertest.New().Node("a").GPUs(4, "G2").Node("b").GPUs(4, "G2").Build()
	}
	for _, tc := range []struct {
		name  string
		tasks []job.Task
		want  string
	}{
		{"sizes disagree", []job.Task{pod(0, "g-0", "g", 2, 1, 0, 1), pod(1, "g-1", "g", 3, 1, 0, 1)}, "gang g: pod g-0 says gang_size 2, pod g-1 says 3"},
		{"missing pod", []job.Task{pod(0, "g-0", "g", 3, 1, 0, 1), pod(1, "g-1", "g", 3, 1, 0, 1)}, "gang g: gang_size 3 but 2 pods"},
		{"larger than cluster", []job.Task{pod(0, "g-0", "g", 3, 4, 0, 1), pod(1, "g-1", "g", 3, 4, 0, 1), pod(2, "g-2", "g", 3, 4, 0, 1)}, "gang g: 3 pods need 12 GPUs in all, more than the cluster's 8"},
		{"pod larger than any node", []job.Task{pod(0, "g-0", "g", 1, 6, 0, 1)}, "gang g: pod g-0 (6 GPUs"},
		{"size without gang", []job.Task{pod(0, "x", "", 2, 1, 0, 1)}, "task 0 (x): gang_size 2 without a gang"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := sim.New(big(), online(t), sim.Options{Mode: sim.Replay})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Run(tc.tasks)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("pod started alone", func(t *testing.T) {
		e, err := sim.New(big(), loneStarter{}, sim.Options{Mode: sim.Replay})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Run([]job.Task{pod(0, "g-0", "g", 2, 1, 0, 1), pod(1, "g-1", "g", 2, 1, 0, 1)})
		if !errors.Is(err, sim.ErrPolicy) || !strings.Contains(err.Error(), "started alone") {
			t.Fatalf("error %v, want a policy error: half a gang started", err)
		}
	})
}

// gangScenario is a random cluster and a mix of gangs and lone tasks, every
// job at its own submit time.
func gangScenario(seed uint64) ([]cluster.NodeSpec, []job.Task) {
	r := rand.New(rand.NewPCG(seed, 7))
	var specs []cluster.NodeSpec
	for i := range 3 + r.IntN(6) {
		specs = append(specs, cluster.NodeSpec{Name: fmt.Sprintf("n%02d", i), CPUMilli: 64000, MemMiB: 262144, GPUs: []int{2, 4, 8}[r.IntN(3)], GPUModel: "G2"})
	}
	var tasks []job.Task
	id := 0
	for j := range 30 + r.IntN(30) {
		submit := int64(j * 7)
		work := float64(5 + r.IntN(200))
		if r.IntN(2) == 0 {
			tasks = append(tasks, single(id, fmt.Sprintf("t%02d", j), r.IntN(3), submit, work))
			if tasks[len(tasks)-1].GPUCount == 0 {
				tasks[len(tasks)-1].GPUMilli = 0
			}
			id++
			continue
		}
		n := 2 + r.IntN(3)
		g := 1 + r.IntN(2)
		for k := range n {
			tasks = append(tasks, pod(id, fmt.Sprintf("j%02d-%d", j, k), fmt.Sprintf("j%02d", j), n, g, submit, work+float64(r.IntN(20))))
			id++
		}
	}
	return specs, tasks
}

// Determinism: shuffling the nodes and the pods gives the same result,
// task by task (by name), with ties broken by cluster.TieRank; and every
// gang's pods start and end together on distinct GPUs (invariants checked
// after every step).
func TestGangShuffleInvariant(t *testing.T) {
	type row struct {
		Start, End job.Time
		Node       string
	}
	run := func(specs []cluster.NodeSpec, tasks []job.Task) (map[string]row, []sim.GangResult) {
		c, err := cluster.New(hw.Default(), specs)
		if err != nil {
			t.Fatal(err)
		}
		o := online(t)
		o.Placer.SetRank(cluster.TieRank(c.Nodes, 3))
		res := runGang(t, c, tasks, o, sim.Options{})
		out := map[string]row{}
		for _, r := range res.Tasks {
			n := ""
			if r.Node >= 0 {
				n = c.Nodes[r.Node].Name
			}
			out[r.Name] = row{r.Start, r.End, n}
		}
		return out, res.Gangs
	}
	for seed := uint64(0); seed < 20; seed++ {
		specs, tasks := gangScenario(seed)
		want, wantG := run(specs, tasks)
		started := 0
		for _, g := range wantG {
			if g.Start >= 0 {
				started++
			}
		}
		if started == 0 {
			t.Fatalf("seed %d: no gang started", seed)
		}
		r := rand.New(rand.NewPCG(seed, 99))
		r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
		r.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
		got, gotG := run(specs, tasks)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: shuffled nodes and pods changed the result (-want +got):\n%s", seed, diff)
		}
		for i := range gotG {
			gotG[i].Energy, wantG[i].Energy = 0, 0 // summed in another order: equal up to rounding
		}
		if diff := cmp.Diff(wantG, gotG); diff != "" {
			t.Fatalf("seed %d: gangs (-want +got):\n%s", seed, diff)
		}
		for name, w := range want {
			if i := strings.IndexByte(name, '-'); i > 0 && w.Start >= 0 {
				if w0 := want[name[:i]+"-0"]; w0.Start != w.Start || w0.End != w.End {
					t.Fatalf("seed %d: %s runs %d..%d, its gang's pod 0 %d..%d", seed, name, w.Start, w.End, w0.Start, w0.End)
				}
			}
		}
	}
}

// Power-down wakes what a gang lacks: x holds one GPU of a for 1000 s,
// b and c power off after 10 s idle; at 100 s a gang of two 3-GPU pods
// arrives. Each pod alone fits on a (3 GPUs free), both together do not:
// the engine wakes one node for the second pod, and the gang starts when
// it is up (100 + 5 s), not after x has ended.
func TestGangWakesWhatItLacks(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(4, "G2").Node("b").GPUs(4, "G2").Node("c").GPUs(4, "G2").Build()
	tasks := []job.Task{single(0, "x", 1, 0, 1000), pod(1, "g-0", "g", 2, 3, 100, 10), pod(2, "g-1", "g", 2, 3, 100, 10)}
	res := runGang(t, c, tasks, online(t), sim.Options{PowerDown: &sim.PowerDown{IdleAfter: 10000, Wake: 5000, OffW: 5}})
	if g := res.Gangs[0]; g.Start != 105000 || res.Wakes != 1 {
		t.Errorf("gang starts at %d ms after %d wakes, want 105000 after 1", g.Start, res.Wakes)
	}
}
