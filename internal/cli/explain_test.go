package cli

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// explainFiles is a two-node cluster for --explain: n1 holds one V100M32
// (idle 30 W, TDP 300 W), n2 two T4s (idle 10 W, TDP 70 W), both 64 vCPU;
// one pod of one whole GPU and 1 vCPU, and two policies of PWR and BestFit
// with opposite weights.
func explainFiles(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	files := map[string]string{
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn1,64000,262144,1,V100M32\nn2,64000,262144,2,T4\n",
		"pods.csv":  podsHead + "p1,1000,1024,1,1000,,LS,Running,0,3600,0\n",
		"s.yaml": "name: why\nmode: replay\ntrace:\n  nodes: nodes.csv\n  pods: pods.csv\npolicies:\n" +
			"  - name: power\n    scorers: [{policy: pwr, weight: 3}, {policy: bestfit, weight: 1}]\n" +
			"  - name: packing\n    scorers: [{policy: pwr, weight: 1}, {policy: bestfit, weight: 3}]\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func TestExplainShowsTheArithmetic(t *testing.T) {
	d := explainFiles(t)
	out := filepath.Join(d, "out")
	if code, _, stderr := run(t, "run", "-c", filepath.Join(d, "s.yaml"), "-o", out, "--explain"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := readCSV(t, filepath.Join(out, "explain.csv"))
	// PWR's raw score is minus the power the pod adds: the V100 goes from
	// 30 W to 300 W (+270), a T4 from 10 W to 70 W (+60), and the CPU adds
	// the same on both nodes, so n1's raw is 210 below n2's. Normalised
	// (min-max over the two nodes): n2 100, n1 0.
	// BestFit's raw is 100 x (1 - (0.5 x free vCPU after / 128 + 0.5 x free
	// GPUs after / 8)): n1 100 x (1 - (0.5 x 63/128 + 0)) = 75.39 -> 75;
	// n2 100 x (1 - (0.5 x 63/128 + 0.5 x 1/8)) = 69.14 -> 69. Normalised:
	// n1 100, n2 0.
	// Policy power (pwr x3, bestfit x1): n1 3x0 + 1x100 = 100, n2 3x100 +
	// 1x0 = 300: n2 (the T4) wins. Policy packing (pwr x1, bestfit x3): n1
	// 0 + 300 = 300, n2 100 + 0 = 100: n1 (the V100) wins.
	type node struct {
		policy, rank, node, model, total, pwrScore, pwrWeighted, bfRaw, bfScore, bfWeighted, feasible string
	}
	want := []node{
		{"power", "1", "n2", "T4", "300", "100", "300", "69", "0", "0", "2"},
		{"power", "2", "n1", "V100M32", "100", "0", "0", "75", "100", "100", ""},
		{"packing", "1", "n1", "V100M32", "300", "0", "0", "75", "100", "300", "2"},
		{"packing", "2", "n2", "T4", "100", "100", "100", "69", "0", "0", ""},
	}
	var got []node
	raw := map[string]map[string]int{}
	for _, r := range rows {
		if r["task"] != "0" || r["name"] != "p1" || r["time_s"] != "0.000" || r["filtered_out"] != "" {
			t.Errorf("row %v: want task 0 (p1) at 0.000 s with no node filtered out", r)
		}
		got = append(got, node{r["policy"], r["rank"], r["node"], r["gpu_model"], r["total"], r["pwr_score"], r["pwr_weighted"],
			r["bestfit_raw"], r["bestfit_score"], r["bestfit_weighted"], r["feasible_nodes"]})
		v, err := strconv.Atoi(r["pwr_raw"])
		if err != nil {
			t.Fatalf("pwr_raw %q: %v", r["pwr_raw"], err)
		}
		if raw[r["policy"]] == nil {
			raw[r["policy"]] = map[string]int{}
		}
		raw[r["policy"]][r["node"]] = v
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(node{})); diff != "" {
		t.Errorf("explain.csv (-want +got):\n%s", diff)
	}
	for p, r := range raw {
		if r["n1"]-r["n2"] != -210 {
			t.Errorf("%s: pwr_raw n1 %d, n2 %d: want n1 210 W below n2", p, r["n1"], r["n2"])
		}
	}
}

// readResults reads every file of a results directory.
func readResults(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// --explain twice gives byte-identical files, and every file but
// explain.csv is the one a run without --explain writes.
func TestExplainIsDeterministicAndChangesNothingElse(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"run replay", []string{"run", "-c", "{D}/many.yaml"}},
		{"compare", []string{"compare", "-c", "{D}/many.yaml", "--seeds", "3"}},
		{"run inflation", []string{"run", "-c", "{D}/inf.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := explainFiles(t)
			// Twelve nodes of three shapes and 300 pods of varied shares,
			// arriving faster than they leave: ties, queueing and filters.
			nodes := "sn,cpu_milli,memory_mib,gpu,model\n"
			for i := range 12 {
				nodes += [3]string{"n%d,64000,262144,4,V100M32\n", "n%d,32000,131072,2,T4\n", "n%d,16000,65536,0,\n"}[i%3]
				nodes = strings.Replace(nodes, "%d", strconv.Itoa(i), 1)
			}
			pods := podsHead
			for i := range 300 {
				gpus, milli := [4]int{1, 1, 2, 0}[i%4], [5]int{250, 500, 1000, 1000, 750}[i%5]
				switch gpus {
				case 0:
					milli = 0
				case 2:
					milli = 1000
				}
				pods += "p" + strconv.Itoa(i) + "," + strconv.Itoa(1000+i%7*1000) + ",1024," + strconv.Itoa(gpus) + "," + strconv.Itoa(milli) +
					",,LS,Running," + strconv.Itoa(i*60) + "," + strconv.Itoa(i*60+600+i%11*300) + "," + strconv.Itoa(i*60) + "\n"
			}
			policies := "policies:\n  - name: power\n    scorers: [{policy: pwr, weight: 3}, {policy: bestfit, weight: 1}]\n" +
				"  - name: FGD\n    scorers: [{policy: fgd, weight: 1}]\n"
			for name, body := range map[string]string{
				"many-nodes.csv": nodes, "many-pods.csv": pods,
				"many.yaml": "name: many\nmode: replay\ntrace:\n  nodes: many-nodes.csv\n  pods: many-pods.csv\n" + policies,
				"inf.yaml":  "name: inf\nmode: inflation\ntrace:\n  nodes: many-nodes.csv\n  pods: many-pods.csv\nseeds: 2\ntarget: 0.9\n" + policies,
			} {
				if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var args []string
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "{D}", d))
			}
			results := map[string]map[string][]byte{}
			stdouts := map[string]string{}
			for _, v := range []string{"off", "on", "on again"} {
				out := filepath.Join(d, strings.ReplaceAll(v, " ", "-"))
				a := append(slices.Clone(args), "-o", out)
				if v != "off" {
					a = append(a, "--explain")
				}
				code, stdout, stderr := run(t, a...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", a, code, stderr)
				}
				results[v] = readResults(t, out)
				stdouts[v] = strings.ReplaceAll(stdout, out, "OUT")
			}
			if _, ok := results["off"]["explain.csv"]; ok {
				t.Errorf("explain.csv written without --explain")
			}
			x := results["on"]["explain.csv"]
			if bytes.Count(x, []byte("\n")) < 2 {
				t.Fatalf("explain.csv holds no decision:\n%s", x)
			}
			if diff := cmp.Diff(results["on"], results["on again"]); diff != "" {
				t.Errorf("two --explain runs differ (-first +second):\n%s", diff)
			}
			if stdouts["on"] != stdouts["on again"] {
				t.Errorf("two --explain runs print differently:\n%s\n---\n%s", stdouts["on"], stdouts["on again"])
			}
			delete(results["on"], "explain.csv")
			m := ".wattsched-results" // the manifest lists the files
			results["on"][m] = bytes.Replace(results["on"][m], []byte("explain.csv\n"), nil, 1)
			if diff := cmp.Diff(results["off"], results["on"]); diff != "" {
				t.Errorf("--explain changed other files (-off +on):\n%s", diff)
			}
		})
	}
}

