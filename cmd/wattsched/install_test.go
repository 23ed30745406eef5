package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// The checkout's committed files become a scratch repository (scratch)
// tagged v1.2.3; the installed binary must then report the tag as its
// module version and run the main job.
//
// What this cannot check is the publication itself: the repository must
// exist at that path with a semver tag (README.md).
func TestGoInstallLatest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole module in a fresh GOPATH; run without -short")
	}
	s := newScratch(t)
	s.commit(t, "release")
	s.git(t, "tag", "v1.2.3")

	gopath := filepath.Join(s.tmp, "gopath")
	bin := filepath.Join(s.tmp, "bin")
	work := filepath.Join(s.tmp, "work") // outside any module, as a user's shell
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatalf("make the working directory: %v", err)
	}
	// plain go install: no highs tag
	run(t, work, append(s.goEnv(gopath), "GOBIN="+bin), s.goBin, "install", modulePath+"/cmd/wattsched@latest")

	wattsched := filepath.Join(bin, "wattsched")
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out := run(t, work, nil, wattsched, args...)
		if !strings.Contains(out, "module v1.2.3") {
			t.Errorf("wattsched %s = %q, want the tag v1.2.3 as its module version", args[0], out)
		}
	}
	out := filepath.Join(s.tmp, "demo")
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

// scratch is a fresh git repository holding this checkout's committed files
// (with their working-tree contents), which git serves at the module path:
// url.<base>.insteadOf points https://github.com/wattsched/wattsched at it,
// so that the go command fetches the module exactly as it fetches it from
// GitHub (no proxy and no checksum database for this module), listing its
// tags and building module zips with its own rules (nested modules left
// out of the core's). The git commands see none of the caller's GO* and
// GIT_* variables (a hook's GIT_DIR would otherwise point git at the
// caller's repository).
type scratch struct {
	tmp, repo, gitBin, goBin string
	gitEnv                   []string
	modCache, buildCache     string // this machine's, read only
	upstream                 string // the configured GOPROXY
}

func newScratch(t *testing.T) *scratch {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to stand in for the published repository: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command on PATH: %v", err)
	}
	goEnv := func(key string) string { return strings.TrimSpace(run(t, ".", nil, goBin, "env", key)) }
	s := &scratch{tmp: t.TempDir(), gitBin: gitBin, goBin: goBin,
		modCache: goEnv("GOMODCACHE"), buildCache: goEnv("GOCACHE"), upstream: goEnv("GOPROXY")}
	s.repo = filepath.Join(s.tmp, "repo")
	copyTracked(t, gitBin, filepath.Dir(goEnv("GOMOD")), s.repo)
	s.gitEnv = []string{
		"HOME=" + s.tmp, "XDG_CONFIG_HOME=" + s.tmp, // git before 2.32 ignores GIT_CONFIG_GLOBAL
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(s.tmp, "gitconfig"),
		"GIT_AUTHOR_NAME=wattsched test", "GIT_AUTHOR_EMAIL=test@invalid",
		"GIT_COMMITTER_NAME=wattsched test", "GIT_COMMITTER_EMAIL=test@invalid",
	}
	// file transport allowed explicitly (some git settings restrict it)
	config := "[url \"file://" + filepath.ToSlash(s.repo) + "\"]\n\tinsteadOf = https://" + modulePath + "\n" +
		"[protocol \"file\"]\n\tallow = always\n"
	if err := os.WriteFile(filepath.Join(s.tmp, "gitconfig"), []byte(config), 0o644); err != nil {
		t.Fatalf("write the scratch git configuration: %v", err)
	}
	s.git(t, "init", "-q")
	return s
}

func (s *scratch) git(t *testing.T, args ...string) string {
	t.Helper()
	return run(t, s.repo, s.gitEnv, s.gitBin, args...)
}

// commit commits everything in the scratch repository.
func (s *scratch) commit(t *testing.T, msg string) {
	t.Helper()
	s.git(t, "add", "-A")
	s.git(t, "commit", "-q", "-m", msg)
}

// goEnv is the environment of a go command that starts from an empty
// GOPATH and module cache under gopath. The dependencies come from this
// machine's module cache, served as a file:// proxy, falling back to the
// configured proxy; the module path is private (fetched from git) and
// nothing is checked against the checksum database, so that no network is
// needed once `make setup` has filled the cache: downloads are checked
// against the go.sum lines of the module being built.
func (s *scratch) goEnv(gopath string) []string {
	return append(slices.Clone(s.gitEnv),
		"GOENV=off", "GOTOOLCHAIN=local", "GOWORK=off",
		"GOFLAGS=-modcacherw", // lets TempDir clean up
		"GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"),
		"GOCACHE="+s.buildCache,
		"GOPRIVATE="+modulePath, "GONOPROXY="+modulePath, "GONOSUMDB="+modulePath, "GOSUMDB=off",
		"GOPROXY=file://"+filepath.ToSlash(filepath.Join(s.modCache, "cache", "download"))+","+s.upstream,
	)
}

// copyTracked copies the files git tracks in root, as they are in the
// working tree, into dst. A source archive without .git gives every file
// but those .gitignore names (build/, bin/, out/, test binaries, profiles).
func copyTracked(t *testing.T, git, root, dst string) {
	t.Helper()
	var names []string
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		names = strings.Split(run(t, root, []string{}, git, "ls-files", "-z"), "\x00")
	} else {
		names = archiveFiles(t, root)
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
			t.Fatalf("copy %s: %v", name, err)
		}
		if !info.Mode().IsRegular() {
			t.Fatalf("%s: a tracked file that is not a regular file would be left out of the module zip", name)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("copy %s: %v", name, err)
		}
		target := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatalf("copy %s: %v", name, err)
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			t.Fatalf("copy %s: %v", name, err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no files to release in %s", root)
	}
}

// archiveFiles lists the files under root that a release would carry when
// root is a source archive rather than a git work tree.
func archiveFiles(t *testing.T, root string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (rel == "build" || rel == "bin" || rel == "out"):
			return filepath.SkipDir
		case d.IsDir() || strings.HasSuffix(rel, ".test") || strings.HasSuffix(rel, ".prof"):
			return nil
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		t.Fatalf("list the files of %s: %v", root, err)
	}
	return names
}

// run runs name with args in dir and returns its standard output; a
// failure stops the test with both outputs. With env nil the command sees
// the test's environment; otherwise the test's environment without its GO*
// and GIT_* variables, plus env.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if env != nil {
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GO") && !strings.HasPrefix(kv, "GIT_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s%s", filepath.Base(name), strings.Join(args, " "), dir, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
