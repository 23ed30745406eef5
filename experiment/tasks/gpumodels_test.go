package tasks

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/sim"
)

// usageFixture is a run on four nodes listed out of name order: d (H100,
// 2 GPUs), c (no GPU), b (L40S, 4 GPUs), a (H100, 2 GPUs); five pods:
//
//	p0: 2 whole GPUs on a, submitted 0, ran 0-3600 s, 4 kWh attributed
//	p1: half a GPU on b, submitted 0, ran 1800-5400 s, 1 kWh
//	p2: CPU only on c, submitted 0, ran 0-7200 s, 0.5 kWh
//	p3: 1 GPU on d, submitted 0, started 3600 s, still running at the
//	    end (7200 s), 0.5 kWh
//	p4: never started
//
// and node energies d 2, c 1, b 5, a 10 kWh.
func usageFixture() ([]cluster.NodeSpec, []job.Task, *sim.Result) {
	nodes := []cluster.NodeSpec{{Name: "d", GPUs: 2, GPUModel: "H100"}, {Name: "c"}, {Name: "b", GPUs: 4, GPUModel: "L40S"}, {Name: "a", GPUs: 2, GPUModel: "H100"}}
	whole := func(n int) job.Demand { return job.Demand{CPUMilli: 1000, GPUCount: n, GPUMilli: job.MilliPerGPU} }
	pods := []job.Task{{ID: 0, Demand: whole(2)}, {ID: 1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 500}},
		{ID: 2, Demand: job.Demand{CPUMilli: 1000}}, {ID: 3, Demand: whole(1)}, {ID: 4, Demand: whole(1)}}
	kwh := func(x float64) hw.Joules { return hw.Joules(x * 3.6e6) }
	s := func(x float64) job.Time { return job.Time(x * 1000) }
	res := &sim.Result{End: s(7200), NodeEnergy: []hw.Joules{kwh(2), kwh(1), kwh(5), kwh(10)},
		Tasks: []sim.TaskResult{
			{ID: 0, Submit: 0, Start: 0, End: s(3600), Node: 3, Energy: kwh(4)},
			{ID: 1, Submit: 0, Start: s(1800), End: s(5400), Node: 2, Energy: kwh(1)},
			{ID: 2, Submit: 0, Start: 0, End: s(7200), Node: 1, Energy: kwh(0.5)},
			{ID: 3, Submit: 0, Start: s(3600), End: -1, Node: 0, Energy: kwh(0.5)},
			{ID: 4, Submit: 0, Start: -1, End: -1, Node: -1},
		}}
	return nodes, pods, res
}

// near compares experiment.Num fields to 1e-9 (the kWh go through joules).
var near = cmp.Comparer(func(a, b experiment.Num) bool {
	x, y := float64(a), float64(b)
	return (math.IsNaN(x) && math.IsNaN(y)) || math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(y))
})

func TestModelUsage(t *testing.T) {
	nodes, pods, res := usageFixture()
	nan := experiment.Num(math.NaN())
	want := []ModelUsage{
		// H100 (a and d): p0 2 GPUs x 1 h + p3 1 GPU x 1 h (3600-7200 s,
		// to the end of the run) = 3 GPU-h; energy 10 + 2 = 12 kWh, busy
		// 4 + 0.5 = 4.5, idle 7.5; only p0 ended: JCT 3600 s.
		{Model: "H100", Nodes: 2, GPUs: 4, Started: 2, GPUHours: 3, EnergyKWh: 12, BusyKWh: 4.5, IdleKWh: 7.5, MeanJCTS: 3600, P90JCTS: 3600},
		// L40S (b): p1 0.5 GPU x 1 h = 0.5 GPU-h; 5 kWh, busy 1, idle 4;
		// JCT 5400 s (submitted 0, ended 5400).
		{Model: "L40S", Nodes: 1, GPUs: 4, Started: 1, GPUHours: 0.5, EnergyKWh: 5, BusyKWh: 1, IdleKWh: 4, MeanJCTS: 5400, P90JCTS: 5400},
		// cpu (c), listed last: p2 holds no GPU; 1 kWh, busy 0.5, idle 0.5.
		{Model: NoGPUModel, Nodes: 1, GPUs: 0, Started: 1, GPUHours: 0, EnergyKWh: 1, BusyKWh: 0.5, IdleKWh: 0.5, MeanJCTS: 7200, P90JCTS: 7200},
	}
	got := modelUsage(nodes, pods, res, nil)
	if diff := cmp.Diff(want, got, near); diff != "" {
		t.Errorf("modelUsage (-want +got):\n%s", diff)
	}

	// The rows do not depend on the node list's order: reversed (node IDs
	// remapped), the same accounting.
	rev := []cluster.NodeSpec{nodes[3], nodes[2], nodes[1], nodes[0]}
	res2 := *res
	res2.NodeEnergy = []hw.Joules{res.NodeEnergy[3], res.NodeEnergy[2], res.NodeEnergy[1], res.NodeEnergy[0]}
	res2.Tasks = append([]sim.TaskResult(nil), res.Tasks...)
	for i := range res2.Tasks {
		if res2.Tasks[i].Node >= 0 {
			res2.Tasks[i].Node = 3 - res2.Tasks[i].Node
		}
	}
	if diff := cmp.Diff(want, modelUsage(rev, pods, &res2, nil), near); diff != "" {
		t.Errorf("modelUsage of the reversed node list (-want +got):\n%s", diff)
	}

	// Mean over two seeds: the second run's pods on the L40S all ended
	// elsewhere (no JCT there): counts and energies average over both
	// runs, the JCT over the run that has one.
	other := modelUsage(nodes, pods, res, nil)
	other[1].Started, other[1].GPUHours, other[1].EnergyKWh, other[1].MeanJCTS, other[1].P90JCTS = 0, 0, 3, nan, nan
	m := meanUsage([][]ModelUsage{got, other})
	// L40S: started (1 + 0)/2 = 0.5, GPU-h (0.5 + 0)/2 = 0.25, energy
	// (5 + 3)/2 = 4, JCT 5400 from the first run alone.
	if diff := cmp.Diff(ModelUsage{Model: "L40S", Nodes: 1, GPUs: 4, Started: 0.5, GPUHours: 0.25, EnergyKWh: 4, BusyKWh: 1, IdleKWh: 4, MeanJCTS: 5400, P90JCTS: 5400}, m[1], near); diff != "" {
		t.Errorf("meanUsage L40S (-want +got):\n%s", diff)
	}
}
