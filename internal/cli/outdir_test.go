package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wattsched/wattsched/experiment/outdir"
)

// outdirInputs writes a tiny scenario, a kubectl dump and a one-shard
// directory under root/in, for commands that finish in milliseconds.
func outdirInputs(t *testing.T, root string) (scen, dump, shard string) {
	t.Helper()
	in := filepath.Join(root, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "nodes.csv"), []byte("sn,cpu_milli,memory_mib,gpu,model\nn0,32000,131072,2,T4\n"), 0o644)
	os.WriteFile(filepath.Join(in, "pods.csv"), []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n"), 0o644)
	os.WriteFile(filepath.Join(in, "replay.csv"), []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"+
		"p0,1000,1024,1,500,,LS,Running,0,3600,\np1,1000,1024,1,500,,LS,Running,300,4000,\n"), 0o644)
	os.WriteFile(filepath.Join(in, "r.yaml"), []byte("name: r\nmode: replay\nseeds: 1\ntrace: {nodes: nodes.csv, pods: replay.csv}\npolicies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n"), 0o644)
	scen = filepath.Join(in, "s.yaml")
	os.WriteFile(scen, []byte("name: s\nmode: inflation\ntrace: {nodes: nodes.csv, pods: pods.csv}\npolicies: [{name: PWR, scorers: [{policy: pwr, weight: 1}]}]\n"), 0o644)
	dump = filepath.Join(in, "c.json")
	os.WriteFile(dump, []byte(`{"kind": "List", "items": [`+
		`{"kind": "Node", "metadata": {"name": "gpu-0", "labels": {"nvidia.com/gpu.product": "Tesla-T4"}}, "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "4"}}},`+
		`{"kind": "Pod", "metadata": {"name": "p0", "namespace": "ml", "creationTimestamp": "2026-11-20T10:00:00Z"}, "spec": {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}}}]}, "status": {"phase": "Running"}}]}`), 0o644)
	shard = filepath.Join(in, "shard")
	if code, _, errs := run(t, "run", "-c", scen, "--shard", "0/1", "-o", shard); code != 0 {
		t.Fatalf("shard: %d %s", code, errs)
	}
	return scen, dump, shard
}

// Every command that writes -o (run, compare, reproduce, shards, merge,
// import k8s) accepts every spelling of the path: a
// trailing slash (what tab completion types), "/.", a doubled slash,
// "a/../DIR" and a symbolically linked parent; into a new directory, an
// empty one, and over an earlier result with --force. The results land in
// DIR, whole, and nothing is left beside it. (The issue: "-o DIR/" failed
// after the run and lost the results with --force.)
func TestOutputPathSpellings(t *testing.T) {
	root := t.TempDir()
	scen, dump, shard := outdirInputs(t, root)
	commands := []struct {
		name string
		args []string // -o DIR (and --force) go after these
		tail []string // and before these
		file string   // a file the results hold
	}{
		{"run", []string{"run", "-c", scen}, nil, "summary.json"},
		{"run --shard", []string{"run", "-c", scen, "--shard", "0/1"}, nil, "shard.json"},
		{"compare", []string{"compare", "-c", filepath.Join(root, "in", "r.yaml")}, nil, "runs.csv"},
		{"reproduce", []string{"reproduce", "eaco", "--jobs", "4", "--seeds", "1"}, nil, "runs.csv"},
		{"merge", []string{"merge"}, []string{shard}, "summary.json"},
		{"import k8s", []string{"import", "k8s", "-f", dump}, nil, "scenario.yaml"},
	}
	spellings := map[string]string{
		"trailing slash":   "real/DIR/",
		"trailing dot":     "real/DIR/.",
		"doubled slash":    "real/DIR//",
		"dot dot":          "real/a/../DIR",
		"symlinked parent": "link/DIR/",
	}
	for _, cmd := range commands {
		for _, sp := range slices.Sorted(func(yield func(string) bool) {
			for k := range spellings {
				if !yield(k) {
					return
				}
			}
		}) {
			for _, state := range []string{"new", "empty", "earlier result"} {
				t.Run(cmd.name+"/"+sp+"/"+state, func(t *testing.T) {
					d := t.TempDir()
					real := filepath.Join(d, "real")
					os.MkdirAll(filepath.Join(real, "a"), 0o755)
					os.Symlink(real, filepath.Join(d, "link"))
					dir := filepath.Join(real, "DIR")
					args := append(slices.Clone(cmd.args), "-o", d+"/"+spellings[sp])
					switch state {
					case "empty":
						os.Mkdir(dir, 0o755)
					case "earlier result":
						if code, _, errs := run(t, "import", "k8s", "-f", dump, "-o", dir); code != 0 {
							t.Fatal(errs)
						}
						args = append(args, "--force")
					}
					args = append(args, cmd.tail...)
					code, stdout, errs := run(t, args...)
					if code != 0 {
						t.Fatalf("%v: exit %d: %s", args, code, errs)
					}
					if !strings.Contains(stdout, "results in "+filepath.Clean(d+"/"+spellings[sp])) {
						t.Errorf("stdout names another directory:\n%s", stdout)
					}
					if _, err := os.Stat(filepath.Join(dir, cmd.file)); err != nil {
						t.Errorf("results not in DIR: %v", err)
					}
					m, err := os.ReadFile(filepath.Join(dir, outdir.ManifestFile))
					if err != nil || !strings.Contains(string(m), cmd.file+"\n") {
						t.Errorf("manifest %q %v", m, err)
					}
					if state == "earlier result" && cmd.file != "scenario.yaml" {
						if _, err := os.Stat(filepath.Join(dir, "scenario.yaml")); err == nil {
							t.Error("a file of the earlier result survived")
						}
					}
					ents, _ := os.ReadDir(real)
					if len(ents) != 2 || ents[0].Name() != "DIR" || ents[1].Name() != "a" {
						t.Errorf("beside DIR: %v", ents)
					}
				})
			}
		}
	}
}

