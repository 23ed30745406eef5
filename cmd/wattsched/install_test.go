package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// modulePath is the path users install from:
// go install github.com/wattsched/wattsched/cmd/wattsched@latest.
const modulePath = "github.com/wattsched/wattsched"

// TestGoInstallLatest checks that `go install modulePath/cmd/wattsched@latest`
// works from an empty GOPATH and module cache, as it will for a user once
// the repository is published with a release tag.
//
// The committed files of this checkout (with their current contents) become
// a fresh git repository tagged v1.2.3, and git's url.<base>.insteadOf points
// https://github.com/wattsched/wattsched at it, so that the go command
// fetches the module exactly as it fetches it from GitHub (GOPRIVATE: no
// proxy, no checksum database for this module only): it lists the tags,
// picks @latest, builds the module zip with its own rules (nested modules
// such as k8s/ left out) and builds with the module's own go.mod and go.sum.
// The dependencies come from the module cache already on this machine,
// served as a file:// proxy, falling back to the configured proxy. The
// installed binary must then report the tag as its module version and run
// the main job.
//
// What this cannot check is the publication itself: the repository must
// exist at that path with a semver tag (README.md).
func TestGoInstallLatest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole module in a fresh GOPATH (about a minute); run without -short")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to stand in for the published repository: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	goEnv := func(key string) string { return strings.TrimSpace(run(t, ".", nil, goBin, "env", key)) }
	root := filepath.Dir(goEnv("GOMOD"))
	modCache, buildCache, upstream := goEnv("GOMODCACHE"), goEnv("GOCACHE"), goEnv("GOPROXY")

	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	copyTracked(t, git, root, repo)
	gitEnv := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(tmp, "gitconfig"),
		"GIT_AUTHOR_NAME=wattsched test", "GIT_AUTHOR_EMAIL=test@invalid",
		"GIT_COMMITTER_NAME=wattsched test", "GIT_COMMITTER_EMAIL=test@invalid",
	}
	config := "[url \"file://" + filepath.ToSlash(repo) + "\"]\n\tinsteadOf = https://" + modulePath + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "gitconfig"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, repo, gitEnv, git, "init", "-q")
	run(t, repo, gitEnv, git, "add", "-A")
	run(t, repo, gitEnv, git, "commit", "-q", "-m", "release")
	run(t, repo, gitEnv, git, "tag", "v1.2.3")

	gopath := filepath.Join(tmp, "gopath")
	bin := filepath.Join(tmp, "bin")
	work := filepath.Join(tmp, "work") // outside any module, as a user's shell
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	goenv := append(gitEnv,
		"GOENV=off", "GOTOOLCHAIN=local", "GOWORK=off",
		"GOFLAGS=-modcacherw", // plain go install: no highs tag; -modcacherw lets TempDir clean up
		"GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOBIN="+bin,
		"GOCACHE="+buildCache,
		"GOPRIVATE="+modulePath,
		"GOPROXY=file://"+filepath.ToSlash(filepath.Join(modCache, "cache", "download"))+","+upstream,
	)
	run(t, work, goenv, goBin, "install", modulePath+"/cmd/wattsched@latest")

	wattsched := filepath.Join(bin, "wattsched")
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out := run(t, work, nil, wattsched, args...)
		if !strings.Contains(out, "module v1.2.3") {
			t.Errorf("wattsched %s = %q, want the tag v1.2.3 as its module version", args[0], out)
		}
	}
	out := filepath.Join(tmp, "demo")
	run(t, work, nil, wattsched, "run", "-o", out)
	var summary map[string]any
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatalf("the installed binary's main job wrote no summary: %v", err)
	}
	if err := json.Unmarshal(data, &summary); err != nil || len(summary) == 0 {
		t.Errorf("summary.json of the installed binary: %v (%d keys)", err, len(summary))
	}
}

// copyTracked copies the files git tracks in root, as they are now, into
// dst. Outside a git work tree (a source archive) it copies every file but
// those .gitignore names (build/, bin/, out/, test binaries, profiles).
func copyTracked(t *testing.T, git, root, dst string) {
	t.Helper()
	var names []string
	cmd := exec.Command(git, "ls-files", "-z")
	cmd.Dir = root
	if list, err := cmd.Output(); err == nil {
		names = strings.Split(string(list), "\x00")
	} else {
		names = untracked(t, root)
	}
	n := 0
	for _, name := range names {
		if name == "" {
			continue
		}
		src := filepath.Join(root, filepath.FromSlash(name))
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			t.Fatalf("%s: a tracked file that is not a regular file would be left out of the module zip", name)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("git ls-files in %s listed nothing", root)
	}
}

// untracked lists the files under root that a release would carry when
// root is not a git work tree.
func untracked(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (rel == ".git" || rel == "build" || rel == "bin" || rel == "out"):
			return filepath.SkipDir
		case d.IsDir() || strings.HasSuffix(rel, ".test") || strings.HasSuffix(rel, ".prof"):
			return nil
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// run runs name with args in dir, the test's environment plus env, and
// returns its standard output; a failure stops the test with both outputs.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s%s", filepath.Base(name), strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
