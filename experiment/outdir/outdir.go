// Package outdir is the result directories of wattsched's commands: every
// -o path cleaned, then claimed before any work with a lock beside it
// (ClaimDir), results written into a temporary directory and renamed into
// place only when complete (DirClaim.Publish), --force only over earlier
// results (ManifestFile), killed runs' temporaries swept.
package outdir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wattsched/wattsched/experiment"
	"github.com/wattsched/wattsched/report"
)

// ManifestFile marks a directory as wattsched's results: --force replaces
// only directories that hold it. A temporary directory being written holds
// it from its creation, first as a pending marker (naming the writing
// process), last as the manifest proper.
const ManifestFile = ".wattsched-results"

const (
	manifestHead = "wattsched results\n"
	pendingLine  = "pending pid "
)

// CleanDir is the output path as every later step uses it: filepath.Clean
// of dir, so that "DIR/", "DIR/." and "a/../DIR" all name DIR. It refuses
// what names no directory of its own ("", ".", "..", "/", a path ending in
// "..") and a path whose ".." would lead the kernel elsewhere than the
// cleaned path (a ".." after a symbolic link).
func CleanDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("output directory: empty path")
	}
	c := filepath.Clean(dir)
	switch filepath.Base(c) {
	case ".", "..", string(filepath.Separator):
		return "", fmt.Errorf("output directory %s is the working directory, one of its parents or the filesystem root: give a directory of its own", dir)
	}
	raw := strings.TrimRight(dir, string(filepath.Separator))
	for strings.HasSuffix(raw, string(filepath.Separator)+".") {
		raw = strings.TrimRight(strings.TrimSuffix(raw, "."), string(filepath.Separator))
	}
	elems := strings.Split(raw, string(filepath.Separator))
	if !slices.Contains(elems, "..") {
		return c, nil
	}
	if elems[len(elems)-1] == ".." {
		return "", fmt.Errorf("output directory %s ends in '..': give the directory's own name", dir)
	}
	// The parent as the kernel resolves it, ".." after a symbolic link
	// included, must be the cleaned path's parent.
	rawParent := "."
	if i := strings.LastIndex(raw, string(filepath.Separator)); i >= 0 {
		rawParent = raw[:i+1]
	}
	ki, kerr := os.Stat(rawParent)
	ci, cerr := os.Stat(filepath.Dir(c))
	switch {
	case kerr != nil:
		return c, nil // no kernel meaning to differ from (a missing or dangling part)
	case cerr != nil || !os.SameFile(ki, ci):
		return "", fmt.Errorf("output directory %s: its '..' leads elsewhere than %s (a symbolic link before it?): give the path without '..'", dir, c)
	}
	return c, nil
}

// CheckDir fails early, before any work, when the results could not be
// published to dir (cleaned by CleanDir): dir is a symbolic link or not a
// directory; or it is the filesystem root, the home directory, the working
// directory or one of its parents; or it is not empty and force is not
// set; or force is set but dir is not an earlier wattsched result (no
// ManifestFile). It changes nothing; ClaimDir checks the same and more.
func CheckDir(dir string, force bool) error {
	dir, err := CleanDir(dir)
	if err != nil {
		return err
	}
	return checkDir(dir, force)
}

func checkDir(dir string, force bool) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil // ClaimDir creates the parent, or says why it cannot
	case err != nil:
		return fmt.Errorf("output directory %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("output directory %s is a symbolic link: give its target or another path", dir)
	case !fi.IsDir():
		return fmt.Errorf("output %s exists and is not a directory", dir)
	}
	if why := protected(dir); why != "" {
		return fmt.Errorf("output directory %s is %s: wattsched never replaces it", dir, why)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	if len(ents) == 0 {
		return nil
	}
	if !force {
		return fmt.Errorf("output directory %s is not empty (use --force to replace an earlier wattsched result)", dir)
	}
	if !isResult(dir) {
		return fmt.Errorf("output directory %s is not a wattsched result (it has no %s): --force replaces only earlier results; remove it yourself or choose another path", dir, ManifestFile)
	}
	return nil
}

