package alibaba2023_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wattsched/wattsched/trace/alibaba2023"
)

// The repeated node list has factor times the nodes, the first copy under
// the original names, the others renamed, and reads back as written.
func TestRepeatNodesRoundTrip(t *testing.T) {
	nodes, err := alibaba2023.GPUNodes()
	if err != nil {
		t.Fatal(err)
	}
	big, err := alibaba2023.RepeatNodes(nodes, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(big) != 3*len(nodes) || big[0] != nodes[0] || big[len(nodes)].Name != nodes[0].Name+"-x1" {
		t.Fatalf("%d nodes, first %q, copy 1 starts %q", len(big), big[0].Name, big[len(nodes)].Name)
	}
	var buf bytes.Buffer
	if err := alibaba2023.WriteNodes(&buf, big); err != nil {
		t.Fatal(err)
	}
	back, err := alibaba2023.ReadNodes(&buf, "big.csv")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(big, back); d != "" {
		t.Errorf("read back (-written +read):\n%s", d)
	}
	if _, err := alibaba2023.RepeatNodes(append(nodes[:1:1], nodes[0]), 1); err == nil {
		t.Error("a list with a name twice repeated without error")
	}
}

// The repeated pod list keeps every copy's times and reads back as written.
func TestRepeatPodsRoundTrip(t *testing.T) {
	pods, err := alibaba2023.Pods("default")
	if err != nil {
		t.Fatal(err)
	}
	big, err := alibaba2023.RepeatPods(pods, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := len(pods)
	if len(big) != 2*n || big[n].Submit != pods[0].Submit || big[n].Work != pods[0].Work || int(big[n].ID) != n {
		t.Fatalf("copy 1 starts %+v, want pod 0's times with ID %d", big[n], n)
	}
	var buf bytes.Buffer
	if err := alibaba2023.WritePods(&buf, big); err != nil {
		t.Fatal(err)
	}
	back, err := alibaba2023.ReadPods(&buf, "big.csv")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(big, back); d != "" {
		t.Errorf("read back (-written +read):\n%s", d)
	}
}
