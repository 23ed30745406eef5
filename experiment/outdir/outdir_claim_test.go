package outdir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// names lists a directory's entries, sorted.
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// wantResult fails unless dir holds exactly the files of a publish of
// files (plus report.html and the manifest), with their contents.
func wantResult(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	want := []string{ManifestFile, "report.html"}
	for n := range files {
		want = append(want, n)
	}
	slices.Sort(want)
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Fatalf("%s holds %v, want %v", dir, got, want)
	}
	for n, b := range files {
		if got, _ := os.ReadFile(filepath.Join(dir, n)); string(got) != string(b) {
			t.Errorf("%s: %q, want %q", n, got, b)
		}
	}
	if !isResult(dir) {
		t.Errorf("%s: manifest missing or pending", dir)
	}
}

// Every spelling of a path names the same directory: a trailing slash, a
// trailing "/.", a doubled slash, "a/../DIR" (a a real directory), "./DIR"
// and a symbolically linked parent. For each, into a new directory, an
// empty one, and over an earlier result with force: the results land in
// DIR and nothing is left beside it (the issue: "DIR/" failed after the
// run with "rename DIR/ ...: invalid argument" and lost the results).
func TestPublishPathSpellings(t *testing.T) {
	spellings := []struct {
		name string
		// path gives the -o spelling for root (which holds "real" and,
		// where needed, "a" and "link" -> real).
		path func(root string) string
	}{
		{"plain", func(r string) string { return r + "/real/DIR" }},
		{"trailing slash", func(r string) string { return r + "/real/DIR/" }},
		{"trailing slashes", func(r string) string { return r + "/real/DIR//" }},
		{"trailing dot", func(r string) string { return r + "/real/DIR/." }},
		{"dot dot", func(r string) string { return r + "/real/a/../DIR" }},
		{"dot dot slash", func(r string) string { return r + "/real/a/../DIR/" }},
		{"dot", func(r string) string { return r + "/real/./DIR" }},
		{"symlinked parent", func(r string) string { return r + "/link/DIR" }},
		{"symlinked parent, slash", func(r string) string { return r + "/link/DIR/" }},
	}
	for _, sp := range spellings {
		for _, state := range []string{"new", "empty", "earlier result"} {
			t.Run(sp.name+"/"+state, func(t *testing.T) {
				root := t.TempDir()
				real := filepath.Join(root, "real")
				os.MkdirAll(filepath.Join(real, "a"), 0o755)
				if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(real, "DIR")
				force := false
				switch state {
				case "empty":
					os.Mkdir(dir, 0o755)
				case "earlier result":
					if err := Publish(dir, false, "v0", res(map[string][]byte{"old.csv": []byte("0")})); err != nil {
						t.Fatal(err)
					}
					force = true
				}
				files := map[string][]byte{"a.csv": []byte("1")}
				if err := Publish(sp.path(root), force, "v1", res(files)); err != nil {
					t.Fatalf("Publish(%s): %v", sp.path(root), err)
				}
				wantResult(t, dir, files)
				if got := names(t, real); !slices.Equal(got, []string{"DIR", "a"}) {
					t.Errorf("beside DIR: %v", got)
				}
				if got := names(t, root); !slices.Equal(got, []string{"link", "real"}) {
					t.Errorf("in the root: %v", got)
				}
			})
		}
	}
}

// Spellings that name no directory of their own, or whose ".." the kernel
// would resolve elsewhere than the cleaned path, or a symbolic link (with
// or without a trailing slash, which would make the kernel follow it), are
// refused before anything is written.
func TestPathSpellingsRefused(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "x", "y"), 0o755)
	os.MkdirAll(filepath.Join(root, "target"), 0o755)
	os.Symlink(filepath.Join(root, "x", "y"), filepath.Join(root, "l"))
	os.Symlink(filepath.Join(root, "target"), filepath.Join(root, "dirlink"))
	for _, c := range []struct{ path, want string }{
		{"", "empty path"},
		{".", "working directory"},
		{"./", "working directory"},
		{"..", "working directory"},
		{"/", "filesystem root"},
		{root + "/x/..", "ends in '..'"},
		{root + "/l/../DIR", "leads elsewhere"}, // the kernel: root/x/DIR
		{root + "/dirlink", "symbolic link"},
		{root + "/dirlink/", "symbolic link"},
		{root + "/dirlink/.", "symbolic link"},
	} {
		t.Run(c.path, func(t *testing.T) {
			before := names(t, root)
			_, err := ClaimDir(c.path, true)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ClaimDir(%q): %v, want %q", c.path, err, c.want)
			}
			if got := names(t, root); !slices.Equal(got, before) {
				t.Errorf("wrote %v (had %v)", got, before)
			}
			if got := names(t, filepath.Join(root, "x")); !slices.Equal(got, []string{"y"}) {
				t.Errorf("wrote into x: %v", got)
			}
		})
	}
}

