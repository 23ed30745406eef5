package k8sdump

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/trace/alibaba2023"
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

// gangDump has two gangs: ml/pg by Coscheduling's label (PodGroup
// minMember 3, two pods in the dump) and ml/wl by the Workload API's
// spec.schedulingGroup (two pods), and ml/job/workers/0 by 1.35's
// spec.workloadRef (one pod), beside a pod of its own.
const gangDump = `{"apiVersion": "v1", "kind": "List", "items": [
 {"kind": "Node", "metadata": {"name": "gpu-a", "labels": {"nvidia.com/gpu.product": "Tesla-T4"}},
  "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "4"}}},
 {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ml"}, "spec": {"minMember": 3}},
 {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "wl", "namespace": "ml"},
  "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}},
 {"kind": "Pod", "metadata": {"name": "pg-0", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z", "labels": {"scheduling.x-k8s.io/pod-group": "pg"}},
  "spec": {"containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "2"}}}]}, "status": {"phase": "Pending"}},
 {"kind": "Pod", "metadata": {"name": "pg-1", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:01Z", "labels": {"scheduling.x-k8s.io/pod-group": "pg"}},
  "spec": {"containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "2"}}}]}, "status": {"phase": "Pending"}},
 {"kind": "Pod", "metadata": {"name": "wl-0", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:02Z"},
  "spec": {"schedulingGroup": {"podGroupName": "wl"}, "containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]}, "status": {"phase": "Pending"}},
 {"kind": "Pod", "metadata": {"name": "wl-1", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:03Z"},
  "spec": {"schedulingGroup": {"podGroupName": "wl"}, "containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]}, "status": {"phase": "Pending"}},
 {"kind": "Pod", "metadata": {"name": "w135", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:03Z"},
  "spec": {"workloadRef": {"name": "job", "podGroup": "workers", "podGroupReplicaKey": "0"}, "containers": [{"resources": {"requests": {"cpu": "1", "nvidia.com/gpu": "1"}}}]}, "status": {"phase": "Pending"}},
 {"kind": "Pod", "metadata": {"name": "solo", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:04Z"},
  "spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}, "status": {"phase": "Pending"}}
]}`

// Pods of a PodGroup (the Coscheduling label or the Workload API's
// schedulingGroup or workloadRef) are imported as gang pods, gang_size the pods kept; a
// PodGroup asking for more pods than the dump keeps is a warning (an
// error with Strict), and pods.csv carries the gang columns, which the
// openb reader reads back as gangs.
func TestImportGangs(t *testing.T) {
	d, err := Read(strings.NewReader(gangDump), "g.json")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range d.Pods {
		got = append(got, fmt.Sprintf("%s:%s:%d", p.Name, p.Gang, p.GangSize))
	}
	want := []string{"ml/pg-0:ml/pg:2", "ml/pg-1:ml/pg:2", "ml/wl-0:ml/wl:2", "ml/w135:ml/job/workers/0:1", "ml/wl-1:ml/wl:2", "ml/solo::0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gangs (-want +got):\n%s", diff)
	}
	if len(d.Warnings) != 1 || d.Warnings[0] != "items[1] PodGroup ml/pg asks for 3 pods to start together, the dump keeps 2 of its pods: replayed as a gang of 2" {
		t.Errorf("warnings %q", d.Warnings)
	}
	_, err = ReadWith(strings.NewReader(gangDump), "g.json", Options{Strict: true})
	if err == nil || err.Error() != "g.json: items[1].spec: PodGroup ml/pg asks for 3 pods to start together, the dump keeps 2 of its pods: replayed as a gang of 2" {
		t.Errorf("strict: %v", err)
	}
	csv := string(d.Files("g.json", nil)["pods.csv"])
	tasks, err := alibaba2023.ReadPods(strings.NewReader(csv), "pods.csv")
	if err != nil {
		t.Fatalf("pods.csv does not read back: %v\n%s", err, csv)
	}
	var back []string
	for _, tk := range tasks {
		back = append(back, fmt.Sprintf("%s:%s:%d", tk.Name, tk.Gang, tk.GangSize))
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("pods.csv read back (-want +got):\n%s\n%s", diff, csv)
	}
}
