package k8sdump

import (
	"bytes"
	"strings"
	"testing"
)

const dump = `{"apiVersion": "v1", "kind": "List", "items": [
 {"kind": "Node", "metadata": {"name": "gpu-b", "labels": {"nvidia.com/gpu.product": "Tesla-T4"}},
  "status": {"allocatable": {"cpu": "31800m", "memory": "128Gi", "nvidia.com/gpu": "4", "pods": "110"}}},
 {"kind": "Node", "metadata": {"name": "cpu-a"}, "status": {"allocatable": {"cpu": "16", "memory": "64Gi"}}},
 {"kind": "Pod", "metadata": {"name": "share", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:30Z",
   "annotations": {"wattsched.io/gpu-milli": "250", "wattsched.io/gpu-models": "Tesla-T4|A100"}},
  "spec": {"nodeName": "gpu-b", "containers": [{"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
  "status": {"phase": "Running"}},
 {"kind": "Pod", "metadata": {"name": "train", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"},
  "spec": {"containers": [{"resources": {"requests": {"cpu": "2", "memory": "3000Mi", "nvidia.com/gpu": "2"}}},
                          {"resources": {"requests": {"cpu": "1.5"}}}],
           "initContainers": [{"resources": {"requests": {"cpu": "8", "memory": "100Mi"}}}]},
  "status": {"phase": "Pending"}}
]}`

// Nodes and pods come out in the cluster model's units with the plugins'
// label and annotations; effective requests follow the scheduler's rule
// (init containers' maximum against the containers' sum).
func TestRead(t *testing.T) {
	d, err := Read(strings.NewReader(dump), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Nodes) != 2 || d.Nodes[0].Name != "cpu-a" || d.Nodes[1].CPUMilli != 31800 || d.Nodes[1].MemMiB != 131072 || d.Nodes[1].GPUs != 4 || d.Nodes[1].GPUModel != "Tesla-T4" {
		t.Fatalf("nodes %+v", d.Nodes)
	}
	if len(d.Pods) != 2 {
		t.Fatalf("pods %+v", d.Pods)
	}
	train, share := d.Pods[0], d.Pods[1]
	if train.Name != "ml/train" || train.Demand.CPUMilli != 8000 || train.Demand.MemMiB != 3000 || train.Demand.GPUCount != 2 || train.Demand.GPUMilli != 1000 {
		t.Errorf("train %+v", train)
	}
	if share.Demand.GPUCount != 1 || share.Demand.GPUMilli != 250 || strings.Join(share.Demand.GPUSpec, "|") != "Tesla-T4|A100" || share.Demand.CPUMilli != 500 {
		t.Errorf("share %+v", share)
	}
	f := d.Files("c.json")
	if !strings.Contains(string(f["pods.csv"]), "ml/train,8000,3000,2,1000,,,Pending,0,30,\n") || !strings.Contains(string(f["nodes.csv"]), "gpu-b,31800,131072,4,Tesla-T4\n") {
		t.Errorf("files:\n%s\n%s", f["nodes.csv"], f["pods.csv"])
	}
}

// Bad dumps name the file, the item and the field.
func TestReadErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "lots"}}}]}`, "c.json: items[0].status.allocatable.cpu"},
		{`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1e30"}}}]}`, "too large"},
		{`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "2"}}}]}`, "nvidia.com/gpu.product"},
		{`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
		  {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "yesterday"}}]}`, "items[1].metadata.creationTimestamp"},
		{`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
		  {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z", "annotations": {"wattsched.io/gpu-milli": "abc"}}}]}`, "wattsched.io/gpu-milli"},
		{`{"items": []}`, "no Node items"},
		{`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
		  {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}}]}`, `c.json: items[1].metadata.name: node "n" is also items[0]`},
		{`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
		  {"kind": "Pod", "metadata": {"name": "p", "namespace": "a", "creationTimestamp": "2026-01-01T00:00:00Z"}},
		  {"kind": "Pod", "metadata": {"name": "p", "namespace": "a", "creationTimestamp": "2026-01-01T00:00:00Z"}}]}`, `items[2].metadata.name: pod "a/p" is also items[1]`},
		{`{"items": [{"kind": "Node", "metadata": {"name": "n\u0000"}, "status": {"allocatable": {"cpu": "4"}}}]}`, `items[0].metadata.name: name "n\x00" holds the control character U+0000`},
		{`not json`, "c.json:"},
	} {
		if _, err := Read(strings.NewReader(c.in), "c.json"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

func TestQuantity(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "32": 32000, "500m": 500, "1.5": 1500, "2k": 2000000, "1e3": 1000000, "0.0001": 1} {
		if got, err := quantity(in, 1000); err != nil || got != want {
			t.Errorf("cpu %q: %d %v, want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]int64{"1Gi": 1 << 30, "1G": 1e9, "128974848": 128974848, "1Mi": 1 << 20} {
		if got, err := quantity(in, 1); err != nil || got != want {
			t.Errorf("memory %q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "x", "1e30", "NaN"} {
		if _, err := quantity(in, 1000); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzRead: any input parses or fails with an error naming the file; a
// dump that parses has unique, printable node names.
func FuzzRead(f *testing.F) {
	f.Add([]byte(dump))
	f.Add([]byte(`{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := Read(bytes.NewReader(in), "c.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "c.json") {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, n := range d.Nodes {
			if seen[n.Name] {
				t.Fatalf("node %q twice", n.Name)
			}
			seen[n.Name] = true
		}
	})
}
