package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The gang example runs, reports its 31 gangs, and twice gives the same
// bytes.
func TestGangExample(t *testing.T) {
	dir := t.TempDir()
	ex := filepath.Join("..", "..", "examples", "gangs-philly.yaml")
	var sums [2][]byte
	for i := range sums {
		out := filepath.Join(dir, "o"+string(rune('0'+i)))
		code, stdout, stderr := run(t, "run", "-c", ex, "-o", out)
		if code != 0 {
			t.Fatalf("run: exit %d\n%s", code, stderr)
		}
		if !strings.Contains(stdout, "Gang jobs") || !strings.Contains(stdout, "FGD     31     31") {
			t.Fatalf("no gang table with 31 gangs started under FGD:\n%s", stdout)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = b
	}
	if string(sums[0]) != string(sums[1]) {
		t.Error("two runs of the gang example differ")
	}
	if !strings.Contains(string(sums[0]), `"gangs": {`) {
		t.Error("summary.json has no gang summary")
	}
}

// Bad gangs are refused before any run, naming the file and the gang.
func TestGangBadInputCLI(t *testing.T) {
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.csv")
	os.WriteFile(nodes, []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,524288,8,P100\nn1,64000,524288,8,P100\n"), 0o644)
	head := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload,gang,gang_size\n"
	for name, tc := range map[string]struct{ pods, want string }{
		"larger than cluster": {head + "a,1000,1,8,1000,,,,0,10,0,,,big,3\nb,1000,1,8,1000,,,,0,10,0,,,big,3\nc,1000,1,8,1000,,,,0,10,0,,,big,3\n",
			"pods.csv: sim: gang big: 3 pods need 24 GPUs in all, more than the cluster's 16"},
		"sizes disagree": {head + "a,1000,1,8,1000,,,,0,10,0,,,g,2\nb,1000,1,8,1000,,,,0,10,0,,,g,3\n",
			"gang g: pod a says gang_size 2, pod b says 3"},
		"pod too big": {head + "a,1000,1,12,1000,,,,0,10,0,,,,\n", `pod "a" asks for 12 GPUs, more than any node has`},
	} {
		t.Run(name, func(t *testing.T) {
			pods := filepath.Join(dir, "pods.csv")
			os.WriteFile(pods, []byte(tc.pods), 0o644)
			sc := filepath.Join(dir, "s.yaml")
			os.WriteFile(sc, []byte("name: g\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies: [{name: FGD, scorers: [{policy: fgd, weight: 1}]}]\n"), 0o644)
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(name, " ", "-"))
			code, _, stderr := run(t, "run", "-c", sc, "-o", out)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q, want an error containing %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a result directory was left behind")
			}
		})
	}
}

// traces philly: jobs over 8 GPUs become gangs of 8-GPU pods.
func TestTracesPhilly(t *testing.T) {
	dir := t.TempDir()
	table := filepath.Join(dir, "philly.csv")
	os.WriteFile(table, []byte("timestamp,duration,num_gpus,gpu_time,cluster\n"+
		"2017-11-06 00:01:00,60.0,1,60.0,x\n"+
		"2017-11-06 00:02:00,120.0,16,1920.0,x\n"+
		"2017-11-09 00:00:00,30.0,4,120.0,x\n"), 0o644)
	out := filepath.Join(dir, "pods.csv")
	code, stdout, stderr := run(t, "traces", "philly", "--table", table, "--from", "2017-11-06", "--days", "2", "--min-gpus", "2", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if want := "1 jobs, 2 pods, 1 gangs"; !strings.Contains(stdout, want) {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	b, _ := os.ReadFile(out)
	// Row 2 (16 GPUs, 120 s after midnight) is a gang of two 8-GPU pods;
	// row 1 has 1 GPU (< --min-gpus) and row 3 is past the 2 days.
	want := "philly-2-0,32000,262144,8,1000,,,,120,240,120,,,philly-2,2\nphilly-2-1,32000,262144,8,1000,,,,120,240,120,,,philly-2,2\n"
	if !strings.HasSuffix(string(b), want) {
		t.Errorf("pod list:\n%s\nwant it to end with\n%s", b, want)
	}
}
