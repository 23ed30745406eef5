package k8sdump

import (
	"strings"
	"testing"
)

// A pod asking for more GPUs than any node has (here 6 on nodes of 4) is
// skipped with a reason naming it, and counted among the skipped pods;
// with Strict it is an error naming the item and the pod.
func TestPodLargerThanAnyNode(t *testing.T) {
	in := strings.Replace(dump, `"nvidia.com/gpu": "2"}}},`, `"nvidia.com/gpu": "6"}}},`, 1)
	d, err := Read(strings.NewReader(in), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pods) != 1 || d.Pods[0].Name != "ml/share" {
		t.Fatalf("kept %+v, want ml/share only", d.Pods)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Pod != "ml/train" || d.Skipped[0].Item != "items[3]" ||
		!strings.Contains(d.Skipped[0].Reason, "pod ml/train asks for 6 GPUs, more than any node has (4 at most per pod)") {
		t.Fatalf("skipped %+v", d.Skipped)
	}
	_, err = ReadWith(strings.NewReader(in), "c.json", Options{Strict: true})
	if err == nil || !strings.Contains(err.Error(), "c.json: items[3].spec.containers[].resources.requests.nvidia.com/gpu: pod ml/train asks for 6 GPUs") {
		t.Fatalf("strict: %v", err)
	}
}