// The worked example of docs/explain.md: why PWR puts openb-pod-0000 of
// examples/byo-replay.yaml on an L40S. The pod (12 vCPU, one whole GPU)
// adds one Xeon socket (15 -> 120 W: +105 W) and a GPU: an L40S under the
// example's curve 35.6 -> 350 W (+314.4 W; -419.4, truncated -419), an
// H100 71.8 -> 700 W (+628.2 W; -733.2 -> -733). Min-max: every L40S 100,
// every H100 0, so the best H100 ranks 97, behind the 96 L40S nodes.
func TestExplainDocExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "byo")
	if code, _, stderr := run(t, "run", "-c", "../../examples/byo-replay.yaml", "-o", out, "--explain"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type row struct{ rank, node, pwrRaw, pwrScore, total, feasible, filtered string }
	var got []row
	for _, r := range readCSV(t, filepath.Join(out, "explain.csv")) {
		if r["policy"] == "PWR" && r["name"] == "openb-pod-0000" && (r["rank"] == "1" || r["rank"] == "97") {
			got = append(got, row{r["rank"], r["node"], r["pwr_raw"], r["pwr_score"], r["total"], r["feasible_nodes"], r["filtered_out"]})
		}
	}
	want := []row{
		// weight 1000 x 100; ties by first_seed 42's order of the nodes
		// by name (cluster.TieRank): l40s-057 first, h100-007 the first H100
		{"1", "l40s-057", "-419", "100", "100000", "160", "no GPUs: 40"},
		{"97", "h100-007", "-733", "0", "0", "", ""},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("docs/explain.md's example (-want +got):\n%s", diff)
	}
}

// compare's explain.csv names each row's setting: the pod of explainFiles
// is placed once per policy, setting and seed, so every (policy, variant,
// seed, task) has exactly one rank-1 row, and the automatic power-down
// setting (run with the reference policy, "power") has rows of its own
// beside the scenario's as configured.
func TestCompareExplainNamesTheVariant(t *testing.T) {
	d := explainFiles(t)
	out := filepath.Join(d, "out")
	if code, _, stderr := run(t, "compare", "-c", filepath.Join(d, "s.yaml"), "-o", out, "--seeds", "2", "--explain"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := readCSV(t, filepath.Join(out, "explain.csv"))
	first := map[string]int{}
	variants := map[string]bool{}
	for _, r := range rows {
		v, ok := r["variant"]
		if !ok || v == "" {
			t.Fatalf("row %v: no variant", r)
		}
		variants[v] = true
		if r["rank"] == "1" {
			first[r["policy"]+"|"+v+"|"+r["seed"]+"|"+r["task"]]++
		}
	}
	if len(variants) < 2 || !variants["as configured"] {
		t.Errorf("variants %v: want as configured and the automatic power-down", variants)
	}
	// 2 policies as configured and the reference under power-down, 2 seeds.
	if len(first) != 6 {
		t.Errorf("%d distinct (policy, variant, seed, task) placements, want 6: %v", len(first), first)
	}
	for k, n := range first {
		if n != 1 {
			t.Errorf("%s: %d rank-1 rows, want 1", k, n)
		}
	}
}
