package k8sdump

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/cluster"
)

// replaceAfter replaces the first old after anchor.
func replaceAfter(t *testing.T, s, anchor, old, new string) string {
	t.Helper()
	i := strings.Index(s, anchor)
	if i < 0 || !strings.Contains(s[i:], old) {
		t.Fatalf("%q after %q not in the dump", old, anchor)
	}
	return s[:i] + strings.Replace(s[i:], old, new, 1)
}

func readDRAFile(t *testing.T, edit func(string) string, opt Options) (*Dump, error) {
	t.Helper()
	b, err := os.ReadFile("testdata/dra.json")
	if err != nil {
		t.Fatal(err)
	}
	in := string(b)
	if edit != nil {
		in = edit(in)
	}
	return ReadWith(strings.NewReader(in), "dra.json", opt)
}

// testdata/dra.json is a cluster whose GPUs come through NVIDIA's DRA
// driver only (no nvidia.com/gpu on its nodes): an A100 node with two
// whole GPUs, an A100 node with two GPUs in MIG mode (4g.40gb at 0 +
// 3g.40gb at 4; 2g.20gb at 0 and 4, 1g.10gb at 2, 3 and 6), an H100 node
// of 8 GPUs, the driver's two DeviceClasses,
// templates, allocated and pending claims, a claim shared by two pods, a
// claim of an unknown DeviceClass and a claim shared across nodes.
func TestReadDRA(t *testing.T) {
	d, err := readDRAFile(t, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantNodes := []cluster.NodeSpec{
		// 2 whole-GPU devices.
		{Name: "a100-0", CPUMilli: 96000, MemMiB: 1 << 20, GPUs: 2, GPUModel: "NVIDIA-A100-SXM4-80GB"},
		// The 2 GPUs (parentUUID) of 7 MIG devices.
		{Name: "a100-mig-0", CPUMilli: 96000, MemMiB: 1 << 20, GPUs: 2, GPUModel: "NVIDIA-A100-SXM4-80GB"},
		{Name: "cpu-0", CPUMilli: 32000, MemMiB: 128 << 10},
		{Name: "h100-0", CPUMilli: 192000, MemMiB: 2 << 20, GPUs: 8, GPUModel: "NVIDIA-H100-80GB-HBM3"},
	}
	if diff := cmp.Diff(wantNodes, d.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	wantMIG := []NodeMIG{{Node: "a100-mig-0", Strategy: StrategyDRA, GPUs: 2,
		Instances: []string{"3 x 1g.10gb", "2 x 2g.20gb", "1 x 3g.40gb", "1 x 4g.40gb"},
		Layout: [][]cluster.MIGSlot{
			{{Profile: "4g.40gb", Start: 0}, {Profile: "3g.40gb", Start: 4}},
			// Where the driver's device names and memorySliceN capacities
			// put them, not where a layout from the counts would.
			{{Profile: "2g.20gb", Start: 0}, {Profile: "1g.10gb", Start: 2}, {Profile: "1g.10gb", Start: 3}, {Profile: "2g.20gb", Start: 4}, {Profile: "1g.10gb", Start: 6}},
		}}}
	if diff := cmp.Diff(wantMIG, d.MIG); diff != "" {
		t.Errorf("MIG (-want +got):\n%s", diff)
	}
	type got struct {
		Count int
		Milli int64
		Spec  string
		MIG   string
		Prof  string // job.Demand.MIGProfile: one MIG instance
	}
	h100 := "NVIDIA-H100-80GB-HBM3"
	want := map[string]got{
		"ml/train-0":  {2, 1000, h100, "", ""},                // allocated: h100-0 gpu-0, gpu-1; productName selector
		"ml/train-1":  {2, 1000, h100, "", ""},                // pending: the template's request, count 2
		"ml/infer-a":  {1, 500, "", "", ""},                   // shared-a100: 1 GPU / 2 pods = 500
		"ml/infer-b":  {1, 500, "", "", ""},                   // the same claim
		"ml/nb-0":     {1, 142, "", "1 x 1g.10gb", "1g.10gb"}, // allocated MIG 1g: 1*1000/7 = 142, one instance
		"ml/nb-1":     {1, 142, "", "1 x 1g.10gb", "1g.10gb"}, // pending: the template's profile selector
		"ml/ft-0":     {1, 571, "", "1 x 4g.40gb", "4g.40gb"}, // allocated 4g: 4*1000/7 = 571
		"ml/a100-job": {1, 1000, "", "", ""},                  // allocated gpu-1, no selector
		"ml/x-a":      {1, 500, "", "", ""},                   // shared-h100 by 2 pods (across nodes: a warning)
		"ml/x-b":      {1, 500, "", "", ""},
		"ml/cpu-job":  {0, 0, "", "", ""},
	}
	have := map[string]got{}
	for _, p := range d.Pods {
		have[p.Name] = got{p.Demand.GPUCount, p.Demand.GPUMilli, strings.Join(p.Demand.GPUSpec, "|"), p.MIG, p.Demand.MIGProfile}
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].Pod != "ml/fpga-job" || d.Skipped[0].Item != "items[27]" ||
		!strings.Contains(d.Skipped[0].Reason, `ResourceClaim ml/fpga (items[17]): spec.devices.requests[0].exactly.deviceClassName: DeviceClass "fpga.example.com" is not in the dump`) {
		t.Errorf("skipped %+v", d.Skipped)
	}
	wantWarn := []string{
		`items[17] ResourceClaim ml/fpga: spec.devices.requests[0].exactly.deviceClassName: DeviceClass "fpga.example.com" is not in the dump`,
		`items[18] ResourceClaim ml/shared-h100: shared by pods on different nodes (ml/x-a on a100-0; its allocation, ml/x-b on h100-0)`,
	}
	if len(d.Warnings) != len(wantWarn) {
		t.Fatalf("warnings %q, want %d", d.Warnings, len(wantWarn))
	}
	for k, w := range wantWarn {
		if !strings.HasPrefix(d.Warnings[k], w) {
			t.Errorf("warning %d: %q, want %q...", k, d.Warnings[k], w)
		}
	}
}

// With Strict, a claim naming an unknown DeviceClass and a claim shared by
// pods on different nodes are errors naming the file and the claim's
// item, and no dump comes back.
func TestReadDRAStrict(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{name: "unknown DeviceClass", want: `dra.json: items[17].spec.devices.requests[0].exactly.deviceClassName: DeviceClass "fpga.example.com" is not in the dump`},
		{name: "shared across nodes", edit: func(s string) string {
			return strings.Replace(s, `"fpga.example.com"`, `"gpu.nvidia.com"`, 1)
		}, want: `dra.json: items[18].metadata.name: shared by pods on different nodes (ml/x-a on a100-0; its allocation, ml/x-b on h100-0)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := readDRAFile(t, c.edit, Options{Strict: true})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if d != nil {
				t.Errorf("a dump came back with the error")
			}
		})
	}
	// Without both (the claim of a known class, x-a moved to h100-0), Strict
	// reads the dump.
	d, err := readDRAFile(t, func(s string) string {
		s = strings.Replace(s, `"fpga.example.com"`, `"gpu.nvidia.com"`, 1)
		return replaceAfter(t, s, `"creationTimestamp": "2026-11-20T10:09:00Z"`, `"nodeName": "a100-0"`, `"nodeName": "h100-0"`)
	}, Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Pods) != 12 || len(d.Skipped) != 0 || len(d.Warnings) != 0 {
		t.Errorf("%d pods, skipped %+v, warnings %q: want 12 pods, none skipped, no warning", len(d.Pods), d.Skipped, d.Warnings)
	}
}

// Pods whose claims cannot be turned into GPUs are skipped, each with the
// field and why.
func TestReadDRAPodErrors(t *testing.T) {
	for _, c := range []struct {
		name, old, new, pod, want string
	}{
		{name: "claim not in the dump", old: `"resourceClaimName": "ft-mig"`, new: `"resourceClaimName": "gone"`, pod: "ml/ft-0",
			want: "spec.resourceClaims[0].resourceClaimName: ResourceClaim ml/gone is not in the dump"},
		{name: "template not in the dump", old: `"resourceClaimTemplateName": "one-gpu"`, new: `"resourceClaimTemplateName": "none"`, pod: "ml/a100-job",
			// a100-job's generated claim is in the dump: it is read, the
			// template is not needed.
			want: ""},
		{name: "allocated device in no slice", old: `"device": "gpu-0-mig-5-0-4"`, new: `"device": "gpu-9"`, pod: "ml/ft-0",
			want: "allocated device gpu-9 of pool a100-mig-0 is in no ResourceSlice of the dump"},
		{name: "MIG request without a profile", old: `"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"`, new: `"expression": "true"`, pod: "ml/nb-1",
			want: "names no MIG profile"},
		{name: "profile not in the table", old: `"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"`, new: `"expression": "device.attributes['gpu.nvidia.com'].profile == '9g.1tb'"`, pod: "ml/nb-1",
			want: `MIG profile "9g.1tb" is not in the table`},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := readDRAFile(t, func(s string) string {
				if !strings.Contains(s, c.old) {
					t.Fatalf("%q not in the dump", c.old)
				}
				return strings.Replace(s, c.old, c.new, 1)
			}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var reason string
			for _, s := range d.Skipped {
				if s.Pod == c.pod {
					reason = s.Reason
				}
			}
			if c.want == "" {
				if reason != "" {
					t.Fatalf("%s skipped: %s", c.pod, reason)
				}
				return
			}
			if !strings.Contains(reason, c.want) {
				t.Fatalf("%s: skipped for %q, want %q", c.pod, reason, c.want)
			}
		})
	}
}

// A claim of several GPUs shared by two pods is not modelled (a task shares
// one GPU at most): its pods are skipped, never kept as whole GPUs each.
func TestReadDRASharedSeveralGPUs(t *testing.T) {
	d, err := readDRAFile(t, func(s string) string {
		return strings.Replace(s, `"device": "gpu-0"
       }
      ]`, `"device": "gpu-0"
       },
       {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "a100-0", "device": "gpu-1"}
      ]`, 1)
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range d.Skipped {
		if (s.Pod == "ml/infer-a" || s.Pod == "ml/infer-b") && strings.Contains(s.Reason, "a claim shared by 2 pods holds 2 GPUs") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("skipped %+v", d.Skipped)
	}
}

// The driver's productName is NVML's name; GPU feature discovery's label
// (and the catalog's alias) writes its spaces as dashes.
func TestProductLabel(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "NVIDIA-H100-80GB-HBM3",
		"NVIDIA A100-SXM4-80GB": "NVIDIA-A100-SXM4-80GB",
		" Tesla  T4 ":           "Tesla-T4",
	} {
		if got := ProductLabel(in); got != want {
			t.Errorf("ProductLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