// An output whose parent cannot be written fails at the claim, before any
// work, for root too (root ignores permission bits, so the cases are a
// parent that is a regular file and a filesystem that refuses files); the
// parents the claim created for a run that published nothing are removed.
func TestClaimChecksWritability(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o644)
	for _, c := range []struct{ path, want string }{
		{root + "/file/out", "cannot create its parent"},
		{root + "/file/sub/out", "cannot create its parent"},
		{"/proc/wattsched-out", "cannot write beside it"},
		{"/proc/self/wattsched-out", "cannot write beside it"},
	} {
		t.Run(c.path, func(t *testing.T) {
			if _, err := os.Stat("/proc/self"); strings.HasPrefix(c.path, "/proc") && err != nil {
				t.Skip("no /proc here")
			}
			_, err := ClaimDir(c.path, false)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ClaimDir(%s): %v, want %q", c.path, err, c.want)
			}
			if got := names(t, root); !slices.Equal(got, []string{"file"}) {
				t.Errorf("left %v", got)
			}
		})
	}
	c, err := ClaimDir(filepath.Join(root, "new1", "new2", "out"), false)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, filepath.Join(root, "new1", "new2")); !slices.Equal(got, []string{".out.lock"}) {
		t.Errorf("while claimed: %v", got)
	}
	c.Release()
	c.Release() // twice: a no-op
	if got := names(t, root); !slices.Equal(got, []string{"file"}) {
		t.Errorf("after a release without results: %v", got)
	}
}

// Of goroutines publishing different results to one new directory without
// force, exactly one succeeds and every other says why; with force, the
// directory ends holding one complete result, never a mix; nothing is left
// beside it either way.
func TestConcurrentPublish(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprint("force=", force), func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			const n = 8
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = Publish(dir+"/", force, "v", res(map[string][]byte{fmt.Sprintf("run%d.csv", i): []byte(strconv.Itoa(i))}))
				}()
			}
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch {
				case err == nil && !force && won >= 0:
					t.Errorf("runs %d and %d both published", won, i)
				case err == nil:
					won = i
				case !strings.Contains(err.Error(), "being written by another wattsched run") && !strings.Contains(err.Error(), "is not empty"):
					t.Errorf("run %d: %v", i, err)
				}
			}
			if won < 0 {
				t.Fatalf("no run published: %v", errs)
			}
			// The last to publish is the one whose file is there.
			var file string
			for _, e := range names(t, dir) {
				if strings.HasPrefix(e, "run") {
					file = e
				}
			}
			i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(file, "run"), ".csv"))
			wantResult(t, dir, map[string][]byte{file: []byte(strconv.Itoa(i))})
			if errs[i] != nil {
				t.Errorf("%s is there but its run failed: %v", file, errs[i])
			}
			if got := names(t, parent); !slices.Equal(got, []string{"out"}) {
				t.Errorf("beside out: %v", got)
			}
		})
	}
}

// A directory that another program creates with contents while the run
// holds its claim is not replaced: the publish fails saying so, the
// other program's file stays, nothing is left beside it.
func TestPublishRechecksUnderTheClaim(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprint("force=", force), func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			c, err := ClaimDir(dir, force)
			if err != nil {
				t.Fatal(err)
			}
			os.Mkdir(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "theirs.txt"), []byte("keep"), 0o644)
			err = c.Publish("v", res(map[string][]byte{"a.csv": []byte("1")}))
			if err == nil || !strings.Contains(err.Error(), "changed while this run ran: its results were not written") {
				t.Fatalf("publish over a directory created meanwhile: %v", err)
			}
			if got := names(t, dir); !slices.Equal(got, []string{"theirs.txt"}) {
				t.Errorf("out holds %v", got)
			}
			if got := names(t, parent); !slices.Equal(got, []string{"out"}) {
				t.Errorf("beside out: %v", got)
			}
		})
	}
}

