package outdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A single output file follows the rules of -o: an existing file only
// with force, never a symbolic link (nor its target), a directory, a path
// naming a directory, or a file inside a result or a run's temporary
// directory; written whole through a temporary file that is gone after.
func TestFileRules(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.log")
	os.WriteFile(old, []byte("old"), 0o644)
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("target"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	result := filepath.Join(dir, "result")
	if err := Publish(result, false, "v", res(map[string][]byte{"summary.json": []byte("{}")})); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	for _, c := range []struct {
		name, path string
		force      bool
		want       string
	}{
		{"existing file", old, false, "exists (use --force to replace it)"},
		{"symbolic link", link, true, "is a symbolic link"},
		{"directory", dir, true, "is a directory"},
		{"trailing slash", dir + "/new/", true, "ends in a slash"},
		{"dot", dir + "/.", true, "names a directory"},
		{"a result's file", filepath.Join(result, "summary.json"), true, "inside the wattsched result " + result},
		{"a new file in a result", filepath.Join(result, "extra.log"), false, "inside the wattsched result"},
		{"a result's subdirectory", filepath.Join(result, "sub", "x.log"), false, "inside the wattsched result"},
		{"the manifest", filepath.Join(result, ManifestFile), true, "inside the wattsched result"},
		{"a FIFO", fifo, true, "not a regular file"},
		{"missing directory", filepath.Join(dir, "no", "x.log"), false, "cannot write in"},
	} {
		if err := WriteFile(c.path, []byte("new"), c.force); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "target" {
		t.Errorf("the link's target changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(result, "summary.json")); string(b) != "{}" {
		t.Errorf("the result's file changed: %q", b)
	}
	if err := WriteFile(old, []byte("new"), true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "new" {
		t.Errorf("with force: %q", b)
	}
	fresh := filepath.Join(dir, "fresh.log")
	if err := WriteFile(fresh, []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// A file that appears while the output is written is never replaced
// without force; Discard and Abandon leave nothing behind.
func TestFileClaimCommitAndAbandon(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "solver.log")
	c, err := CreateFile(p, false)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("log"))
	os.WriteFile(p, []byte("theirs"), 0o644)
	if err := c.Commit(); err == nil || !strings.Contains(err.Error(), "created by another program") {
		t.Errorf("commit over a new file: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "theirs" {
		t.Errorf("the other program's file changed: %q", b)
	}
	q := filepath.Join(dir, "two.log")
	c2, err := CreateFile(q, false)
	if err != nil {
		t.Fatal(err)
	}
	c2.Write([]byte("partial"))
	Abandon()
	if _, err := c2.Write([]byte("more")); err == nil {
		t.Error("write after Abandon succeeded")
	}
	if err := c2.Commit(); err == nil {
		t.Error("commit after Abandon succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("entries %v, want solver.log only", ents)
	}
}

// The window of issue 40: a terminating signal while Publish writes.
// Abandon used to remove the temporary directory while Publish went on
// writing into it, which could leave it holding the final manifest and
// none of the files while the process said no partial results were
// written. Now Abandon waits for Publish to stop, and nothing is left.
func TestAbandonWhilePublishing(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	c, err := ClaimDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var abandoned []string
	done := make(chan struct{})
	afterWrite = func() {
		once.Do(func() {
			go func() { abandoned = Abandon(); close(done) }()
			// Give Abandon the time to remove the directory if it does
			// not wait (it must), while Publish goes on.
			for range 50 {
				if c.stopped() {
					break
				}
				sleepMS(2)
			}
			sleepMS(20)
		})
	}
	defer func() { afterWrite = nil }()
	results := append(res(map[string][]byte{"a.csv": []byte("1")}), res(map[string][]byte{"b.csv": []byte("2")})...)
	err = c.Publish("v", results)
	<-done
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("Publish: %v, want interrupted", err)
	}
	if slices.Contains(abandoned, out) {
		t.Errorf("Abandon says %s was published", out)
	}
	ents, _ := os.ReadDir(parent)
	for _, e := range ents {
		t.Errorf("left beside the results: %s", e.Name())
	}
}

func sleepMS(n int) { time.Sleep(time.Duration(n) * time.Millisecond) }

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
}
