package k8sdump

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
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
	f := d.Files("c.json", nil)
	if !strings.Contains(string(f["pods.csv"]), "ml/train,8000,3000,2,1000,,,Pending,0,30,\n") || !strings.Contains(string(f["nodes.csv"]), "gpu-b,31800,131072,4,Tesla-T4\n") {
		t.Errorf("files:\n%s\n%s", f["nodes.csv"], f["pods.csv"])
	}
}

// Bad nodes are errors that name the file, the item and the field; a bad
// pod is skipped with its item and field, and is an error with Strict.
func TestReadErrors(t *testing.T) {
	node := `{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}}`
	for _, c := range []struct {
		name, in, want string
		pod            bool   // a pod error: skipped unless strict
		item           string // the skipped item (default items[1])
		kept           int    // pods kept beside it
	}{
		{name: "cpu", in: `{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "lots"}}}]}`, want: "c.json: items[0].status.allocatable.cpu"},
		{name: "too large", in: `{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1e30"}}}]}`, want: "too large"},
		{name: "no product", in: `{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "2"}}}]}`, want: "nvidia.com/gpu.product"},
		{name: "unknown MIG profile, no count", in: `{"items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "X"}}, "status": {"allocatable": {"cpu": "4", "nvidia.com/mig-9g.1tb": "2"}}}]}`, want: "items[0].status.allocatable: MIG devices of a profile not in the table (2 x 9g.1tb)"},
		{name: "bad gpu.count", in: `{"items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "X-MIG-1g.10gb", "nvidia.com/gpu.count": "lots"}}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "7"}}}]}`, want: `items[0].metadata.labels["nvidia.com/gpu.count"]`},
		{name: "creation time", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "yesterday"}}]}`, want: "items[1].metadata.creationTimestamp", pod: true},
		{name: "gpu-milli", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z", "annotations": {"wattsched.io/gpu-milli": "abc"}}}]}`, want: "wattsched.io/gpu-milli", pod: true},
		{name: "unknown MIG profile", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"containers": [{"resources": {"requests": {"nvidia.com/mig-9g.1tb": "1"}}}]}}]}`, want: "items[1].spec.containers[].resources.requests.nvidia.com/mig-9g.1tb: MIG profile 9g.1tb is not in the table", pod: true},
		{name: "duplicate node", in: `{"items": [` + node + `, ` + node + `]}`, want: `c.json: items[1].metadata.name: node "n" is also items[0]`},
		{name: "NUL in a node name", in: `{"items": [{"kind": "Node", "metadata": {"name": "n\u0000"}, "status": {"allocatable": {"cpu": "4"}}}]}`, want: `items[0].metadata.name: name "n\x00" holds the control character U+0000`},
		{name: "duplicate pod", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}}, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}}]}`, want: `items[2].metadata.name: pod "/p" is also items[1]`, pod: true, item: "items[2]", kept: 1},
		{name: "MIG and whole GPUs", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "1", "nvidia.com/mig-1g.10gb": "1"}}}]}}]}`, want: "one kind", pod: true},
		{name: "MIG slices over one GPU", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"containers": [{"resources": {"requests": {"nvidia.com/mig-3g.40gb": "3"}}}]}}]}`, want: "9 compute slices of 7", pod: true},
		{name: "start time", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Running", "startTime": "soon"}}]}`, want: "items[1].status.startTime", pod: true},
		{name: "finished before start", in: `{"items": [` + node + `, {"kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Succeeded", "startTime": "2026-01-01T01:00:00Z", "containerStatuses": [{"state": {"terminated": {"finishedAt": "2026-01-01T00:30:00Z"}}}]}}]}`, want: "before it started", pod: true},
		{name: "no nodes", in: `{"items": []}`, want: "no Node items"},
		{name: "not json", in: `not json`, want: "c.json:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadWith(strings.NewReader(c.in), "c.json", Options{Strict: true})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("strict: %v, want %q", err, c.want)
			}
			d, err := Read(strings.NewReader(c.in), "c.json")
			if !c.pod {
				if err == nil {
					t.Fatalf("accepted without strict")
				}
				return
			}
			if err != nil {
				t.Fatalf("a bad pod aborted the import: %v", err)
			}
			item := c.item
			if item == "" {
				item = "items[1]"
			}
			if len(d.Pods) != c.kept || len(d.Skipped) != 1 || d.Skipped[0].Item != item || d.Skipped[0].Pod != "/p" || !strings.Contains(item+"."+d.Skipped[0].Reason, c.want) {
				t.Errorf("pods %+v, skipped %+v, want one skipped with %q", d.Pods, d.Skipped, c.want)
			}
		})
	}
}

