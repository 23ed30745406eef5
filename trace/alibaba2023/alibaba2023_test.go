package alibaba2023

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wattsched/wattsched/job"
)

func TestEmbeddedTracesMatchREADME(t *testing.T) {
	nodes, err := GPUNodes()
	if err != nil {
		t.Fatal(err)
	}
	var gpus, cpu int64
	for _, n := range nodes {
		gpus += int64(n.GPUs)
		cpu += n.CPUMilli
	}
	// Trace README and pwr-fgd Section V-B: 1213 nodes, 6212 GPUs, 107,018 vCPU.
	if len(nodes) != 1213 || gpus != 6212 || cpu != 107018000 {
		t.Errorf("gpu node list: %d nodes, %d GPUs, %d milli-vCPU; want 1213, 6212, 107018000", len(nodes), gpus, cpu)
	}
	pods, err := Pods("default")
	if err != nil {
		t.Fatal(err)
	}
	var cpuOnly, shared, multi int
	var milli int64
	for _, p := range pods {
		switch {
		case p.GPUCount == 0:
			cpuOnly++
		case p.Shared():
			shared++
		case p.GPUCount > 1:
			multi++
		}
		milli += p.TotalGPUMilli()
	}
	// README: 8152 pods; 1088 CPU-only, 3078 sharing, 75 multi-GPU; 6086.8 GPUs requested.
	if len(pods) != 8152 || cpuOnly != 1088 || shared != 3078 || multi != 75 || milli != 6086800 {
		t.Errorf("default: %d pods, %d cpu-only, %d shared, %d multi, %d milli", len(pods), cpuOnly, shared, multi, milli)
	}
	for _, name := range []string{"multigpu50", "gpuspec33", "gpushare100", "cpu0"} {
		if _, err := Pods(name); err != nil {
			t.Errorf("Pods(%s): %v", name, err)
		}
	}
	if _, err := Pods("nope"); err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("unknown trace error = %v", err)
	}
}

func TestReadPodsErrors(t *testing.T) {
	const head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
	cases := []struct {
		name, in, want string
	}{
		{"bad int", head + "p0,12x,1,1,1000\n", "pods.csv:2: column cpu_milli: \"12x\" is not an integer"},
		{"too many gpus", head + "p0,1,1,9,1000\n", "pods.csv:2: column num_gpu: pod \"p0\" asks for 9 GPUs, more than any node has (8 at most)"},
		{"short row", head + "p0,1,1,1,1000\np1,1\n", "pods.csv:3: 2 fields, want 5"},
		{"shared several", head + "p0,1,1,2,500\n", "pods.csv:2: gpu_milli 500 with num_gpu 2"},
		{"bad header", "name,cpu,memory_mib,num_gpu,gpu_milli\n", "pods.csv:1: column 2: header \"cpu\", want \"cpu_milli\""},
		{"empty", "", "pods.csv:1: empty file"},
		{"no pods", head, "pods.csv:2: no pods"},
		{"NUL in a name", head + "p\x00,1,1,1,1000\n", "pods.csv:2: NUL byte at offset"},
		{"a line past 1 MiB", head + strings.Repeat("p", 1<<20+1) + ",1,1,1,1000\n", "pods.csv:2: line longer than 1 MiB"},
		{"duplicate pod", head + "p0,1,1,1,1000\np0,1,1,1,1000\n", "pods.csv:3: column name: pod \"p0\" already on line 2"},
		{"escape in a pod name", head + "p\x1b[2J,1,1,1,1000\n", "pods.csv:2: column name: name \"p\\x1b[2J\" holds the control character U+001B"},
		{"long pod name", head + strings.Repeat("p", 257) + ",1,1,1,1000\n", "pods.csv:2: column name: name of 257 bytes, more than 256"},
		{"bad workload", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload\np,1,1,1,1000,,LS,Running,1,5,1,H100,serving\n", "pods.csv:2: column workload: \"serving\", want training, inference"},
		{"header between forms", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n", "header has 6 columns, want 5, 11 or 12..16"},
		{"deletion before creation", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1,1,0,0,,LS,Running,10,5,10\n", "column deletion_time: 5 before creation_time 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadPods(strings.NewReader(tc.in), "pods.csv")
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ParseError containing %q", err, tc.want)
			}
		})
	}
}

func TestReadPodsFull(t *testing.T) {
	in := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n" +
		"p0,6000,12288,1,460,V100M16|V100M32,LS,Running,100,160,100\n"
	pods, err := ReadPods(strings.NewReader(in), "x.csv")
	if err != nil {
		t.Fatal(err)
	}
	p := pods[0]
	if p.CPUMilli != 6000 || p.GPUMilli != 460 || p.SpecString() != "V100M16|V100M32" || p.Submit != 100000 || p.Work != 60 {
		t.Errorf("pod = %+v", p)
	}
}

