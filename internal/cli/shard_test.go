package cli

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/experiment/outdir"
)

// tree reads every file under dir by relative path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Three shards of a run, merged, give the bytes of the single run, for a
// scenario run (inflation, 2 policies x 3 seeds) and a comparison (with
// recorded measured power, whose counts cross the shard files).
func TestShardsMergeToTheSingleRun(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("name: shards\nmode: inflation\ntrace: {pods: gpushare40}\nseeds: 3\ntarget: 0.5\npolicies:\n"+
		"  - {name: FGD, scorers: [{policy: fgd, weight: 1}]}\n  - {name: BestFit, scorers: [{policy: bestfit, weight: 1}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"run", "-c", scen}, {"compare", "-c", "../../examples/replay-measured.yaml", "--seeds", "2"}} {
		t.Run(cmd[0], func(t *testing.T) {
			out := filepath.Join(dir, cmd[0])
			if code, _, errs := run(t, append(slices.Clone(cmd), "-o", filepath.Join(out, "single"))...); code != 0 {
				t.Fatalf("single run: exit %d: %s", code, errs)
			}
			var shards []string
			for i := 0; i < 3; i++ {
				d := filepath.Join(out, "shard"+string(rune('0'+i)))
				shards = append(shards, d)
				if code, stdout, errs := run(t, append(slices.Clone(cmd), "--shard", string(rune('0'+i))+"/3", "-o", d)...); code != 0 || !strings.Contains(stdout, "runs recorded") {
					t.Fatalf("shard %d: exit %d: %s %s", i, code, stdout, errs)
				}
			}
			if code, _, errs := run(t, append([]string{"merge", "-o", filepath.Join(out, "merged")}, shards...)...); code != 0 {
				t.Fatalf("merge: exit %d: %s", code, errs)
			}
			single, merged := tree(t, filepath.Join(out, "single")), tree(t, filepath.Join(out, "merged"))
			if len(single) == 0 || len(single) != len(merged) {
				t.Fatalf("single run has %d files, the merge %d", len(single), len(merged))
			}
			for f, b := range single {
				if merged[f] != b {
					t.Errorf("%s differs between the single run and the merge", f)
				}
			}
			// A missing shard, a shard given twice: errors, nothing written.
			for _, bad := range [][]string{shards[:2], {shards[0], shards[0], shards[1], shards[2]}} {
				bo := filepath.Join(out, "bad")
				if code, _, errs := run(t, append([]string{"merge", "-o", bo}, bad...)...); code != 1 || !strings.Contains(errs, "shard") {
					t.Errorf("merge %v: exit %d %q", bad, code, errs)
				}
				if _, err := os.Stat(bo); !os.IsNotExist(err) {
					t.Errorf("a failed merge left %s", bo)
				}
			}
		})
	}
}

func TestShardUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "--shard", "3/2", "-o", filepath.Join(dir, "a")},
		{"run", "--shard", "x", "-o", filepath.Join(dir, "a")},
		{"merge", "-o", filepath.Join(dir, "a")},
		{"run", "-c", "../../examples/coloc-eaco.yaml", "--shard", "0/2", "-o", filepath.Join(dir, "a")},
		{"reproduce", "eaco", "--quick", "--shard", "0/2", "-o", filepath.Join(dir, "a")},
	} {
		if code, _, errs := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errs)
		}
	}
	if code, _, errs := run(t, "merge", "-o", filepath.Join(dir, "a"), dir); code != 1 || !strings.Contains(errs, "not a shard directory") {
		t.Errorf("merge of a non-shard directory: exit %d %q", code, errs)
	}
}

