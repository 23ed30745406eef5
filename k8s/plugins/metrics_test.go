package plugins

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/component-base/metrics/legacyregistry"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

// profileSeries are the samples of family whose profile label is
// profile, keyed by their other labels ("k=v,k=v" in label order), with
// a histogram's count and sum as key+" count" and key+" sum".
func profileSeries(t *testing.T, family, profile string) map[string]float64 {
	t.Helper()
	fams, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			key, mine := "", false
			for _, l := range m.GetLabel() {
				if l.GetName() == "profile" {
					mine = l.GetValue() == profile
					continue
				}
				if key != "" {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			if !mine {
				continue
			}
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key+" count"] = float64(m.GetHistogram().GetSampleCount())
				out[key+" sum"] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

// Without a PowerBudget plugin a profile exports each node's modelled
// power, and each score plugin's placements and chosen-node scores, at
// PostBind.
func TestProfileMetricsWithoutBudget(t *testing.T) {
	const profile = "metrics-test"
	nodes := []*v1.Node{gpuNode("t4", "T4", 2, 32000), gpuNode("v100", "V100M16", 8, 96000), gpuNode("cpu", "", 0, 8000)}
	cs := fake.NewClientset()
	snap := cache.NewSnapshot(nil, nodes)
	fw, err := tf.NewFramework(context.Background(), []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
		tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
		tf.RegisterPluginAsExtensions(GPUName, NewGPU, "PreFilter", "Filter", "Reserve", "PostBind"),
		withArgs(GPUName, GPUArgs{GPUSelector: "pwr"}),
		tf.RegisterPluginAsExtensionsWithWeight(PWRName, 3, NewPWR, "PreScore", "Score"),
		tf.RegisterPluginAsExtensionsWithWeight(BestFitName, 1, NewBestFit, "PreScore", "Score"),
	}, profile,
		frameworkruntime.WithSnapshotSharedLister(snap),
		frameworkruntime.WithClientSet(cs),
		frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(cs, 0)))
	if err != nil {
		t.Fatal(err)
	}
	// The chosen-score series exist, empty, before any pod.
	want := map[string]float64{"plugin=PWR count": 0, "plugin=PWR sum": 0, "plugin=BestFit count": 0, "plugin=BestFit sum": 0}
	if diff := cmp.Diff(want, profileSeries(t, "wattsched_chosen_node_score", profile)); diff != "" {
		t.Errorf("chosen score before any pod (-want +got):\n%s", diff)
	}
	infos, err := snap.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p := pod("new", 4000, 1000, nil)
	state := framework.NewCycleState()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, p); !st.IsSuccess() {
		t.Fatal(st)
	}
	// Idle nodes, PWR eqs. 1-2 over the default catalog's CPU (idle
	// socket 15 W) and GPUs: t4 one socket + 2 T4 x 10 W = 35 W; v100
	// three sockets (96 vCPU) 45 W + 8 V100 x 30 W = 285 W; cpu one
	// socket, 15 W.
	wantPower := map[string]float64{"gpu_model=T4,node=t4": 35, "gpu_model=V100M16,node=v100": 285, "gpu_model=none,node=cpu": 15}
	if diff := cmp.Diff(wantPower, profileSeries(t, "wattsched_modelled_node_power_watts", profile)); diff != "" {
		t.Errorf("modelled power (-want +got):\n%s", diff)
	}
	var feasible []fwk.NodeInfo
	for _, ni := range infos {
		if fw.RunFilterPlugins(ctx, state, p, ni).IsSuccess() {
			feasible = append(feasible, ni)
		}
	}
	if st := fw.RunPreScorePlugins(ctx, state, p, feasible); !st.IsSuccess() {
		t.Fatal(st)
	}
	if _, st := fw.RunScorePlugins(ctx, state, p, feasible); !st.IsSuccess() {
		t.Fatal(st)
	}
	// The scores of TestScoreExplainAnnotation: t4 is PWR's and BestFit's
	// best (normalised 100 each), v100 0. Bind v100 instead, as another
	// plugin's weight might: its scores, 0 from each, are what count.
	if st := fw.RunReservePluginsReserve(ctx, state, p, "v100"); !st.IsSuccess() {
		t.Fatal(st)
	}
	fw.RunPostBindPlugins(ctx, state, p, "v100")
	// Every GPU model's series exists from the first cycle, at zero until
	// its first pod (Prometheus's increase() needs the zero).
	want = map[string]float64{"gpu_model=V100M16,plugin=PWR": 1, "gpu_model=V100M16,plugin=BestFit": 1,
		"gpu_model=T4,plugin=PWR": 0, "gpu_model=T4,plugin=BestFit": 0, "gpu_model=none,plugin=PWR": 0, "gpu_model=none,plugin=BestFit": 0}
	if diff := cmp.Diff(want, profileSeries(t, "wattsched_pods_placed_total", profile)); diff != "" {
		t.Errorf("placed (-want +got):\n%s", diff)
	}
	// A second pod on t4 (100 from each plugin).
	p2 := pod("second", 4000, 1000, nil)
	state = framework.NewCycleState()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, p2); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := fw.RunPreScorePlugins(ctx, state, p2, feasible); !st.IsSuccess() {
		t.Fatal(st)
	}
	if _, st := fw.RunScorePlugins(ctx, state, p2, feasible); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := fw.RunReservePluginsReserve(ctx, state, p2, "t4"); !st.IsSuccess() {
		t.Fatal(st)
	}
	fw.RunPostBindPlugins(ctx, state, p2, "t4")
	want = map[string]float64{"plugin=PWR count": 2, "plugin=PWR sum": 100, "plugin=BestFit count": 2, "plugin=BestFit sum": 100}
	if diff := cmp.Diff(want, profileSeries(t, "wattsched_chosen_node_score", profile)); diff != "" {
		t.Errorf("chosen score (-want +got):\n%s", diff)
	}
	want = map[string]float64{"gpu_model=V100M16,plugin=PWR": 1, "gpu_model=V100M16,plugin=BestFit": 1,
		"gpu_model=T4,plugin=PWR": 1, "gpu_model=T4,plugin=BestFit": 1, "gpu_model=none,plugin=PWR": 0, "gpu_model=none,plugin=BestFit": 0}
	if diff := cmp.Diff(want, profileSeries(t, "wattsched_pods_placed_total", profile)); diff != "" {
		t.Errorf("placed (-want +got):\n%s", diff)
	}
}