// isResult says whether dir holds a complete wattsched result: a manifest
// that is no pending marker.
func isResult(dir string) bool {
	b, ok := readManifest(dir)
	return ok && !bytes.Contains(b, []byte("\n"+pendingLine))
}

// readManifest reads dir's ManifestFile if it is a regular file that
// starts as wattsched writes it.
func readManifest(dir string) ([]byte, bool) {
	p := filepath.Join(dir, ManifestFile)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<24 {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if err != nil || !bytes.HasPrefix(b, []byte(manifestHead)) {
		return nil, false
	}
	return b, true
}

// protected says why dir must never be replaced ("" if it may be).
func protected(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "not resolvable"
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if filepath.Dir(abs) == abs {
		return "the filesystem root"
	}
	if home, err := os.UserHomeDir(); err == nil {
		if h, err := filepath.EvalSymlinks(home); err == nil && h == abs {
			return "the home directory"
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if w, err := filepath.EvalSymlinks(wd); err == nil && (w == abs || strings.HasPrefix(w, abs+string(filepath.Separator))) {
			return "the working directory or one of its parents"
		}
	}
	return ""
}

// DirClaim is an output directory reserved for one run. ClaimDir takes it
// before any work; Publish writes the results into it; Release gives it up
// (and removes what the claim created when nothing was published).
//
// The claim is a lock file beside the directory (".DIR.lock") held with an
// exclusive advisory lock (flock): the kernel drops it when its process
// ends, however it ends, so a killed run never leaves a claim that blocks
// the next one, and a process id that was reused cannot make a stale claim
// look alive. The file records the holder's process id and start time for
// the message a second run gets.
type DirClaim struct {
	// Dir is the cleaned output directory.
	Dir   string
	force bool
	start time.Time
	lock  *os.File
	// lockPath is the lock file; made the parent directories ClaimDir
	// created, deepest first; tmp the temporary directory being written.
	lockPath string
	made     []string
	tmp      string
	done     bool
	// writing is held by Publish from its first write to its rename, so
	// that Abandon never removes the temporary directory while files are
	// being written into it (a removal racing the writes could leave the
	// directory with its final manifest and none of its files); abandoned
	// tells Publish to stop at its next step.
	writing   sync.Mutex
	abandoned bool
}

// claims are the claims held by this process, for Abandon. Publish holds
// the lock while it renames, so that Abandon waits for the renames.
var claims struct {
	sync.Mutex
	held []*DirClaim
}

// ClaimDir cleans dir, checks it as CheckDir does, creates its parent if
// need be, takes the claim on it (an error, at once, when another live run
// holds it) and then, under the claim, removes the temporaries that killed
// runs left beside it (see sweep) and checks it again. Creating the lock
// file is also the check that the parent can be written (permissions,
// read-only filesystems), made before any work.
func ClaimDir(dir string, force bool) (*DirClaim, error) {
	clean, err := CleanDir(dir)
	if err != nil {
		return nil, err
	}
	if err := checkDir(clean, force); err != nil {
		return nil, err
	}
	c := &DirClaim{Dir: clean, force: force, start: time.Now()}
	parent := filepath.Dir(clean)
	for p := parent; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) || filepath.Dir(p) == p {
			break
		}
		c.made = append(c.made, p)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		c.removeMade()
		return nil, fmt.Errorf("output directory %s: cannot create its parent: %w", clean, err)
	}
	c.lockPath = filepath.Join(parent, "."+filepath.Base(clean)+".lock")
	if err := c.lockFile(); err != nil {
		c.removeMade()
		return nil, err
	}
	claims.Lock()
	claims.held = append(claims.held, c)
	claims.Unlock()
	if err := c.sweep(); err != nil {
		c.Release()
		return nil, err
	}
	if err := checkDir(clean, force); err != nil {
		c.Release()
		return nil, err
	}
	return c, nil
}

