package gpushare

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/hw"
	"github.com/wattsched/wattsched/job"
)

func podWith(cpu string, gpus int64, ann map[string]string) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("1536Mi")}
	if gpus > 0 {
		req[ResourceGPU] = *resource.NewQuantity(gpus, resource.DecimalSI)
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Annotations: ann},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req}}}}}
}

func TestDemand(t *testing.T) {
	for _, c := range []struct {
		pod  *v1.Pod
		want job.Demand
		err  string
	}{
		{podWith("2", 0, nil), job.Demand{CPUMilli: 2000, MemMiB: 1536}, ""},
		{podWith("500m", 4, nil), job.Demand{CPUMilli: 500, MemMiB: 1536, GPUCount: 4, GPUMilli: 1000}, ""},
		{podWith("1", 0, map[string]string{AnnGPUMilli: "250", AnnGPUModels: "T4|V100M16"}),
			job.Demand{CPUMilli: 1000, MemMiB: 1536, GPUCount: 1, GPUMilli: 250, GPUSpec: []string{"T4", "V100M16"}}, ""},
		{podWith("1", 0, map[string]string{AnnGPUMilli: "0"}), job.Demand{}, "want 1..999"},
		{podWith("1", 1, map[string]string{AnnGPUMilli: "500"}), job.Demand{}, "exclusive"},
		{podWith("1", 9, nil), job.Demand{}, "nvidia.com/gpu 9: want 0..8"},
		{podWith("1", 0, map[string]string{AnnGPUModels: "T4"}), job.Demand{}, "asks for no GPU"},
		{podWith("1", 1, map[string]string{AnnGPUModels: "T4||A10"}), job.Demand{}, "empty model name"},
	} {
		got, err := Demand(c.pod)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.pod.Annotations, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.pod.Annotations, err)
		} else if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%v: (-want +got)\n%s", c.pod.Annotations, d)
		}
	}
}

func TestGPUIndex(t *testing.T) {
	p := podWith("1", 2, map[string]string{AnnGPUIndex: "3, 5"})
	if g, ok, err := GPUIndex(p); err != nil || !ok || !cmp.Equal(g, []int{3, 5}) || FormatGPUIndex(g) != "3,5" {
		t.Errorf("got %v %v %v", g, ok, err)
	}
	for _, bad := range []string{"", "a", "-1", "64", "1,,2"} {
		p.Annotations[AnnGPUIndex] = bad
		if _, _, err := GPUIndex(p); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func node(model string, gpus int64, ann map[string]string) *v1.Node {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("32"), v1.ResourceMemory: resource.MustParse("64Gi"),
		ResourceGPU: *resource.NewQuantity(gpus, resource.DecimalSI)}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{LabelGPUProduct: model}, Annotations: ann},
		Status: v1.NodeStatus{Allocatable: rl}}
}

