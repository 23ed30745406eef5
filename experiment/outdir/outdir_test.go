package outdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wattsched/wattsched/experiment"
)

func res(files map[string][]byte) []*experiment.Results {
	return []*experiment.Results{{Title: "t", Files: files}}
}

// --force replaces only an earlier wattsched result: never a symbolic
// link, the filesystem root, the working directory or its parents, the
// home directory, or a directory without the manifest; without --force a
// non-empty directory is refused.
func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "src")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "main.go"), []byte("package main"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(other, link)
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	for _, c := range []struct {
		dir, want string
	}{
		{other, "not a wattsched result"},
		{link, "symbolic link"},
		{"/", "filesystem root"},
		{".", "working directory"},
		{filepath.Dir(wd), "working directory or one of its parents"},
		{home, ""},
	} {
		err := CheckDir(c.dir, true)
		if c.want == "" {
			if err == nil || !(strings.Contains(err.Error(), "home directory") || strings.Contains(err.Error(), "working directory") || strings.Contains(err.Error(), "not a wattsched result")) {
				t.Errorf("%s: %v", c.dir, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckDir(%s, force): %v, want %q", c.dir, err, c.want)
		}
	}
	if err := CheckDir(other, false); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty without force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(other, "main.go")); err != nil {
		t.Fatal("CheckDir touched the directory:", err)
	}
}

// Publish writes a complete directory with its manifest; a second publish
// with force replaces it whole; a publish that fails half-way leaves the
// earlier results as they were and no temporary directory behind.
func TestPublishIsAtomic(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if err := Publish(out, false, "v1", res(map[string][]byte{"a.csv": []byte("1")})); err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(out, ManifestFile))
	if err != nil || !strings.Contains(string(m), "version v1\na.csv\nreport.html\n") {
		t.Fatalf("manifest %q, %v", m, err)
	}
	if err := Publish(out, false, "v1", res(map[string][]byte{"b.csv": []byte("2")})); err == nil {
		t.Fatal("replaced without force")
	}
	if err := Publish(out, true, "v2", res(map[string][]byte{"b.csv": []byte("2")})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "a.csv")); err == nil {
		t.Error("old file a.csv survived the replacement")
	}
	// A file in a directory that does not exist fails the write.
	err = Publish(out, true, "v3", res(map[string][]byte{"c.csv": []byte("3"), "no/such/dir.csv": []byte("x")}))
	if err == nil {
		t.Fatal("failing write reported success")
	}
	if b, err := os.ReadFile(filepath.Join(out, "b.csv")); err != nil || string(b) != "2" {
		t.Errorf("earlier results lost after a failed run: %q %v", b, err)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left behind: %v", names)
	}
	Abandon() // nothing pending: a no-op
}
