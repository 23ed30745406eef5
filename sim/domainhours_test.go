package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/sim"
)

// TestDomainHoursByHand: node a (one P100, 32 vCPU: one Xeon socket) in
// rack-0, node b (32 vCPU, no GPU) in rack-1, both under row. Under PWR a
// idles at 15 + 25 = 40 W and draws 120 + 250 = 370 W with task x (its
// GPU and every vCPU) over [1,800, 5,400) s; b idles at 15 W and draws
// 120 W with task y (1 vCPU; a is full, so y lands on b) over [3,600,
// 10,800) s. Per hour (mean, max):
//
//	rack-0: h0 (40x1800 + 370x1800)/3600 = 205, 370; h1 205, 370; h2 40, 40
//	rack-1: h0 15, 15; h1 120, 120; h2 120, 120
//	row:    h0 (55x1800 + 385x1800)/3600 = 220, 385;
//	        h1 (490x1800 + 160x1800)/3600 = 325, 490; h2 160, 160
func TestDomainHoursByHand(t *testing.T) {
	c := clustertest.New().Node("a").GPUs(1, "P100").CPU(32000).Node("b").CPU(32000).Build()
	d := bindRacks(t, c, func(n string) string { return map[string]string{"a": "rack-0", "b": "rack-1"}[n] }, 10000, 100000)
	tasks := []job.Task{
		{ID: 1, Name: "x", Demand: job.Demand{CPUMilli: 32000, MemMiB: 1, GPUCount: 1, GPUMilli: 1000}, Class: -1, Submit: 1800_000, Work: 3600},
		{ID: 2, Name: "y", Demand: job.Demand{CPUMilli: 1000, MemMiB: 1}, Class: -1, Submit: 3600_000, Work: 7200},
	}
	run := func(hours bool) *sim.Result {
		e, err := sim.New(c.Clone(), online(t), sim.Options{Mode: sim.Replay, Domains: d, DomainHours: hours})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Run(tasks)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := run(true)
	want := [][]power.DomainHour{
		{{Mean: 220, Max: 385}, {Mean: 325, Max: 490}, {Mean: 160, Max: 160}}, // row (declared first)
		{{Mean: 205, Max: 370}, {Mean: 205, Max: 370}, {Mean: 40, Max: 40}},   // rack-0
		{{Mean: 15, Max: 15}, {Mean: 120, Max: 120}, {Mean: 120, Max: 120}},   // rack-1
	}
	if diff := cmp.Diff(want, res.DomainHours); diff != "" {
		t.Errorf("hourly domain power (-want +got):\n%s", diff)
	}
	// Without the option nothing is recorded, and nothing else changes.
	plain := run(false)
	if plain.DomainHours != nil {
		t.Errorf("DomainHours without the option: %v", plain.DomainHours)
	}
	if diff := cmp.Diff(res.Domains, plain.Domains); diff != "" {
		t.Errorf("domain summaries differ with the option (-with +without):\n%s", diff)
	}
}