func TestCommandArgs(t *testing.T) {
	got := commandArgs([]string{"reproduce", "vahrm", "-o", "x", "--quick", "--shard=1/4", "--force", "--seed", "7", "-o=y", "--shard", "2/4"})
	want := []string{"reproduce", "vahrm", "--quick", "--seed", "7"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// A scenario edited between the shards and the merge is refused, and so
// is a shard that saw fewer runs than the others (it stopped early).
func TestMergeRefusesChangedInputs(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	body := "name: shards\nmode: inflation\ntrace: {pods: gpushare40}\nseeds: 2\ntarget: 0.3\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1}]}\n"
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var shards []string
	for i := 0; i < 2; i++ {
		d := filepath.Join(dir, "shard"+string(rune('0'+i)))
		shards = append(shards, d)
		if code, _, errs := run(t, "run", "-c", scen, "--shard", string(rune('0'+i))+"/2", "-o", d); code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, errs)
		}
	}
	if err := os.WriteFile(scen, []byte(body+"# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, append([]string{"merge", "-o", filepath.Join(dir, "m1")}, shards...)...); code != 1 || !strings.Contains(errs, "changed since the shards ran") {
		t.Errorf("edited scenario: exit %d %q", code, errs)
	}
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(shards[1], "shard.json")
	b, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m, []byte(strings.Replace(string(b), `"total_runs": 2`, `"total_runs": 1`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, append([]string{"merge", "-o", filepath.Join(dir, "m2")}, shards...)...); code != 1 || !strings.Contains(errs, "stopped early") {
		t.Errorf("short shard: exit %d %q", code, errs)
	}
	if code, _, errs := run(t, append([]string{"merge", "-o", filepath.Join(dir, "m3")}, shards[0], shards[0])...); code != 1 || !strings.Contains(errs, "both shard 0") {
		t.Errorf("same shard twice: exit %d %q", code, errs)
	}
}

// A file the scenario (or a flag) names, changed between shard 0 and
// shard 1, is refused by the merge, which names the file and both shards;
// changed after both shards, it is refused as changed since the shards
// ran; put back, the merge gives the single run's bytes. Nothing is
// written by a refused merge.
func TestMergeRefusesShardsOfChangedReferencedFiles(t *testing.T) {
	files := map[string]string{
		"nodes.csv": "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,4,T4\nn1,64000,262144,8,V100M32\nn2,32000,131072,2,T4LOW\n",
		"pods.csv":  "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,4000,8192,1,500\np1,8000,16384,1,1000\np2,2000,4096,1,250\np3,16000,32768,2,1000\n",
		"hw.yaml":   "gpus:\n  - {name: T4LOW, idle_w: 8, tdp_w: 60, memory_gib: 16, source: a test model}\n",
		"s.yaml": "name: refs\nmode: inflation\ntrace: {nodes: nodes.csv, pods: pods.csv}\ncatalog: hw.yaml\nseeds: 2\ntarget: 0.8\n" +
			"policies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1}]}\n  - {name: BestFit, scorers: [{policy: bestfit, weight: 1}]}\n",
		"flag.yaml": "gpus:\n  - {name: T4LOW2, idle_w: 9, tdp_w: 61, memory_gib: 16, source: a test model}\n",
		"site.swf":  hpcLog(60),
	}
	for _, c := range []struct {
		name, field, file string
		cmd               []string // "{D}" is the scratch directory
		edit              func(string) string
		roundTrip         bool // also check the unchanged merge's bytes
	}{
		{"trace.pods", "trace.pods", "pods.csv", []string{"run", "-c", "{D}/s.yaml"},
			func(s string) string { return strings.Replace(s, "p2,2000,4096,1,250", "p2,2000,4096,1,300", 1) }, true},
		{"trace.nodes", "trace.nodes", "nodes.csv", []string{"run", "-c", "{D}/s.yaml"},
			func(s string) string { return strings.Replace(s, "n1,64000", "n1,48000", 1) }, false},
		{"catalog", "catalog", "hw.yaml", []string{"run", "-c", "{D}/s.yaml"},
			func(s string) string { return strings.Replace(s, "tdp_w: 60", "tdp_w: 65", 1) }, false},
		{"--catalog", "--catalog", "flag.yaml", []string{"run", "-c", "{D}/s.yaml", "--catalog", "{D}/flag.yaml"},
			func(s string) string { return s + "# edited\n" }, false},
		{"reproduce vahrm --swf", "--swf", "site.swf", []string{"reproduce", "vahrm", "--quick", "--swf", "{D}/site.swf", "--procs-per-node", "4", "--jobs", "60"},
			func(s string) string { return s + "; edited\n" }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := t.TempDir()
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := make([]string, len(c.cmd))
			for i, a := range c.cmd {
				cmd[i] = strings.ReplaceAll(a, "{D}", d)
			}
			file := filepath.Join(d, c.file)
			setFile := func(body string) {
				t.Helper()
				if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			shard := func(i int, out string) {
				t.Helper()
				if code, _, errs := run(t, append(slices.Clone(cmd), "--shard", fmt.Sprintf("%d/2", i), "-o", filepath.Join(d, out))...); code != 0 {
					t.Fatalf("shard %d: exit %d: %s", i, code, errs)
				}
			}
			merge := func(want string, shards ...string) {
				t.Helper()
				out := filepath.Join(d, "merged")
				args := []string{"merge", "-o", out}
				for _, s := range shards {
					args = append(args, filepath.Join(d, s))
				}
				code, _, errs := run(t, args...)
				if want == "" {
					if code != 0 {
						t.Fatalf("merge: exit %d: %s", code, errs)
					}
					return
				}
				if code != 1 || !strings.Contains(errs, want) {
					t.Errorf("merge: exit %d %q, want 1 and %q", code, errs, want)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a refused merge left %s", out)
				}
			}
			orig := files[c.file]
			named := c.field + " file " + file
			// Changed between the shards.
			shard(0, "a0")
			setFile(c.edit(orig))
			shard(1, "a1")
			merge(named+" differs between shard 0 ("+filepath.Join(d, "a0")+", sha256 ", "a0", "a1")
			merge(named+" differs between shard 1 ("+filepath.Join(d, "a1")+", sha256 ", "a1", "a0")
			// Changed after both shards ran.
			setFile(orig)
			shard(1, "b1")
			setFile(c.edit(orig))
			merge(named+" changed since the shards ran", "a0", "b1")
			if !c.roundTrip {
				return
			}
			setFile(orig)
			merge("", "a0", "b1")
			if code, _, errs := run(t, append(slices.Clone(cmd), "-o", filepath.Join(d, "single"))...); code != 0 {
				t.Fatalf("single run: exit %d: %s", code, errs)
			}
			single, merged := tree(t, filepath.Join(d, "single")), tree(t, filepath.Join(d, "merged"))
			if len(single) == 0 || len(single) != len(merged) {
				t.Fatalf("single run has %d files, the merge %d", len(single), len(merged))
			}
			for f, b := range single {
				if merged[f] != b {
					t.Errorf("%s differs between the single run and the merge", f)
				}
			}
		})
	}
}

// hpcLog is an SWF log of n jobs: every 60 s a job of 30..1000 s on 8..64
// processors.
func hpcLog(n int) string {
	var b strings.Builder
	b.WriteString("; Version: 2.2\n; MaxNodes: 64\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d %d -1 %d %d -1 -1 %d -1 -1 1 1 1 -1 -1 -1 -1 -1\n", i+1, 60*i, 30+(i*37)%970, 8+(i*13)%57, 8+(i*13)%57)
	}
	return b.String()
}

// Every string flag of every study either names a file that the study's
// Inputs lists (so that shards hash it) or is known to name none: a file
// flag added to a study fails here until Inputs lists it.
func TestStudyInputsListEveryFileFlag(t *testing.T) {
	notFiles := map[string][]string{
		"pwr":       {"trace", "compat"}, // embedded pod list names; a compat mode
		"powerflow": {"start"},           // a date
	}
	for _, st := range studies() {
		t.Run(st.Name(), func(t *testing.T) {
			fs := flag.NewFlagSet(st.Name(), flag.ContinueOnError)
			st.Flags(fs)
			var strs []string
			fs.VisitAll(func(f *flag.Flag) {
				if g, ok := f.Value.(flag.Getter); ok {
					if _, isString := g.Get().(string); isString {
						strs = append(strs, f.Name)
					}
				}
			})
			for _, name := range strs {
				if err := fs.Set(name, "files/"+name); err != nil {
					t.Fatal(err)
				}
			}
			listed := map[string]bool{}
			for _, in := range st.Inputs() {
				name := strings.TrimPrefix(in.Field, "--")
				listed[name] = true
				if in.Name != "files/"+name || in.Path != in.Name {
					t.Errorf("--%s: Inputs gives %+v, want the flag's value as name and path", name, in)
				}
				if !slices.Contains(strs, name) {
					t.Errorf("Inputs lists %s, which is no string flag", in.Field)
				}
			}
			for _, name := range strs {
				known := slices.Contains(notFiles[st.Name()], name)
				switch {
				case listed[name] && known:
					t.Errorf("--%s: listed by Inputs and as naming no file", name)
				case !listed[name] && !known:
					t.Errorf("--%s: a string flag that Inputs does not list: if it names a file, list it in the study's Inputs; if not, add it to notFiles here", name)
				}
			}
			// Unset, a flag names nothing.
			fresh := studies()[slices.IndexFunc(studies(), func(x experiment.Study) bool { return x.Name() == st.Name() })]
			fresh.Flags(flag.NewFlagSet(st.Name(), flag.ContinueOnError))
			if in := fresh.Inputs(); len(in) != 0 {
				t.Errorf("with no flags set, Inputs gives %+v", in)
			}
		})
	}
}

// commandInputs of each kind of command line: embedded names recorded as
// names, files with their SHA-256, what cannot be hashed an error.
func TestCommandInputs(t *testing.T) {
	d := t.TempDir()
	scen := filepath.Join(d, "s.yaml")
	body := "name: x\nmode: replay\ntrace: {pods: p.csv}\ngrid: {region: US-CAL-CISO}\npolicies:\n  - {name: FGD, scorers: [{policy: fgd, weight: 1}]}\n"
	if err := os.WriteFile(scen, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np0,1000,1024,1,500,,LS,Running,0,10,0\n"
	if err := os.WriteFile(filepath.Join(d, "p.csv"), []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(d, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := func(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }
	for _, c := range []struct {
		name string
		cmd  []string
		want []shardInput
		err  string
	}{
		{"embedded scenario", []string{"run"}, []shardInput{
			{Field: "-c", Embedded: "pwr-default"}, {Field: "trace.pods", Embedded: "default"}, {Field: "trace.nodes", Embedded: "openb-gpu"}}, ""},
		{"scenario file", []string{"compare", "-c", scen, "--seeds", "2"}, []shardInput{
			{Field: "-c", File: scen, SHA256: sum(body)}, {Field: "trace.pods", File: filepath.Join(d, "p.csv"), SHA256: sum(pods)},
			{Field: "trace.nodes", Embedded: "openb-gpu"}, {Field: "grid.region", Embedded: "US-CAL-CISO"}}, ""},
		{"catalog flag", []string{"run", "--catalog=" + scen}, []shardInput{
			{Field: "-c", Embedded: "pwr-default"}, {Field: "trace.pods", Embedded: "default"}, {Field: "trace.nodes", Embedded: "openb-gpu"},
			{Field: "--catalog", File: scen, SHA256: sum(body)}}, ""},
		{"study flag", []string{"reproduce", "powerflow", "--quick", "--philly", scen}, []shardInput{{Field: "--philly", File: scen, SHA256: sum(body)}}, ""},
		{"study without files", []string{"reproduce", "pwr", "--trace", "default"}, []shardInput{}, ""},
		{"missing file", []string{"reproduce", "vahrm", "--swf", filepath.Join(d, "none.swf")}, nil, "--swf: open " + filepath.Join(d, "none.swf")},
		{"directory", []string{"reproduce", "vahrm", "--swf", filepath.Join(d, "dir")}, nil, "--swf: " + filepath.Join(d, "dir") + " is a directory, want a regular file"},
		{"device", []string{"reproduce", "vahrm", "--swf", os.DevNull}, nil, "--swf: " + os.DevNull + " is a character device, want a regular file"},
		{"unknown study", []string{"reproduce", "nope"}, nil, "names no study"},
		{"empty", nil, nil, "an empty command"},
		{"other command", []string{"bench"}, nil, "has no shards"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := commandInputs(c.cmd)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.want) || (len(got) > 0 && !slices.Equal(got, c.want)) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// A file changed while a shard ran (between the hashes before and after
// its runs) fails the shard, which writes nothing.
func TestShardRefusesAnInputChangedDuringItsRuns(t *testing.T) {
	d := t.TempDir()
	swf := filepath.Join(d, "site.swf")
	if err := os.WriteFile(swf, []byte(hpcLog(3)), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := experiment.NewShard(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"reproduce", "vahrm", "--swf", swf, "--shard", "0/2", "-o", filepath.Join(d, "out")}
	res, inputs, err := sharded(sh, args, func() ([]*experiment.Results, error) {
		return nil, os.WriteFile(swf, []byte(hpcLog(4)), 0o644)
	})
	if err != nil || res != nil || len(inputs) != 1 || inputs[0].SHA256 != fmt.Sprintf("%x", sha256.Sum256([]byte(hpcLog(3)))) {
		t.Fatalf("sharded: %v %v %+v", res, err, inputs)
	}
	var stdout strings.Builder
	claim, err := outdir.ClaimDir(filepath.Join(d, "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	err = emitShard(&stdout, claim, sh, args, inputs, nil)
	claim.Release()
	if err == nil || !strings.Contains(err.Error(), "--swf file "+swf+" changed while the shard ran") {
		t.Errorf("emitShard: %v, want the file changed while the shard ran", err)
	}
	if _, err := os.Stat(filepath.Join(d, "out")); !os.IsNotExist(err) {
		t.Errorf("the failed shard left its output directory")
	}
}