// lockFile creates or opens the lock file and locks it, retrying when the
// file it locked was removed meanwhile by the run that held it.
func (c *DirClaim) lockFile() error {
	for range 20 {
		// Never through a symbolic link: the file is truncated below.
		f, err := os.OpenFile(c.lockPath, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
		if err != nil {
			return fmt.Errorf("output directory %s: cannot write beside it: %w", c.Dir, err)
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			return fmt.Errorf("output directory %s: %s is not a regular file: remove it or choose another -o", c.Dir, c.lockPath)
		}
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return fmt.Errorf("output directory %s: lock %s: %w", c.Dir, c.lockPath, err)
		}
		if !held {
			// The holder writes its record just after locking: give it
			// a moment when the file is still empty.
			who, _ := os.ReadFile(c.lockPath)
			for i := 0; len(who) == 0 && i < 5; i++ {
				time.Sleep(5 * time.Millisecond)
				who, _ = os.ReadFile(c.lockPath)
			}
			f.Close()
			return fmt.Errorf("output directory %s is being written by another wattsched run (%s): wait for it to end or choose another -o", c.Dir, holder(who))
		}
		a, errA := f.Stat()
		b, errB := os.Lstat(c.lockPath)
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			f.Close() // the holder removed it before we locked: again
			continue
		}
		rec := fmt.Sprintf("pid %d\nstarted %s\n", os.Getpid(), c.start.UTC().Format(time.RFC3339))
		if err := f.Truncate(0); err == nil {
			_, err = f.WriteAt([]byte(rec), 0)
		}
		if err != nil {
			os.Remove(c.lockPath)
			f.Close()
			return fmt.Errorf("output directory %s: cannot write beside it: %w", c.Dir, err)
		}
		c.lock = f
		return nil
	}
	return fmt.Errorf("output directory %s: could not lock %s: other runs keep replacing it", c.Dir, c.lockPath)
}

// holder describes a lock file's record for a message.
func holder(rec []byte) string {
	var pid, since string
	sc := bufio.NewScanner(bytes.NewReader(rec))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "pid":
			pid = v
		case "started":
			since = v
		}
	}
	if pid == "" {
		return "it has not recorded its process yet"
	}
	if since == "" {
		return "process " + pid
	}
	return "process " + pid + ", started " + since
}

// sweep removes the temporaries that killed runs left beside c.Dir: only
// hidden directories named as Publish names them (".DIR.tmp-" or
// ".DIR.old-" and digits) that hold wattsched's manifest or pending marker
// and were last changed before this run started, and never one whose
// pending marker names a live process. Holding the claim, no live run is
// writing temporaries of this directory. When a run was killed between its
// two renames (the earlier result moved aside, the new one not yet in
// place), the earlier result is put back.
func (c *DirClaim) sweep() error {
	parent := filepath.Dir(c.Dir)
	base := filepath.Base(c.Dir)
	ents, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("output directory %s: list its parent: %w", c.Dir, err)
	}
	var tmps, olds []string
	for _, e := range ents {
		var list *[]string
		rest := ""
		switch n := e.Name(); {
		case strings.HasPrefix(n, "."+base+".tmp-"):
			list, rest = &tmps, strings.TrimPrefix(n, "."+base+".tmp-")
		case strings.HasPrefix(n, "."+base+".old-"):
			list, rest = &olds, strings.TrimPrefix(n, "."+base+".old-")
		default:
			continue
		}
		if _, err := strconv.ParseUint(rest, 10, 64); err != nil || !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || fi.ModTime().After(c.start) {
			continue
		}
		b, ok := readManifest(p)
		if !ok || liveWriter(b) {
			continue
		}
		*list = append(*list, p)
	}
	if _, err := os.Lstat(c.Dir); errors.Is(err, fs.ErrNotExist) && len(olds) > 0 {
		slices.Sort(olds)
		if err := os.Rename(olds[0], c.Dir); err != nil {
			return fmt.Errorf("output directory %s: put back the earlier result %s that a killed run moved aside: %w", c.Dir, olds[0], err)
		}
		olds = olds[1:]
	}
	for _, p := range append(tmps, olds...) {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("output directory %s: remove a killed run's temporary %s: %w", c.Dir, p, err)
		}
	}
	return nil
}