// deadPID is the id of a process that has ended (and been waited for).
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// mkTemp makes a temporary-like directory beside a result with the given
// manifest ("" for none) and a file, last changed an hour ago.
func mkTemp(t *testing.T, parent, name, manifest string) string {
	t.Helper()
	p := filepath.Join(parent, name)
	os.MkdirAll(p, 0o755)
	os.WriteFile(filepath.Join(p, "big.csv"), []byte("data"), 0o644)
	if manifest != "" {
		os.WriteFile(filepath.Join(p, ManifestFile), []byte(manifest), 0o644)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	return p
}

// The next claim of a directory removes the temporaries that killed runs
// left beside it, and only those: named as Publish names them, marked,
// older than the claim, of no live process. A look-alike without the
// marker, one whose marker names a live process, one changed after the
// claim began, one of another directory and one with a name that only
// starts like ours are kept. When a run was killed between its two
// renames, the earlier result is put back.
func TestSweepRemovesOnlyOurStaleTemporaries(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := Publish(dir, false, "v0", res(map[string][]byte{"a.csv": []byte("0")})); err != nil {
		t.Fatal(err)
	}
	dead, live := deadPID(t), os.Getppid()
	pending := func(pid int) string {
		return fmt.Sprintf("wattsched results\npending pid %d started 2026-01-01T00:00:00Z dir out\n", pid)
	}
	mkTemp(t, parent, ".out.tmp-101", pending(dead))                             // killed while writing: removed
	mkTemp(t, parent, ".out.tmp-102", "wattsched results\nversion v\nbig.csv\n") // killed before its rename: removed
	mkTemp(t, parent, ".out.old-103", "wattsched results\nversion v\nbig.csv\n") // killed before removing the old: removed
	mkTemp(t, parent, ".out.tmp-201", "")                                        // no marker: kept
	mkTemp(t, parent, ".out.tmp-202", pending(live))                             // a live writer: kept
	mkTemp(t, parent, ".out.tmp-20x", pending(dead))                             // not our name: kept
	mkTemp(t, parent, ".out.tmp-1.tmp-203", pending(dead))                       // directory "out.tmp-1"'s: kept
	mkTemp(t, parent, ".other.tmp-204", pending(dead))                           // another directory's: kept
	mkTemp(t, parent, ".out.tmp-205", "not wattsched\n")                         // a foreign marker: kept
	fresh := mkTemp(t, parent, ".out.tmp-206", pending(dead))                    // changed after the claim began: kept
	future := time.Now().Add(time.Hour)
	os.Chtimes(fresh, future, future)
	os.WriteFile(filepath.Join(parent, ".out.tmp-207"), []byte("a file"), 0o644) // not a directory: kept
	c, err := ClaimDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".other.tmp-204", ".out.lock", ".out.tmp-1.tmp-203", ".out.tmp-201", ".out.tmp-202", ".out.tmp-205", ".out.tmp-206", ".out.tmp-207", ".out.tmp-20x", "out"}
	if got := names(t, parent); !slices.Equal(got, want) {
		t.Errorf("after the sweep: %v, want %v", got, want)
	}
	c.Release()

	// Killed between the renames: no out, the old result aside and the
	// new one complete in its temporary. The old comes back.
	os.RemoveAll(parent)
	os.MkdirAll(parent, 0o755)
	mkTemp(t, parent, ".out.old-301", "wattsched results\nversion v0\nbig.csv\n")
	mkTemp(t, parent, ".out.tmp-302", "wattsched results\nversion v1\nbig.csv\n")
	c, err = ClaimDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); !strings.Contains(string(m), "version v0") {
		t.Errorf("out after the sweep: manifest %q, want the earlier result", m)
	}
	if got := names(t, parent); !slices.Equal(got, []string{".out.lock", "out"}) {
		t.Errorf("after the sweep: %v", got)
	}
	c.Release()
}