// A cluster of H100, L40S, H200, MIG (mixed and single strategy) and
// CPU-only nodes: every readable pod is kept, the MIG ones with their GPU
// share, the one of another sharing convention with a warning, the bad
// one skipped with its reason; pods that ran get their real durations.
func TestReadCluster(t *testing.T) {
	f, err := os.Open("testdata/cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := Read(f, "cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	files := d.Files("cluster.json", []string{"NVIDIA-H200"})
	// a100-mig-0: its nvidia.com/gpu.count label (8); h100-mig-0: 56 MIG
	// devices of 1 slice of 7 = 8 GPUs (no label: a warning).
	wantNodes := `sn,cpu_milli,memory_mib,gpu,model
a100-mig-0,128000,1048576,8,NVIDIA-A100-SXM4-80GB
cpu-0,32000,131072,0,
h100-0,96000,1048576,8,NVIDIA-H100-80GB-HBM3
h100-mig-0,96000,1048576,8,NVIDIA-H100-80GB-HBM3
h200-0,96000,2097152,8,NVIDIA-H200
l40s-0,64000,524288,4,NVIDIA-L40S
`
	// Times in seconds from 10:00:00; the snapshot is 13:00:00 (10800).
	// train-done: ran 10:00:30 (startTime) to 12:30:30 = 9000 s.
	// mig-infer: 1g.10gb = 1/7 GPU = 142 thousandths (rounded down); running
	// from 10:01:05: 60 + (10800 - 65) = 10795.
	// foreign: gpu-milli 250 beside nvidia.com/gpu 1: 120 + (10800 - 130).
	// single-mig: 2 x 1g.10gb on a single-strategy node = 2/7 = 285; its
	// start is its container's startedAt 10:03:20: 180 + (10800 - 200).
	// serve: 240 + (10800 - 300). refused: Failed, never started: 0 s.
	// waiting: Pending, created at the snapshot.
	// mig-infer asks for one 1g.10gb: a MIG request (mig_profile), so the
	// list has the mig_profile column; single-mig's two devices stay a
	// share (one instance per task), with a warning.
	wantPods := `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload,gang,gang_size,mig_profile
ml/train-done,8000,65536,2,1000,,,Succeeded,0,9000,30,,,,,
ml/mig-infer,2000,8192,1,142,,,Running,60,10795,65,,,,,1g.10gb
ml/foreign,1000,4096,1,250,,,Running,120,10790,130,,,,,
ml/single-mig,1000,4096,1,285,,,Running,180,10780,200,,,,,
ml/serve,4000,32768,1,1000,,,Running,240,10740,300,,,,,
ml/refused,1000,0,0,0,,,Failed,420,420,,,,,,
ml/waiting,500,1024,0,0,,,Pending,10800,10800,,,,,,
`
	if diff := cmp.Diff(wantNodes, string(files["nodes.csv"])); diff != "" {
		t.Errorf("nodes.csv (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPods, string(files["pods.csv"])); diff != "" {
		t.Errorf("pods.csv (-want +got):\n%s", diff)
	}
	wantSkipped := []Skipped{{Item: "items[11]", Pod: "ml/bad", Reason: `spec.containers[0].resources.requests.cpu: "lots" is not a non-negative quantity`}}
	if diff := cmp.Diff(wantSkipped, d.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	wantWarn := []string{
		"items[3] node a100-mig-0: 4 of its 8 GPUs without MIG: scenario.yaml leaves the node out of MIG mode (a node is in MIG mode as a whole, docs/scenarios.md#mig-partitions), so its MIG devices are not replayed",
		"items[4] node h100-mig-0: no nvidia.com/gpu.count label: 8 GPUs counted from 56 MIG devices of 1g.10gb (1 of 7 slices each)",
		`items[8] pod ml/foreign: both wattsched.io/gpu-milli "250" and nvidia.com/gpu: 1 (another GPU-sharing convention): kept as 250 thousandths of one GPU`,
		"items[9] pod ml/single-mig: 2 MIG devices (2 x 1g.10gb): kept as a share of 285 thousandths of one GPU, not MIG instances (a task asks for one instance: a CUDA process sees one MIG device)",
	}
	if diff := cmp.Diff(wantWarn, d.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// Layouts under the A100/H100 80 GB placement rules (hw/mig.yaml):
	// a100-mig-0 has 8 - 4 (nvidia.com/gpu) = 4 MIG GPUs, the 3g.40gb
	// at 0 and 4 of two GPUs, seven 1g.10gb at 0..6 on each of the other
	// two (2 x 2 + 2 x 7 = 4 + 14 devices); h100-mig-0 seven 1g.10gb on
	// each of its 8 GPUs.
	sevenOnes := []cluster.MIGSlot{{Profile: "1g.10gb", Start: 0}, {Profile: "1g.10gb", Start: 1}, {Profile: "1g.10gb", Start: 2},
		{Profile: "1g.10gb", Start: 3}, {Profile: "1g.10gb", Start: 4}, {Profile: "1g.10gb", Start: 5}, {Profile: "1g.10gb", Start: 6}}
	twoThrees := []cluster.MIGSlot{{Profile: "3g.40gb", Start: 0}, {Profile: "3g.40gb", Start: 4}}
	wantMIG := []NodeMIG{
		{Node: "a100-mig-0", Strategy: "mixed", Instances: []string{"14 x 1g.10gb", "4 x 3g.40gb"}, GPUs: 8,
			Layout: [][]cluster.MIGSlot{twoThrees, twoThrees, sevenOnes, sevenOnes}},
		{Node: "h100-mig-0", Strategy: "single", Instances: []string{"56 x 1g.10gb"}, GPUs: 8,
			Layout: [][]cluster.MIGSlot{sevenOnes, sevenOnes, sevenOnes, sevenOnes, sevenOnes, sevenOnes, sevenOnes, sevenOnes}},
	}
	if diff := cmp.Diff(wantMIG, d.MIG); diff != "" {
		t.Errorf("MIG (-want +got):\n%s", diff)
	}
	if got, want := d.Durations(), (Durations{Ended: 1, Running: 4, NotStarted: 2}); got != want {
		t.Errorf("durations %+v, want %+v", got, want)
	}
	sc := string(files["scenario.yaml"])
	// h100-mig-0 in MIG mode with its layout (a100-mig-0 has GPUs
	// without MIG: left out).
	seven := "[{profile: \"1g.10gb\", start: 0}, {profile: \"1g.10gb\", start: 1}, {profile: \"1g.10gb\", start: 2}, {profile: \"1g.10gb\", start: 3}, {profile: \"1g.10gb\", start: 4}, {profile: \"1g.10gb\", start: 5}, {profile: \"1g.10gb\", start: 6}]"
	if !strings.Contains(sc, "mig:\n  - nodes: [\"h100-mig-0\"]\n    layouts:\n"+strings.Repeat("      - "+seven+"\n", 8)+"\n") || strings.Contains(sc, "a100-mig-0") {
		t.Errorf("scenario.yaml's mig section is not h100-mig-0's layout alone:\n%s", sc)
	}
	for _, want := range []string{"mode: replay\n", "# grid:\n", "#     - name: NVIDIA-H200\n#       idle_w: 0"} {
		if !strings.Contains(sc, want) {
			t.Errorf("scenario.yaml lacks %q:\n%s", want, sc)
		}
	}
}

// MIG instances map to the share of their compute slices, rounded down
// so that what fills one GPU fits one GPU in the model too.
func TestMIGShare(t *testing.T) {
	for _, c := range []struct {
		slices, of, count int
		milli             int64
	}{
		{1, 7, 1, 142},  // 1000/7 = 142.86
		{3, 7, 1, 428},  // 3000/7 = 428.57: 4g (571) + 3g (428) = 999 <= 1000
		{4, 7, 1, 571},  // 4000/7 = 571.43
		{7, 7, 1, 1000}, // a whole GPU
		{14, 7, 2, 1000},
		{1, 4, 1, 250}, // A30: 1g.6gb
	} {
		n, m, err := migShare(c.slices, c.of)
		if err != nil || n != c.count || m != c.milli {
			t.Errorf("%d of %d: %d GPUs of %d, %v; want %d of %d", c.slices, c.of, n, m, err, c.count, c.milli)
		}
	}
	if _, _, err := migShare(9, 7); err == nil {
		t.Errorf("9 slices of 7 accepted")
	}
	for name, want := range map[string]int{"1g.10gb": 1, "1g.10gb.me": 1, "3g.71gb": 3, "4g.24gb": 4, "7g.141gb": 7} {
		if p, ok := LookupMIG(name); !ok || p.Slices != want {
			t.Errorf("%s: %+v %v, want %d slices", name, p, ok, want)
		}
	}
	if p, _ := LookupMIG("4g.24gb"); p.Of != 4 {
		t.Errorf("A30 4g.24gb: of %d, want 4", p.Of)
	}
}

// FuzzRead: any input is a dump or an error naming the file, never a
// panic; a dump has unique node names and well-formed files.
func FuzzRead(f *testing.F) {
	f.Add(dump)
	for _, file := range []string{"testdata/cluster.json", "testdata/system.json", "testdata/dra.json"} {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(`{"items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "A-MIG-3g.40gb"}}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "2"}}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		d, err := Read(strings.NewReader(in), "f.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.json") {
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
		files := d.Files("f.json", nil)
		for _, p := range d.Pods {
			if err := p.Demand.Validate(); err != nil {
				t.Fatalf("pod %s kept with an invalid demand: %v", p.Name, err)
			}
		}
		if n := strings.Count(string(files["pods.csv"]), "\n"); n < len(d.Pods)+1 {
			t.Fatalf("pods.csv has %d lines for %d pods", n, len(d.Pods))
		}
	})
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

// FillTimes completes only what the dump lacks: a start, and the end of a
// pod that ended; a completion before the start is not used.
func TestFillTimes(t *testing.T) {
	in := `{"items": [{"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}},
	 {"kind": "Pod", "metadata": {"name": "a", "namespace": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Failed"}},
	 {"kind": "Pod", "metadata": {"name": "b", "namespace": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Succeeded", "startTime": "2026-01-01T00:10:00Z"}},
	 {"kind": "Pod", "metadata": {"name": "c", "namespace": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Running", "startTime": "2026-01-01T00:05:00Z"}}]}`
	d, err := Read(strings.NewReader(in), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 0, m, 0, 0, time.UTC) }
	n := d.FillTimes(map[string]PodTime{
		"x/a": {Start: at(1), End: at(31)}, // both missing: both used
		"x/b": {Start: at(2), End: at(5)},  // start kept (00:10); the end before it is not used
		"x/c": {Start: at(3), End: at(50)}, // running: its start kept, no end
	})
	if n != 1 {
		t.Errorf("%d pods changed, want 1", n)
	}
	got := map[string][2]time.Time{}
	for _, p := range d.Pods {
		got[p.Name] = [2]time.Time{p.Start, p.End}
	}
	want := map[string][2]time.Time{"x/a": {at(1), at(31)}, "x/b": {at(10), {}}, "x/c": {at(5), {}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("times (-want +got):\n%s", diff)
	}
	if !d.Snapshot.Equal(at(31)) {
		t.Errorf("snapshot %s, want %s", d.Snapshot, at(31))
	}
	if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "x/b: kube_pod_completion_time 2026-01-01T00:05:00Z before its start 2026-01-01T00:10:00Z") {
		t.Errorf("warnings %q", d.Warnings)
	}
}

// A MIG node whose devices break its product's MIG geometry: a counted
// warning (and no layout) by default, an error naming the file, item and
// field with Strict.
func TestReadMIGGeometry(t *testing.T) {
	mig := func(product, count string, devices string) string {
		return `{"items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "` + product +
			`", "nvidia.com/gpu.count": "` + count + `"}}, "status": {"allocatable": {"cpu": "4", ` + devices + `}}}]}`
	}
	for _, c := range []struct{ name, in, want string }{
		// 3g.40gb is an 80 GB profile; the A100 40 GB has 3g.20gb.
		{"profile the GPU lacks", mig("NVIDIA-A100-SXM4-40GB", "1", `"nvidia.com/mig-3g.40gb": "1"`), "MIG profile 3g.40gb is not one of A100-SXM4-40GB's"},
		// Three 3g need 12 memory slices; one GPU has 8.
		{"devices no layout holds", mig("NVIDIA-A100-SXM4-80GB", "1", `"nvidia.com/mig-3g.40gb": "3"`), "MIG layout on 1 x A100-SXM4-80GB: no layout holds 3 x 3g.40gb"},
		// A single-strategy node: the product's base names the geometry.
		{"single, profile the GPU lacks", mig("NVIDIA-H100-80GB-HBM3-MIG-1g.5gb", "1", `"nvidia.com/gpu": "7"`), "MIG profile 1g.5gb is not one of H100-SXM5-80GB's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadWith(strings.NewReader(c.in), "c.json", Options{Strict: true})
			if err == nil || !strings.Contains(err.Error(), "c.json: items[0].status.allocatable: "+c.want) {
				t.Fatalf("strict: %v, want c.json: items[0].status.allocatable: %s", err, c.want)
			}
			d, err := Read(strings.NewReader(c.in), "c.json")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, w := range d.Warnings {
				if strings.HasPrefix(w, "items[0] node n: ") && strings.Contains(w, c.want) {
					n++
				}
			}
			if n != 1 || len(d.MIG) != 1 || d.MIG[0].Layout != nil {
				t.Errorf("warnings %q, MIG %+v: want one warning with %q and no layout", d.Warnings, d.MIG, c.want)
			}
		})
	}
}

// A mixed MIG node whose nvidia.com/gpu.count is below its GPUs without
// MIG has no GPU left for its MIG devices: a warning, not a crash.
func TestReadMIGNoGPUsLeft(t *testing.T) {
	in := `{"items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1"}}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": "1"}}}]}`
	d, err := Read(strings.NewReader(in), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.MIG) != 1 || d.MIG[0].Layout != nil || !strings.Contains(strings.Join(d.Warnings, "\n"), "MIG devices (1 x 1g.10gb) but no GPU left for them: 1 GPUs counted, 2 of them without MIG") {
		t.Errorf("MIG %+v, warnings %q", d.MIG, d.Warnings)
	}
}
