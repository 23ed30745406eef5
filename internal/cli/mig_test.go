package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The MIG example compares (static and dynamic MIG, three policies), declares its stand-in, names the MIG instances
// in explain.csv, and twice gives the same bytes.
func TestMIGExample(t *testing.T) {
	dir := t.TempDir()
	ex := filepath.Join("..", "..", "examples", "mig-openb.yaml")
	var sums [2][]byte
	for i := range sums {
		out := filepath.Join(dir, "o"+string(rune('0'+i)))
		code, _, stderr := run(t, "compare", "-c", ex, "-o", out, "--explain")
		if code != 0 {
			t.Fatalf("compare: exit %d\n%s", code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = b
		if i == 0 {
			x, err := os.ReadFile(filepath.Join(out, "explain.csv"))
			if err != nil {
				t.Fatal(err)
			}
			head, _, _ := strings.Cut(string(x), "\n")
			if !strings.HasSuffix(head, ",mig_instance") || !strings.Contains(string(x), ",gpu0:") {
				t.Errorf("explain.csv names no MIG instance: header %q", head)
			}
		}
	}
	if string(sums[0]) != string(sums[1]) {
		t.Error("two runs of the MIG example differ")
	}
	if !strings.Contains(string(sums[0]), "stand-in: 329 GPU-share pods as A100-SXM4-80GB MIG instances") {
		t.Error("summary.json does not declare the shares-as-MIG stand-in")
	}
}

// Bad MIG input is refused before any run, naming the file, the line and
// the field (scenario), or the file, line, column and pod (pod list).
func TestMIGBadInputCLI(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "nodes.csv"), []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,524288,8,A100\n"), 0o644)
	head := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time,reference_gpu,workload,gang,gang_size,mig_profile\n"
	base := "name: m\nmode: replay\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies: [{name: FGD, scorers: [{policy: fgd, weight: 1}]}]\n"
	for name, tc := range map[string]struct{ pods, mig, want string }{
		"pod profile the model lacks": {head + "a,1000,1,1,0,A100,,,0,10,0,,,,,3g.20gb\n", "mig:\n  - nodes: [n0]\n    dynamic: true\n",
			`pods.csv:2: column mig_profile: pod "a": MIG profile "3g.20gb": none of the accepted GPU models (A100) has it`},
		"layout profile the model lacks": {head + "a,1000,1,1,0,A100,,,0,10,0,,,,,3g.40gb\n", "mig:\n  - nodes: [n0]\n    profile: 3g.20gb\n",
			`s.yaml: line 6: mig[0]: profile: node n0: MIG profile "3g.20gb": A100-SXM4-80GB has`},
		"layout breaking the rules": {head + "a,1000,1,1,0,A100,,,0,10,0,,,,,3g.40gb\n", "mig:\n  - nodes: [n0]\n    instances: [{profile: 4g.40gb, start: 4}]\n",
			"s.yaml: line 6: mig[0]: instances: node n0: MIG layout on A100-SXM4-80GB: invalid allocation: 4g.40gb may not start at memory slice 4"},
	} {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(filepath.Join(dir, "pods.csv"), []byte(tc.pods), 0o644)
			sc := filepath.Join(dir, "s.yaml")
			os.WriteFile(sc, []byte(base+tc.mig), 0o644)
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

// import k8s keeps MIG pods as profile requests and MIG nodes' layouts:
// the scenario it writes runs, and its MIG pods land in MIG instances.
func TestImportMIGRuns(t *testing.T) {
	dir := t.TempDir()
	imp := filepath.Join(dir, "imp")
	if code, _, stderr := run(t, "import", "k8s", "-f", "../../trace/k8sdump/testdata/mig.json", "-o", imp); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	out := filepath.Join(dir, "run")
	if code, _, stderr := run(t, "run", "-c", filepath.Join(imp, "scenario.yaml"), "-o", out, "--explain"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	x, err := os.ReadFile(filepath.Join(out, "explain.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Under each policy the three MIG pods get an instance (the Pending
	// 1g.10gb one on a100-mig's second GPU, the only 1g instances).
	if n := strings.Count(string(x), ",gpu1:1g.10gb@"); n != 4 {
		t.Errorf("%d placements of ml/infer-1g in a 1g.10gb instance, want 4 (one per policy):\n%s", n, x)
	}
	if n := strings.Count(string(x), ":3g.40gb@"); n != 8 {
		t.Errorf("%d placements in 3g.40gb instances, want 8 (two pods, four policies):\n%s", n, x)
	}
}
