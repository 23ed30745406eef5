package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/wattsched/wattsched/report"
)

// ManifestFile marks a directory as wattsched's results: --force replaces
// only directories that hold it.
const ManifestFile = ".wattsched-results"

// CheckDir fails early, before any work, when the results could not be
// published to dir: dir is a symbolic link or not a directory; or it is
// not empty and force is not set; or force is set but dir is not an
// earlier wattsched result (no ManifestFile), or it is the filesystem
// root, the home directory, the working directory or one of its parents.
func CheckDir(dir string, force bool) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("output directory %s is a symbolic link: give its target or another path", dir)
	case !fi.IsDir():
		return fmt.Errorf("output %s exists and is not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	if !force {
		return fmt.Errorf("output directory %s is not empty (use --force to replace an earlier wattsched result)", dir)
	}
	if why := protected(dir); why != "" {
		return fmt.Errorf("output directory %s is %s: --force never replaces it", dir, why)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
		return fmt.Errorf("output directory %s is not a wattsched result (it has no %s): --force replaces only earlier results; remove it yourself or choose another path", dir, ManifestFile)
	}
	return nil
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

// pending is the temporary directory being written, for Abandon.
var pending struct {
	sync.Mutex
	tmp string
}

// Abandon removes the temporary directory Publish is writing, if any
// (called on SIGINT or SIGTERM): the target keeps its old contents. Once
// Publish has begun renaming, Abandon waits for it to finish, so the target
// holds either its old contents or the complete new ones.
func Abandon() {
	pending.Lock()
	defer pending.Unlock()
	if pending.tmp != "" {
		os.RemoveAll(pending.tmp)
		pending.tmp = ""
	}
}

// Publish writes results into a fresh temporary directory beside dir and
// renames it into place only when every file is complete (the files
// synced, the manifest last). An earlier result at dir (CheckDir with
// force) is replaced in one rename; on any failure, or Abandon, dir keeps
// what it held. version is recorded in the manifest.
func Publish(dir string, force bool, version string, results []*Results) error {
	if err := CheckDir(dir, force); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	pending.Lock()
	pending.tmp = tmp
	pending.Unlock()
	fail := func(err error) error {
		pending.Lock()
		os.RemoveAll(tmp)
		pending.tmp = ""
		pending.Unlock()
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fail(err)
	}
	var files []string
	for _, r := range results {
		if err := r.Write(tmp); err != nil {
			return fail(err)
		}
	}
	err = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(tmp, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		return fail(err)
	}
	slices.Sort(files)
	manifest := "wattsched results\nversion " + version + "\n" + strings.Join(files, "\n") + "\n"
	if err := report.WriteFile(filepath.Join(tmp, ManifestFile), []byte(manifest)); err != nil {
		return fail(err)
	}
	pending.Lock()
	defer pending.Unlock()
	if pending.tmp == "" {
		return errors.New("interrupted")
	}
	var old string
	if _, err := os.Lstat(dir); err == nil {
		// CheckDir allowed it: empty, or an earlier result with force.
		if old, err = os.MkdirTemp(parent, "."+filepath.Base(dir)+".old-"); err != nil {
			os.RemoveAll(tmp)
			pending.tmp = ""
			return err
		}
		os.Remove(old)
		if err := os.Rename(dir, old); err != nil {
			os.RemoveAll(tmp)
			pending.tmp = ""
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		os.RemoveAll(tmp)
		pending.tmp = ""
		return err
	}
	pending.tmp = ""
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}