// TestReadPodsReference: the optional reference_gpu and workload columns
// after the 11 of openb; an empty cell is unknown (reference) or training.
func TestReadPodsReference(t *testing.T) {
	const head = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
	cases := []struct {
		name, in string
		ref      []string
		kind     []job.Kind
	}{
		{"reference only", head + ",reference_gpu\na,1,1,1,1000,,LS,Running,0,10,0,H100\nb,1,1,1,1000,,LS,Running,0,10,0,\n",
			[]string{"H100", ""}, []job.Kind{job.Training, job.Training}},
		{"reference and workload", head + ",reference_gpu,workload\na,1,1,1,1000,,LS,Running,0,10,0,L40S,inference\nb,1,1,1,1000,,LS,Running,0,10,0,H100,\nc,1,1,1,1000,,LS,Running,0,10,0,,training\n",
			[]string{"L40S", "H100", ""}, []job.Kind{job.Inference, job.Training, job.Training}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pods, err := ReadPods(strings.NewReader(tc.in), "pods.csv")
			if err != nil {
				t.Fatal(err)
			}
			var ref []string
			var kind []job.Kind
			for _, p := range pods {
				ref, kind = append(ref, p.RefGPU), append(kind, p.Kind)
			}
			if diff := cmp.Diff(tc.ref, ref); diff != "" {
				t.Errorf("reference_gpu (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.kind, kind); diff != "" {
				t.Errorf("workload (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadNodesErrors(t *testing.T) {
	const head = "sn,cpu_milli,memory_mib,gpu,model\n"
	cases := map[string]string{
		head + "n0,96000,1,8,\n":                  "column model: 8 GPUs without a model",
		head + "n0,96000,1,8,G2\nn0,1,1,0,\n":     "column sn: node \"n0\" already on line 2",
		head + "n0,0,1,0,\n":                      "column cpu_milli: 0 out of range",
		head + "n\x01,1,1,0,\n":                   "nodes.csv:2: column sn: name \"n\\x01\" holds the control character U+0001",
		"sn,cpu_milli,memory_mib,gpu\nn0,1,1,0\n": "header has 4 columns",
	}
	for in, want := range cases {
		if _, err := ReadNodes(strings.NewReader(in), "nodes.csv"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadNodes(%q) = %v, want %q", in, err, want)
		}
	}
}

func FuzzReadPods(f *testing.F) {
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,500\n")
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1,1,0,0,,LS,Running,1,2,1\n")
	f.Add("name,cpu_milli\n\"")
	f.Add(gangHead + "w0,1,1,1,1000,,,,0,1,0,,,j,2\nw1,1,1,1,1000,,,,0,1,0,,,j,2\n")
	f.Add(migHead + "m,1,1,1,0,A100,,,0,1,0,,,,,3g.40gb\n")
	f.Add("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload\np,1,1,1,1000,,LS,Running,1,2,1,H100,inference\n")
	f.Fuzz(func(t *testing.T, in string) {
		pods, err := ReadPods(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		for _, p := range pods {
			if err := p.Demand.Validate(); err != nil {
				t.Fatalf("accepted invalid pod %+v: %v", p, err)
			}
			if p.Kind != job.Training && p.Kind != job.Inference {
				t.Fatalf("pod %s accepted with workload %q", p.Name, p.Kind)
			}
		}
	})
}

func FuzzReadNodes(f *testing.F) {
	f.Add("sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\n")
	f.Fuzz(func(t *testing.T, in string) {
		nodes, err := ReadNodes(strings.NewReader(in), "fuzz.csv")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		for _, n := range nodes {
			if n.CPUMilli <= 0 || n.GPUs < 0 || (n.GPUs > 0) != (n.GPUModel != "") {
				t.Fatalf("accepted bad node %+v", n)
			}
		}
	})
}

// A gzip-compressed pod list is read as a plain one, whatever its name
// (the embedded traces are gzip; user lists used to fail with "header has
// 1 columns").
func TestReadPodsGzip(t *testing.T) {
	const list = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,1000\np1,2,2,1,500\n"
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(list))
	zw.Close()
	plain, err := ReadPods(strings.NewReader(list), "pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadPods(&b, "pods.csv")
	if err != nil {
		t.Fatalf("ReadPods(gzip): %v", err)
	}
	if d := cmp.Diff(plain, got); d != "" {
		t.Fatalf("gzip list differs (-plain +gzip):\n%s", d)
	}
}
