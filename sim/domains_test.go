package sim_test

import (
	"errors"
	"fmt"
	"math"
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

// bindRacks puts the nodes of c into racks by name (rackOf), each rack
// limited to its idle power plus head watts, under one row of limit
// rowW (0: no row).
func bindRacks(t *testing.T, c *cluster.Cluster, rackOf func(name string) string, head, rowW hw.Watts) *power.Domains {
	t.Helper()
	tp := &power.Topology{Member: map[string]string{}}
	idleOf := map[string]hw.Watts{}
	names := make([]string, len(c.Nodes))
	idle := make([]hw.Watts, len(c.Nodes))
	for i, n := range c.Nodes {
		names[i], idle[i] = n.Name, power.PWR{}.NodePower(n).Total()
		r := rackOf(n.Name)
		tp.Member[n.Name] = r
		idleOf[r] += idle[i]
	}
	if rowW > 0 {
		tp.Domains = append(tp.Domains, power.Domain{Name: "row", Level: "row", Limit: rowW})
	}
	for _, r := range []string{"rack-0", "rack-1"} {
		if _, ok := idleOf[r]; !ok {
			continue
		}
		d := power.Domain{Name: r, Level: "rack", Limit: idleOf[r] + head}
		if rowW > 0 {
			d.Parent = "row"
		}
		tp.Domains = append(tp.Domains, d)
	}
	d, _, err := tp.Bind(names, idle)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// rackByHash splits nodes into two racks by their name, not their place.
func rackByHash(name string) string {
	h := 0
	for _, r := range name {
		h += int(r)
	}
	return fmt.Sprintf("rack-%d", h%2)
}

// A replay under rack limits that bind: no domain's power ever exceeds
// its limit (the recorded peak, over every power change), each domain's
// mean power times the run's length is the energy of its nodes (the
// ledger's, an independent sum), and the limits make tasks wait in most
// runs, so the property is not vacuous.
func TestDomainLimitReplay(t *testing.T) {
	bound := 0
	for seed := uint64(0); seed < 20; seed++ {
		c, tasks := randomScenario(seed)
		free, _ := sim.New(c, online(t), sim.Options{Mode: sim.Replay})
		unlimited, err := free.Run(tasks)
		if err != nil {
			t.Fatal(err)
		}
		c, tasks = randomScenario(seed)
		d := bindRacks(t, c, rackByHash, 400, 0)
		e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, Domains: d, DomainsAbove: 0.9, CheckInvariants: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(tasks)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(res.Domains) != d.Len() {
			t.Fatalf("seed %d: %d domain summaries for %d domains", seed, len(res.Domains), d.Len())
		}
		for i, s := range res.Domains {
			if !power.Limit(s.Limit).AllowsRecomputed(s.Peak) {
				t.Errorf("seed %d: domain %s peaked at %.3f W, over its %.3f W limit", seed, s.Name, s.Peak, s.Limit)
			}
			var energy hw.Joules
			for ni := range c.Nodes {
				if slicesContains(d.Path(ni), int32(i)) {
					energy += res.NodeEnergy[ni]
				}
			}
			if got := float64(s.Mean) * s.Seconds; math.Abs(got-float64(energy)) > 1e-6*float64(energy) || math.Abs(s.Seconds-res.End.Seconds()) > 1e-9*s.Seconds {
				t.Errorf("seed %d: domain %s: mean %.6f W x %.3f s = %.6f J, its nodes' energy %.6f J (run %.3f s)", seed, s.Name, s.Mean, s.Seconds, got, energy, res.End.Seconds())
			}
		}
		if waits(res) > waits(unlimited) {
			bound++
		}
	}
	if bound < 5 {
		t.Errorf("the rack limits made tasks wait in %d of 20 runs; the test needs limits that bind", bound)
	}
}

func waits(r *sim.Result) (w job.Time) {
	for _, x := range r.Tasks {
		w += x.Start - x.Submit
	}
	return w
}

func slicesContains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// The per-domain figures of a run computed by hand. Nodes a and b (one
// T4 and a 32-vCPU socket each: 25 W idle, 130 W with a 1-vCPU task, as
// in TestPowerLimit) form rack r (limit 300 W) under row w (1000 W, with
// node c, idle). Task 0 runs on a for 10 s, task 1 on b for 30 s, both
// from 0 s: the rack draws 260 W for 10 s, then 155 W for 20 s.
// mean (260x10 + 155x20)/30 = 190 W; p50 155 W (2/3 of the time); p99
// and peak 260 W; above 0.5 x 300 = 150 W: all 30 s. The row adds c's
// 25 W: mean 215, peak 285; above 500 W: 0 s.
func TestDomainStatsByHand(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Node("c").GPUs(1, "T4").Build()
	tp := &power.Topology{Member: map[string]string{"a": "r", "b": "r", "c": "w"},
		Domains: []power.Domain{{Name: "w", Level: "row", Limit: 1000}, {Name: "r", Level: "rack", Parent: "w", Limit: 300}}}
	d, _, err := tp.Bind([]string{"a", "b", "c"}, []hw.Watts{25, 25, 25})
	if err != nil {
		t.Fatal(err)
	}
	pin := policyFunc(func(st *policy.State) []policy.Action {
		if len(st.Queue) == 0 {
			return nil
		}
		t := st.Queue[0]
		return []policy.Action{policy.Start{Task: t.ID, Node: cluster.NodeID(t.ID)}}
	})
	e, err := sim.New(c, pin, sim.Options{Mode: sim.Replay, Domains: d, DomainsAbove: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run([]job.Task{
		{ID: 0, Name: "t0", Class: -1, Demand: job.Demand{CPUMilli: 1000}, Work: 10},
		{ID: 1, Name: "t1", Class: -1, Demand: job.Demand{CPUMilli: 1000}, Work: 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []power.DomainSummary{
		{Name: "w", Level: "row", Limit: 1000, Nodes: 3, Mean: 215, P50: 180, P99: 285, Peak: 285, Above: 0, Seconds: 30},
		{Name: "r", Level: "rack", Limit: 300, Nodes: 2, Mean: 190, P50: 155, P99: 260, Peak: 260, Above: 30, Seconds: 30},
	}
	if diff := cmp.Diff(want, res.Domains, cmp.Comparer(func(x, y hw.Watts) bool { return math.Abs(float64(x-y)) < 1e-9 })); diff != "" {
		t.Errorf("domain summaries (-want +got):\n%s", diff)
	}
}

// Each refusal of the engine: a policy that starts a task taking a rack
// over its limit is an error naming the rack, even with no cluster limit;
// the same start under a rack limit that holds it runs.
func TestDomainStartRefused(t *testing.T) {
	for _, c := range []struct {
		limit hw.Watts
		want  string
	}{{150, `domain "r" to 155 W, over its 150 W limit`}, {155, ""}} {
		cl := clustertest.New().Node("a").GPUs(1, "T4").Node("b").GPUs(1, "T4").Build()
		tp := &power.Topology{Member: map[string]string{"a": "r", "b": "r"}, Domains: []power.Domain{{Name: "r", Limit: c.limit}}}
		d, _, err := tp.Bind([]string{"a", "b"}, []hw.Watts{25, 25})
		if err != nil {
			t.Fatal(err)
		}
		greedy := policyFunc(func(st *policy.State) []policy.Action {
			if len(st.Queue) == 0 {
				return nil
			}
			return []policy.Action{policy.Start{Task: st.Queue[0].ID, Node: 0}}
		})
		e, err := sim.New(cl, greedy, sim.Options{Mode: sim.Replay, Domains: d})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Run([]job.Task{{ID: 0, Class: -1, Demand: job.Demand{CPUMilli: 1000}, Work: 1}})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("limit %v W: %v, want the start to run", c.limit, err)
		case c.want != "" && (!errors.Is(err, sim.ErrPolicy) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("limit %v W: %v, want ErrPolicy with %q", c.limit, err, c.want)
		}
	}
}

// A wake under power-down boots a node only where every domain on its
// path holds the node's idle power. Rack r (limit 200 W) holds b (one T4,
// 32 vCPU: 25 W idle, 5 W off, 130 W with a 4-vCPU task) and c (one T4,
// 2 vCPU: 25 W idle, 190 W with a 1-vCPU, 1-GPU task). Both power off
// after 1 s empty. Task long (1 vCPU, 1 GPU) arrives at 5 s, wakes c (the
// best fit; 2 s) and runs there from 7 s to 1007 s: r at 190 + 5 =
// 195 W. Task two (4 vCPU: only b fits it) arrives at 10 s: waking b
// would take r to 190 + 25 = 215 W, so b wakes only once long has ended
// (25 + 25 = 50 W), and two starts at 1007 + 2 = 1009 s (r at 155 W).
func TestDomainWake(t *testing.T) {
	c := clustertest.New().Node("b").GPUs(1, "T4").Node("c").GPUs(1, "T4").CPU(2000).Build()
	tp := &power.Topology{Member: map[string]string{"b": "r", "c": "r"}, Domains: []power.Domain{{Name: "r", Level: "rack", Limit: 200}}}
	d, _, err := tp.Bind([]string{"b", "c"}, []hw.Watts{25, 25})
	if err != nil {
		t.Fatal(err)
	}
	pd := &sim.PowerDown{IdleAfter: 1000, Wake: 2000, OffW: 5}
	e, err := sim.New(c, online(t), sim.Options{Mode: sim.Replay, Domains: d, DomainsAbove: 0.9, PowerDown: pd})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run([]job.Task{
		{ID: 0, Name: "long", Class: -1, Submit: 5000, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}, Work: 1000},
		{ID: 1, Name: "two", Class: -1, Submit: 10000, Demand: job.Demand{CPUMilli: 4000}, Work: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Tasks[0].Node; got != 1 {
		t.Fatalf("long on node %d, want c (1): %+v wakes %d", got, res.Tasks, res.Wakes)
	}
	if s := res.Tasks[1].Start; s != 1_009_000 {
		t.Errorf("two started at %d ms, want 1,009,000 ms (after long ends and b wakes)", s)
	}
	for _, s := range res.Domains {
		if !power.Limit(s.Limit).AllowsRecomputed(s.Peak) {
			t.Errorf("domain %s peaked at %v W over its %v W limit", s.Name, s.Peak, s.Limit)
		}
	}
}

// Results follow the nodes' names, never their order: the same cluster
// built in a shuffled node order, with the same topology and seed, places
// every task on the same node (by name) at the same time, and reports the
// same domain figures.
func TestDomainShuffledNodes(t *testing.T) {
	type placed struct {
		Node       string
		Start, End job.Time
	}
	run := func(order []int) ([]placed, []power.DomainSummary) {
		b := clustertest.New()
		models := []string{"T4", "G2", "V100M16", "P100", "T4", "G2"}
		for _, i := range order {
			b.Node(fmt.Sprintf("n%d", i)).GPUs(1+i%3, models[i]).CPU(32000)
		}
		c := b.Build()
		d := bindRacks(t, c, rackByHash, 500, 0)
		o := online(t)
		o.Placer.SetRank(cluster.TieRank(c.Nodes, 7))
		e, err := sim.New(c, o, sim.Options{Mode: sim.Replay, Domains: d, DomainsAbove: 0.9, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(3, 3))
		var tasks []job.Task
		for i := range 60 {
			tasks = append(tasks, job.Task{ID: job.ID(i), Name: fmt.Sprint(i), Class: -1, Submit: job.Time(r.IntN(50000)), Work: float64(1 + r.IntN(200)),
				Demand: job.Demand{CPUMilli: 2000, MemMiB: 512, GPUCount: 1, GPUMilli: int64(100 + r.IntN(900))}})
		}
		res, err := e.Run(tasks)
		if err != nil {
			t.Fatal(err)
		}
		var out []placed
		for _, x := range res.Tasks {
			p := placed{Start: x.Start, End: x.End}
			if x.Node >= 0 {
				p.Node = c.Nodes[x.Node].Name
			}
			out = append(out, p)
		}
		return out, res.Domains
	}
	p0, d0 := run([]int{0, 1, 2, 3, 4, 5})
	p1, d1 := run([]int{4, 2, 5, 0, 3, 1})
	if diff := cmp.Diff(p0, p1); diff != "" {
		t.Errorf("placements (-name order +shuffled):\n%s", diff)
	}
	if diff := cmp.Diff(d0, d1, cmp.Comparer(func(x, y hw.Watts) bool { return math.Abs(float64(x-y)) <= 1e-9*math.Max(1, math.Abs(float64(x))) })); diff != "" {
		t.Errorf("domain summaries (-name order +shuffled):\n%s", diff)
	}
}
