package plugins

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"
)

// With explain: true, PWR and BestFit write the chosen node's raw and
// normalised scores and the next best nodes' to the pod at PreBind; with
// it off (the default), nothing.
func TestScoreExplainAnnotation(t *testing.T) {
	// A pod of 4 vCPU and one whole GPU on an idle cluster:
	// PWR's raw score is minus the watts it adds: one Xeon socket from idle
	// to busy (15 W -> 120 W: +105 W) and one GPU from idle to TDP: on "t4"
	// 10 -> 70 W (+60 W): -165; on "v100" and "v100b" 30 -> 300 W (+270 W):
	// -375. Min-max normalised: t4 100, v100 0, v100b 0.
	// BestFit's raw is 100 x (1 - (0.5 x free vCPU after / 128 + 0.5 x free
	// GPUs after / 8)), truncated: t4 (32 vCPU, 2 GPUs) 100 x (1 - (0.5 x
	// 28/128 + 0.5 x 1/8)) = 82.8 -> 82; v100 and v100b (96 vCPU, 8 GPUs)
	// 100 x (1 - (0.5 x 92/128 + 0.5 x 7/8)) = 20.3 -> 20. Normalised: t4
	// 100, v100 0, v100b 0.
	nodes := []*v1.Node{gpuNode("t4", "T4", 2, 32000), gpuNode("v100", "V100M16", 8, 96000), gpuNode("v100b", "V100M16", 8, 96000)}
	want := map[string]Explanation{
		PWRName: {Chosen: NodeExplanation{Node: "t4", Raw: -165, Score: 100}, Feasible: 3,
			Next: []NodeExplanation{{Node: "v100", Raw: -375, Score: 0}, {Node: "v100b", Raw: -375, Score: 0}}},
		BestFitName: {Chosen: NodeExplanation{Node: "t4", Raw: 82, Score: 100}, Feasible: 3,
			Next: []NodeExplanation{{Node: "v100", Raw: 20, Score: 0}, {Node: "v100b", Raw: 20, Score: 0}}},
	}
	for _, explain := range []bool{true, false} {
		fns := append(gpuPlugin(GPUArgs{GPUSelector: "pwr"}),
			tf.RegisterPluginAsExtensionsWithWeight(PWRName, 3, NewPWR, "PreScore", "Score", "PreBind"),
			tf.RegisterPluginAsExtensionsWithWeight(BestFitName, 1, NewBestFit, "PreScore", "Score", "PreBind"))
		if explain {
			fns = append(fns, withArgs(PWRName, ScoreArgs{Explain: true}), withArgs(BestFitName, map[string]bool{"explain": true}))
		}
		e := newEnv(t, nodes, nil, fns...)
		p := pod("new", 4000, 1000, nil)
		if _, err := e.cs.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		state := framework.NewCycleState()
		if _, st, _ := e.fw.RunPreFilterPlugins(ctx, state, p); !st.IsSuccess() {
			t.Fatal(st)
		}
		var feasible []fwk.NodeInfo
		for _, ni := range e.nodes {
			if e.fw.RunFilterPlugins(ctx, state, p, ni).IsSuccess() {
				feasible = append(feasible, ni)
			}
		}
		if st := e.fw.RunPreScorePlugins(ctx, state, p, feasible); !st.IsSuccess() {
			t.Fatal(st)
		}
		scores, st := e.fw.RunScorePlugins(ctx, state, p, feasible)
		if !st.IsSuccess() {
			t.Fatal(st)
		}
		best := scores[0]
		for _, s := range scores {
			if s.TotalScore > best.TotalScore {
				best = s
			}
		}
		// Totals: t4 3 x 100 + 1 x 100 = 400, v100 and v100b 0.
		if best.Name != "t4" || best.TotalScore != 400 {
			t.Fatalf("explain %v: best %s with %d, want t4 with 400", explain, best.Name, best.TotalScore)
		}
		if st := e.fw.RunReservePluginsReserve(ctx, state, p, best.Name); !st.IsSuccess() {
			t.Fatal(st)
		}
		if st := e.fw.RunPreBindPlugins(ctx, state, p, best.Name); !st.IsSuccess() {
			t.Fatalf("explain %v: PreBind: %v", explain, st)
		}
		got, err := e.cs.CoreV1().Pods("default").Get(ctx, "new", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for name, w := range want {
			val, ok := got.Annotations[ExplainAnnotation(name)]
			if !explain {
				if ok {
					t.Errorf("explain off: %s = %q", ExplainAnnotation(name), val)
				}
				continue
			}
			var x Explanation
			if err := json.Unmarshal([]byte(val), &x); err != nil {
				t.Fatalf("%s = %q: %v", ExplainAnnotation(name), val, err)
			}
			if diff := cmp.Diff(w, x); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		}
	}
}

// With one feasible node kube-scheduler runs no score plugin: PreBind
// still succeeds and says so.
func TestScoreExplainUnscored(t *testing.T) {
	e := newEnv(t, []*v1.Node{gpuNode("t4", "T4", 2, 32000)}, nil, append(gpuPlugin(GPUArgs{}),
		tf.RegisterPluginAsExtensions(PWRName, NewPWR, "PreScore", "Score", "PreBind"), withArgs(PWRName, ScoreArgs{Explain: true}))...)
	p := pod("only", 1000, 1000, nil)
	ctx := context.Background()
	if _, err := e.cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	state := framework.NewCycleState()
	if _, st, _ := e.fw.RunPreFilterPlugins(ctx, state, p); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := e.fw.RunReservePluginsReserve(ctx, state, p, "t4"); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := e.fw.RunPreBindPlugins(ctx, state, p, "t4"); !st.IsSuccess() {
		t.Fatalf("PreBind without scores: %v", st)
	}
	got, err := e.cs.CoreV1().Pods("default").Get(ctx, "only", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"chosen":{"node":"t4","raw":0,"score":0},"next":[],"feasible_nodes":1,"note":"` + NotScored + `"}`
	if g := got.Annotations[ExplainAnnotation(PWRName)]; g != want {
		t.Errorf("annotation %s, want %s", g, want)
	}
}

// A bad explain argument is an error at the plugin's creation.
func TestScoreArgsStrict(t *testing.T) {
	for _, tc := range []struct {
		args any
		ok   bool
	}{
		{map[string]bool{"explain": true}, true},
		{map[string]string{"explain": "yes"}, false},
		{map[string]bool{"explian": true}, false},
	} {
		for _, pl := range []struct {
			name string
			f    func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error)
		}{{PWRName, NewPWR}, {FGDName, NewFGD}, {BestFitName, NewBestFit}} {
			_, err := tf.NewFramework(context.Background(), []tf.RegisterPluginFunc{
				tf.RegisterQueueSortPlugin(queuesort.Name, queuesort.New),
				tf.RegisterBindPlugin(defaultbinder.Name, defaultbinder.New),
				tf.RegisterPluginAsExtensions(pl.name, pl.f, "PreScore", "Score"), withArgs(pl.name, tc.args),
			}, "x", frameworkruntime.WithClientSet(fake.NewClientset()))
			if (err == nil) != tc.ok {
				t.Errorf("%s args %v: error %v, want ok %v", pl.name, tc.args, err, tc.ok)
			}
		}
	}
}