// TestClaimChild is the other process of TestClaimAcrossProcesses: it
// claims a directory, starts writing, says so and waits to be killed.
func TestClaimChild(t *testing.T) {
	dir := os.Getenv("WATTSCHED_CLAIM_CHILD")
	if dir == "" {
		t.Skip("the child of TestClaimAcrossProcesses")
	}
	c, err := ClaimDir(dir, false)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	if _, err := c.begin(); err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	fmt.Println("claimed")
	time.Sleep(time.Hour)
}

// Across processes (this test binary as the child): while a run holds the
// claim, another fails at once naming it; after the holder is killed with
// SIGKILL (no cleanup at all), the next claim succeeds, removes the
// killed run's temporary and the next publish leaves nothing beside DIR.
func TestClaimAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestClaimChild$")
	cmd.Env = append(os.Environ(), "WATTSCHED_CLAIM_CHILD="+dir+"/")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "claimed\n" {
		t.Fatalf("child: %q", line)
	}
	_, err = ClaimDir(dir, true)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("being written by another wattsched run (process %d, started ", cmd.Process.Pid)) {
		t.Fatalf("claim while another process holds it: %v", err)
	}
	if got := names(t, parent); len(got) != 2 || got[0] != ".out.lock" || !strings.HasPrefix(got[1], ".out.tmp-") {
		t.Fatalf("while the child writes: %v", got)
	}
	cmd.Process.Kill()
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) {
		t.Fatalf("child: %v", err)
	}
	files := map[string][]byte{"a.csv": []byte("1")}
	if err := Publish(dir, false, "v", res(files)); err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	wantResult(t, dir, files)
	if got := names(t, parent); !slices.Equal(got, []string{"out"}) {
		t.Errorf("beside out: %v", got)
	}
}

// A lock file name that is a symbolic link (to a file that must not be
// truncated) or a directory is never written through: the claim fails
// and the link's target keeps its contents.
func TestClaimNeverFollowsALinkedLockFile(t *testing.T) {
	parent := t.TempDir()
	precious := filepath.Join(t.TempDir(), "precious")
	os.WriteFile(precious, []byte("keep me"), 0o644)
	os.Symlink(precious, filepath.Join(parent, ".out.lock"))
	os.Mkdir(filepath.Join(parent, ".dir.lock"), 0o755)
	for _, out := range []string{"out", "dir"} {
		if _, err := ClaimDir(filepath.Join(parent, out), false); err == nil || !strings.Contains(err.Error(), "."+out+".lock") {
			t.Errorf("claim of %s: %v", out, err)
		}
	}
	if b, _ := os.ReadFile(precious); string(b) != "keep me" {
		t.Errorf("the link's target now holds %q", b)
	}
	if got := names(t, parent); !slices.Equal(got, []string{".dir.lock", ".out.lock"}) {
		t.Errorf("left %v", got)
	}
}

// A killed process that its parent has not reaped yet (a zombie) is not
// alive: its temporaries are swept.
func TestZombieIsNotAlive(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestClaimChild$")
	cmd.Env = append(os.Environ(), "WATTSCHED_CLAIM_CHILD="+filepath.Join(t.TempDir(), "out"))
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(stdout).ReadString('\n')
	pid := cmd.Process.Pid
	if !alive(pid) {
		t.Fatal("a running child is not alive")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	// Not waited for: a zombie until Wait, once the kernel has killed it.
	for i := 0; alive(pid) && i < 3000; i++ { // until it is dead, however long that takes here
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Error("a killed, unreaped child is alive")
	}
	cmd.Wait()
}

// CleanDir on any string: no panic; what it accepts is exactly
// filepath.Clean of the input and names a directory of its own.
func FuzzCleanDir(f *testing.F) {
	for _, s := range []string{"DIR/", "DIR/.", "DIR//", "a/../DIR", "./DIR", "", ".", "./", "..", "/", "x/..", "a/b/../../c", "../x", "/tmp/../DIR/."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := CleanDir(in)
		if err != nil {
			return
		}
		if out != filepath.Clean(in) {
			t.Fatalf("CleanDir(%q) = %q, want %q", in, out, filepath.Clean(in))
		}
		switch filepath.Base(out) {
		case ".", "..", string(filepath.Separator):
			t.Fatalf("CleanDir(%q) accepted %q", in, out)
		}
	})
}
