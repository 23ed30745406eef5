package plugins

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/wattsched/wattsched/cluster"
	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
	"github.com/wattsched/wattsched/k8s/gpushare"
	"github.com/wattsched/wattsched/policy"
	"github.com/wattsched/wattsched/policy/energy"
	"github.com/wattsched/wattsched/policy/fgd"
	"github.com/wattsched/wattsched/power"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// The Energy plugin's weighted, normalised totals and best nodes are the
// core Placer's with the energy scorer, alone and with FGD, for pods of
// each workload class and reference GPU (the wattsched.io/workload and
// wattsched.io/reference-gpu annotations) on H100, L40S and A100 PCIe
// nodes (the last without a speed figure: PWR's score there). The
// annotations must change some choices, or the test compares nothing
// the energy scorer adds to PWR.
func TestEnergyMatchesCorePlacer(t *testing.T) {
	workload, err := alibaba2023.Pods("default")
	if err != nil {
		t.Fatal(err)
	}
	fg, err := fgd.New(fgd.Args{}.Default(), policy.Deps{Workload: workload})
	if err != nil {
		t.Fatal(err)
	}
	en, err := energy.New(energy.Args{}, policy.Deps{Catalog: hw.Default(), Power: power.PWR{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		selector string
		fns      []tf.RegisterPluginFunc
		ws       []policy.Weighted
	}{
		{"pwr", []tf.RegisterPluginFunc{tf.RegisterPluginAsExtensionsWithWeight(EnergyName, 1, NewEnergy, "PreScore", "Score")},
			[]policy.Weighted{{Name: EnergyName, Scorer: en, Weight: 1}}},
		{"fgd", []tf.RegisterPluginFunc{tf.RegisterPluginAsExtensionsWithWeight(EnergyName, 200, NewEnergy, "PreScore", "Score"),
			tf.RegisterPluginAsExtensionsWithWeight(FGDName, 800, NewFGD, "PreScore", "Score")},
			[]policy.Weighted{{Name: EnergyName, Scorer: en, Weight: 200}, {Name: FGDName, Scorer: fg, Weight: 800}}},
	} {
		t.Run(fmt.Sprintf("%d scorers", len(tc.ws)), func(t *testing.T) {
			if moved := energyMatches(t, tc.selector, tc.fns, tc.ws); moved == 0 {
				t.Error("no pod's best nodes depend on its workload or reference GPU")
			}
		})
	}
}

// energyMatches compares the framework with the core Placer for each pod
// and returns how many pods' best nodes differ from those of the same
// demand without the two annotations.
func energyMatches(t *testing.T, selector string, fns []tf.RegisterPluginFunc, ws []policy.Weighted) int {
	nodes := []*v1.Node{gpuNode("a", "H100", 2, 32000), gpuNode("b", "L40S", 4, 64000), gpuNode("c", "A100-PCIe-80GB", 2, 32000)}
	pods := []*v1.Pod{bound(pod("x", 8000, 500, nil), "b", "1")}
	e := newEnv(t, nodes, pods, append(gpuPlugin(GPUArgs{GPUSelector: selector}), fns...)...)
	c, err := cluster.New(hw.Default(), []cluster.NodeSpec{
		{Name: "a", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 2, GPUModel: "H100"},
		{Name: "b", CPUMilli: 64000, MemMiB: 256 << 10, GPUs: 4, GPUModel: "L40S"},
		{Name: "c", CPUMilli: 32000, MemMiB: 256 << 10, GPUs: 2, GPUModel: "A100-PCIe-80GB"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Allocate(&job.Task{ID: 1, Demand: job.Demand{CPUMilli: 8000, GPUCount: 1, GPUMilli: 500}}, 1, []int{1}); err != nil {
		t.Fatal(err)
	}
	placer, err := policy.NewPlacer(nil, ws)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, milli := range []int64{300, 1000, 2000} {
		for _, kind := range []job.Kind{job.Training, job.Inference} {
			for _, ref := range []string{"", "H100", "L40S"} {
				ann := map[string]string{gpushare.AnnWorkload: string(kind)}
				if ref != "" {
					ann[gpushare.AnnReferenceGPU] = ref
				}
				p := pod("new", 4000, milli, ann)
				state := framework.NewCycleState()
				if _, st, _ := e.fw.RunPreFilterPlugins(context.Background(), state, p); !st.IsSuccess() {
					t.Fatal(st)
				}
				var feasible []fwk.NodeInfo
				for _, ni := range e.nodes {
					if e.fw.RunFilterPlugins(context.Background(), state, p, ni).IsSuccess() {
						feasible = append(feasible, ni)
					}
				}
				if st := e.fw.RunPreScorePlugins(context.Background(), state, p, feasible); !st.IsSuccess() {
					t.Fatal(st)
				}
				scores, st := e.fw.RunScorePlugins(context.Background(), state, p, feasible)
				if !st.IsSuccess() {
					t.Fatal(st)
				}
				d, _ := gpushare.Demand(p)
				tk := job.Task{ID: 99, Kind: kind, RefGPU: ref, Demand: d, Class: -1}
				top, best, ok := placer.Top(&tk, c)
				if !ok {
					t.Fatalf("milli %d: core finds no node", milli)
				}
				var kTop []cluster.NodeID
				var kBest int64 = -1
				for _, s := range scores {
					kBest = max(kBest, s.TotalScore)
				}
				for _, s := range scores {
					if s.TotalScore == kBest {
						kTop = append(kTop, cluster.NodeID(strings.Index("abc", s.Name)))
					}
				}
				slices.Sort(kTop)
				if kBest != best || !slices.Equal(kTop, top) {
					t.Errorf("milli %d %s ref %q: framework best %d on %v, core %d on %v", milli, kind, ref, kBest, kTop, best, top)
				}
				plain, _, _ := placer.Top(&job.Task{ID: 99, Demand: d, Class: -1}, c)
				if !slices.Equal(plain, top) {
					moved++
				}
			}
		}
	}
	return moved
}

// A pod's work annotations are read strictly: an unknown workload class
// or an empty reference GPU makes it unschedulable with the reason.
func TestWorkAnnotations(t *testing.T) {
	e := newEnv(t, []*v1.Node{gpuNode("a", "H100", 2, 32000)}, nil, append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensionsWithWeight(EnergyName, 1, NewEnergy, "PreScore", "Score"))...)
	for ann, want := range map[string]string{
		gpushare.AnnWorkload:     `annotation wattsched.io/workload "serving": want training or inference`,
		gpushare.AnnReferenceGPU: `annotation wattsched.io/reference-gpu " ": empty model name`,
	} {
		v := "serving"
		if ann == gpushare.AnnReferenceGPU {
			v = " "
		}
		p := pod("q", 1000, 1000, map[string]string{ann: v})
		_, st, _ := e.fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), p)
		if st.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(st.Message(), want) {
			t.Errorf("%s %q: %v %q, want UnschedulableAndUnresolvable containing %q", ann, v, st.Code(), st.Message(), want)
		}
	}
}
