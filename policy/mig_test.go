package policy_test

import (
	"testing"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/cluster/clustertest"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/pwr"
)

// A 7g.80gb MIG task asks for 1000 milli of one GPU, as a whole-GPU task
// does; the Placer's caches (task classes, untouched nodes of one spec)
// must still tell them apart: the MIG task goes to the MIG node only, the
// whole-GPU task to the time-sliced one only, in either order.
func TestPlacerTellsMIGFromWhole(t *testing.T) {
	whole := &job.Task{ID: 1, Class: -1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000}}
	mig := &job.Task{ID: 2, Class: -1, Demand: job.Demand{CPUMilli: 1000, GPUCount: 1, GPUMilli: 1000, MIGProfile: "7g.80gb"}}
	for _, order := range [][]*job.Task{{whole, mig}, {mig, whole}} {
		// Both nodes alike but for MIG mode, the MIG node first.
		c := clustertest.New().Node("mig").GPUs(1, "A100").MIG().Node("plain").GPUs(1, "A100").Build()
		s, _ := pwr.New(pwr.Args{}, policy.Deps{})
		p, err := policy.NewPlacer(nil, []policy.Weighted{{Name: "pwr", Scorer: s, Weight: 1}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range order {
			d, ok := p.Place(tk, c)
			want := cluster.NodeID(1)
			if tk.MIG() {
				want = 0
			}
			if !ok || d.Node != want || len(d.GPUs) != 1 || d.MIGStart != 0 {
				t.Errorf("task %d (MIG %v) first %d: decision %+v, %v; want node %d, GPU 0, start 0", tk.ID, tk.MIG(), order[0].ID, d, ok, want)
			}
		}
	}
}