// liveWriter says whether a pending marker names a process that is alive
// (other than this one).
func liveWriter(manifest []byte) bool {
	_, rest, ok := bytes.Cut(manifest, []byte("\n"+pendingLine))
	if !ok {
		return false
	}
	f := strings.Fields(string(rest))
	if len(f) == 0 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	return alive(pid)
}

// removeMade removes the parents ClaimDir created, if still empty.
func (c *DirClaim) removeMade() {
	for _, p := range c.made {
		os.Remove(p)
	}
	c.made = nil
}

// Release gives the claim up: it removes the temporary directory, if any,
// the lock file and, when nothing was published, the parent directories
// ClaimDir created. It may be called more than once, and on nil.
func (c *DirClaim) Release() {
	if c == nil {
		return
	}
	claims.Lock()
	defer claims.Unlock()
	c.release()
}

// release is Release with claims locked.
func (c *DirClaim) release() {
	if c.tmp != "" {
		os.RemoveAll(c.tmp)
		c.tmp = ""
	}
	if c.lock != nil {
		os.Remove(c.lockPath)
		c.lock.Close()
		c.lock = nil
	}
	if !c.done {
		c.removeMade()
	}
	claims.held = slices.DeleteFunc(claims.held, func(x *DirClaim) bool { return x == c })
}

// Abandon releases every claim this process holds, removing the
// temporary directories and files being written (called on a terminating
// signal): each target keeps its old contents. A Publish in progress stops
// at its next step, and Abandon waits for it: it removes its own temporary
// directory, or, once it has begun renaming, finishes, so the target
// holds either its old contents or the complete new ones. Abandon returns
// the directories this process published whole (their results stand).
func Abandon() []string {
	claims.Lock()
	held := slices.Clone(claims.held)
	for _, c := range held {
		c.abandoned = true
	}
	for _, f := range slices.Clone(files) {
		f.discard()
	}
	claims.Unlock()
	for _, c := range held {
		c.writing.Lock() // a Publish in flight returns first
	}
	claims.Lock()
	defer claims.Unlock()
	for len(claims.held) > 0 {
		claims.held[0].release()
	}
	for _, c := range held {
		c.writing.Unlock()
	}
	return slices.Clone(published)
}

// published are the directories this process published (under claims'
// lock).
var published []string

// afterWrite, when set (by tests), is called after each result is written
// into the temporary directory.
var afterWrite func()

// Publish claims dir (ClaimDir), writes the results into it and releases
// it: the whole life of a claim in one call, for callers that have no work
// between the check and the results.
func Publish(dir string, force bool, version string, results []*experiment.Results) error {
	c, err := ClaimDir(dir, force)
	if err != nil {
		return err
	}
	defer c.Release()
	return c.Publish(version, results)
}