// Pods with known GPUs are placed first; the others take the best-fit GPUs
// left; per-node power overrides replace the catalog's figures.
func TestBuildNode(t *testing.T) {
	cat := hw.Default()
	nd := node("NVIDIA-A10", 4, map[string]string{AnnGPUTDPW: "160", AnnCPUIdleW: "20"})
	allocs := []Allocation{
		{Pod: podWith("1", 0, map[string]string{AnnGPUMilli: "300"})}, // unknown GPU: best fit after the others
		{Pod: podWith("1", 0, map[string]string{AnnGPUMilli: "600"}), GPUs: []int{2}},
		{Pod: podWith("2", 2, nil), GPUs: []int{0, 1}},
		{Pod: podWith("1", 0, nil)},
	}
	n, probs, err := BuildNode(cat, nd, allocs)
	if err != nil || len(probs) != 0 {
		t.Fatal(err, probs)
	}
	if want := []int64{0, 0, 100, 1000}; !cmp.Equal(n.GPUFree, want) {
		t.Errorf("GPU free %v, want %v", n.GPUFree, want)
	}
	if n.FreeCPUMilli != 32000-5000 || n.GPU.TDPW != 160 || n.GPU.IdleW != 30 || n.CPU.IdleW != 20 || n.GPUModel != "NVIDIA-A10" {
		t.Errorf("node %+v GPU %+v CPU %+v", n, *n.GPU, *n.CPU)
	}
	// Two pods on one full GPU: the second is best-fit elsewhere and
	// reported; the node is not failed.
	allocs[0] = Allocation{Pod: podWith("1", 0, map[string]string{AnnGPUMilli: "500"}), GPUs: []int{2}}
	n, probs, err = BuildNode(cat, nd, allocs)
	if err != nil || len(probs) != 1 || !strings.Contains(probs[0].Reason, "GPU 2 has 500 milli free") {
		t.Errorf("over-allocated GPU: %v %+v", err, probs)
	}
	for want, nd := range map[string]*v1.Node{
		`unknown GPU model "H9000"`:           node("H9000", 2, nil),
		"no nvidia.com/gpu.product label":     node("", 2, nil),
		"GPU idle power 500 W above its peak": node("T4", 2, map[string]string{AnnGPUIdleW: "500"}),
		`unknown CPU model "Z80"`:             node("T4", 2, map[string]string{AnnCPUModel: "Z80"}),
	} {
		if _, _, err := BuildNode(cat, nd, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}

// A malformed foreign or stale pod never fails its node (anyone who can
// create or annotate pods could take nodes out of scheduling): each case
// is counted as well as possible and reported.
func TestBuildNodeToleratesInconsistentPods(t *testing.T) {
	cat := hw.Default()
	nd := node("NVIDIA-A10", 2, nil)
	whole := podWith("1", 1, nil)
	cases := []struct {
		name   string
		allocs []Allocation
		free   []int64
		cpu    int64
		reason string
	}{
		{"CPU-only pod with a gpu-index", []Allocation{{Pod: podWith("1", 0, nil), GPUs: []int{0}}}, []int64{1000, 1000}, 31000, "asks for no GPU"},
		{"index beyond the node's GPUs", []Allocation{{Pod: whole, GPUs: []int{5}}}, []int64{0, 1000}, 31000, "GPU 5, the node has 2"},
		{"one GPU twice", []Allocation{{Pod: podWith("1", 2, nil), GPUs: []int{0, 0}}}, []int64{0, 0}, 31000, "GPU 0 twice"},
		{"malformed gpu-milli", []Allocation{{Pod: podWith("1", 0, map[string]string{AnnGPUMilli: "abc"})}}, []int64{1000, 1000}, 31000, "not an integer"},
		{"malformed gpu-index", []Allocation{{Pod: whole, IndexErr: fmt.Errorf("annotation %s %q: bad", AnnGPUIndex, "x")}}, []int64{0, 1000}, 31000, "best-fit"},
		{"a second pod claiming a full GPU", []Allocation{{Pod: whole, GPUs: []int{0}}, {Pod: podWith("1", 1, nil), GPUs: []int{0}}}, []int64{0, 0}, 30000, "GPU 0 has 0 milli free"},
		{"no GPU left", []Allocation{{Pod: podWith("1", 2, nil), GPUs: []int{0, 1}}, {Pod: podWith("1", 1, nil), GPUs: []int{1}}}, []int64{0, 0}, 30000, "no GPU left"},
		{"CPU over capacity", []Allocation{{Pod: podWith("40", 0, nil)}}, []int64{1000, 1000}, 0, "does not fit the node's free resources"},
	}
	for _, c := range cases {
		n, probs, err := BuildNode(cat, nd, c.allocs)
		if err != nil {
			t.Errorf("%s: node failed: %v", c.name, err)
			continue
		}
		if !cmp.Equal(n.GPUFree, c.free) || n.FreeCPUMilli != c.cpu {
			t.Errorf("%s: GPU free %v CPU free %d, want %v %d", c.name, n.GPUFree, n.FreeCPUMilli, c.free, c.cpu)
		}
		if len(probs) == 0 || !strings.Contains(probs[len(probs)-1].Reason+probs[0].Reason, c.reason) {
			t.Errorf("%s: problems %+v, want %q", c.name, probs, c.reason)
		}
	}
}

// Requests too large for the model's units are errors, not zero.
func TestDemandQuantityOverflow(t *testing.T) {
	p := podWith("1", 0, nil)
	p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("1e30")
	if _, err := Demand(p); err == nil || !strings.Contains(err.Error(), "cpu request") {
		t.Errorf("cpu 1e30: %v", err)
	}
	p = podWith("1", 0, nil)
	p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("1e30")
	if _, err := Demand(p); err == nil || !strings.Contains(err.Error(), "memory request") {
		t.Errorf("memory 1e30: %v", err)
	}
}