// TestOutdirChild runs the command line in WATTSCHED_OUTDIR_CHILD (a JSON
// list) for TestConcurrentRunsOneWins.
func TestOutdirChild(t *testing.T) {
	spec := os.Getenv("WATTSCHED_OUTDIR_CHILD")
	if spec == "" {
		t.Skip("the child of TestConcurrentRunsOneWins")
	}
	var args []string
	if err := json.Unmarshal([]byte(spec), &args); err != nil {
		t.Fatal(err)
	}
	os.Exit(Run(context.Background(), args, io.Discard, os.Stderr))
}

// Three processes started together into one new -o: without --force
// exactly one exits 0 and the others exit 1 saying why (another run holds
// the directory, or has filled it); with --force the directory ends
// holding one complete result (the manifest lists exactly its files).
// Nothing is left beside the directory. (The issue: two runs both exited 0
// and printed "results in DIR", one result silently lost.)
func TestConcurrentRunsOneWins(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	root := t.TempDir()
	scen, dump, _ := outdirInputs(t, root)
	for _, force := range []bool{false, true} {
		for _, cmdline := range [][]string{{"run", "-c", scen}, {"import", "k8s", "-f", dump}} {
			t.Run(strings.Join(cmdline[:1], " ")+map[bool]string{false: "", true: " --force"}[force], func(t *testing.T) {
				parent := t.TempDir()
				dir := filepath.Join(parent, "out")
				const n = 3
				codes := make([]int, n)
				stderrs := make([]string, n)
				var wg sync.WaitGroup
				for i := range n {
					args := append(slices.Clone(cmdline), "-o", dir+"/")
					if force {
						args = append(args, "--force")
					}
					spec, _ := json.Marshal(args)
					cmd := exec.Command(os.Args[0], "-test.run", "^TestOutdirChild$")
					cmd.Env = append(os.Environ(), "WATTSCHED_OUTDIR_CHILD="+string(spec))
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						err := cmd.Wait()
						var ee *exec.ExitError
						if errors.As(err, &ee) {
							codes[i] = ee.ExitCode()
						} else if err != nil {
							codes[i] = -1
						}
						stderrs[i] = stderr.String()
					}()
				}
				wg.Wait()
				won := 0
				for i, c := range codes {
					t.Logf("run %d: exit %d %s", i, c, strings.TrimSpace(stderrs[i]))
					switch {
					case c == 0:
						won++
					case c != 1 || !(strings.Contains(stderrs[i], "being written by another wattsched run") || strings.Contains(stderrs[i], "is not empty")):
						t.Errorf("run %d: exit %d: %s", i, c, stderrs[i])
					}
				}
				if won == 0 || (!force && won != 1) {
					t.Errorf("%d runs exited 0: %v\n%v", won, codes, stderrs)
				}
				m, err := os.ReadFile(filepath.Join(dir, outdir.ManifestFile))
				if err != nil {
					t.Fatal(err)
				}
				var listed, present []string
				for _, l := range strings.Split(strings.TrimSpace(string(m)), "\n")[2:] {
					listed = append(listed, l)
				}
				filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
					if err == nil && !e.IsDir() && e.Name() != outdir.ManifestFile {
						rel, _ := filepath.Rel(dir, p)
						present = append(present, filepath.ToSlash(rel))
					}
					return err
				})
				slices.Sort(present)
				if !slices.Equal(listed, present) {
					t.Errorf("manifest lists %v, directory holds %v", listed, present)
				}
				if ents, _ := os.ReadDir(parent); len(ents) != 1 {
					t.Errorf("%d entries beside out", len(ents)-1)
				}
			})
		}
	}
}

// calibrate's -o and --save are files: without --force a file that
// appears between the check and the write is never replaced (the write
// says so and leaves nothing beside it); with --force it is replaced
// whole.
func TestWriteOutFileNeverReplacesWithoutForce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cat.yaml")
	if err := checkOutFile(path, false); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("theirs"), 0o644) // another program, meanwhile
	err := writeOutFile(path, []byte("ours"), false)
	if err == nil || !strings.Contains(err.Error(), "exists (use --force to replace it)") {
		t.Fatalf("write over a file that appeared: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "theirs" {
		t.Errorf("their file now holds %q", b)
	}
	if err := writeOutFile(path, []byte("ours"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "ours" {
		t.Errorf("with force: %q", b)
	}
	if err := writeOutFile(filepath.Join(dir, "new.yaml"), []byte("new"), false); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d entries, want cat.yaml and new.yaml", len(ents))
	}
}