// Publish writes results into a fresh temporary directory beside the
// claimed directory and renames it into place only when every file is
// complete (the files synced, the manifest last), then releases the claim.
// The directory is checked again first: if it appeared meanwhile with
// contents not this claim's to replace, nothing is written and the error
// says so. An earlier result (with force) is moved aside and replaced; an
// empty directory is replaced in one rename; on any failure, or Abandon,
// the directory keeps what it held. version is recorded in the manifest.
func (c *DirClaim) Publish(version string, results []*experiment.Results) error {
	c.writing.Lock()
	defer c.writing.Unlock()
	defer c.Release() // before Unlock: Abandon finds the directory removed
	claims.Lock()
	ok := c.lock != nil && !c.done
	claims.Unlock()
	if !ok {
		return fmt.Errorf("output directory %s: not claimed", c.Dir)
	}
	if err := checkDir(c.Dir, c.force); err != nil {
		return fmt.Errorf("%w (it changed while this run ran: its results were not written)", err)
	}
	tmp, err := c.begin()
	if err != nil {
		return err
	}
	for _, r := range results {
		if c.stopped() {
			return errors.New("interrupted")
		}
		if err := r.Write(tmp); err != nil {
			return err
		}
		if afterWrite != nil {
			afterWrite()
		}
	}
	var files []string
	err = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(tmp, p)
			if rel != ManifestFile {
				files = append(files, filepath.ToSlash(rel))
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	slices.Sort(files)
	manifest := manifestHead + "version " + version + "\n" + strings.Join(files, "\n") + "\n"
	if err := report.WriteFile(filepath.Join(tmp, ManifestFile), []byte(manifest)); err != nil {
		return err
	}
	claims.Lock()
	defer claims.Unlock()
	if c.tmp == "" || c.abandoned {
		return errors.New("interrupted")
	}
	if err := c.rename(); err != nil {
		return err
	}
	published = append(published, c.Dir)
	return nil
}

// stopped says whether Abandon has asked c's Publish to stop.
func (c *DirClaim) stopped() bool {
	claims.Lock()
	defer claims.Unlock()
	return c.abandoned
}

// begin creates the temporary directory and writes the pending marker into
// it, first, before any result file: a directory without it is never
// removed by a later sweep.
func (c *DirClaim) begin() (string, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(c.Dir), "."+filepath.Base(c.Dir)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("output directory %s: %w", c.Dir, err)
	}
	claims.Lock()
	if c.lock == nil || c.abandoned { // abandoned meanwhile
		claims.Unlock()
		os.RemoveAll(tmp)
		return "", errors.New("interrupted")
	}
	c.tmp = tmp
	claims.Unlock()
	marker := fmt.Sprintf("%s%s%d started %s dir %s\n", manifestHead, pendingLine, os.Getpid(), c.start.UTC().Format(time.RFC3339), filepath.Base(c.Dir))
	if err := os.WriteFile(filepath.Join(tmp, ManifestFile), []byte(marker), 0o644); err != nil {
		return "", fmt.Errorf("output directory %s: %w", c.Dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("output directory %s: %w", c.Dir, err)
	}
	return tmp, nil
}

// rename puts c.tmp in place of c.Dir (claims locked).
func (c *DirClaim) rename() error {
	// A missing or empty directory is replaced in one rename, which fails
	// if the directory has gained contents since the check. (os.Rename
	// refuses any existing directory; the system call replaces an empty
	// one.)
	err := syscall.Rename(c.tmp, c.Dir)
	if err == nil {
		c.tmp, c.done = "", true
		return nil
	}
	fi, lerr := os.Lstat(c.Dir)
	if lerr != nil || !fi.IsDir() || !c.force || !isResult(c.Dir) {
		if cerr := checkDir(c.Dir, c.force); cerr != nil {
			return fmt.Errorf("%w (it changed while this run ran: its results were not written)", cerr)
		}
		return fmt.Errorf("output directory %s: %w", c.Dir, err)
	}
	// An earlier result, with force: aside, then the new one in its place.
	old, err := os.MkdirTemp(filepath.Dir(c.Dir), "."+filepath.Base(c.Dir)+".old-")
	if err != nil {
		return fmt.Errorf("output directory %s: %w", c.Dir, err)
	}
	os.Remove(old)
	if err := os.Rename(c.Dir, old); err != nil {
		return fmt.Errorf("output directory %s: move the earlier result aside: %w", c.Dir, err)
	}
	if err := os.Rename(c.tmp, c.Dir); err != nil {
		if rerr := os.Rename(old, c.Dir); rerr != nil {
			return fmt.Errorf("output directory %s: %w; the earlier result is in %s", c.Dir, err, old)
		}
		return fmt.Errorf("output directory %s: %w", c.Dir, err)
	}
	c.tmp, c.done = "", true
	os.RemoveAll(old)
	return nil
}
