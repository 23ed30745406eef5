package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
