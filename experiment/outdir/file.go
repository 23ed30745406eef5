package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// CheckFile fails early, before any work, when a single output file (one
// that is not a results directory: a solver log, a catalog, a plot, a
// scaled trace) could not be written by the rules every output follows: a
// path that names a directory (a trailing slash, ".", ".."), a directory,
// a symbolic link, an existing file without force, and a file inside a
// wattsched result or a run's temporary directory (a directory holding
// ManifestFile, at any depth) are refused; and the directory must be
// writable, which creating and removing a temporary file beside the path
// probes. It returns the cleaned path.
func CheckFile(path string, force bool) (string, error) {
	if path == "" {
		return "", errors.New("output file: empty path")
	}
	switch filepath.Base(path) {
	case ".", "..", string(filepath.Separator):
		return "", fmt.Errorf("output %s names a directory: give a file name", path)
	}
	if strings.HasSuffix(path, string(filepath.Separator)) {
		return "", fmt.Errorf("output %s names a directory (it ends in a slash): give a file name", path)
	}
	clean := filepath.Clean(path)
	fi, err := os.Lstat(clean)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// the probe below says why it cannot be written, if it cannot
	case err != nil:
		return "", fmt.Errorf("output %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", fmt.Errorf("output %s is a symbolic link: give its target or another path", path)
	case fi.IsDir():
		return "", fmt.Errorf("output %s is a directory: give a file name", path)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("output %s is not a regular file: give another path", path)
	case !force:
		return "", fmt.Errorf("output %s exists (use --force to replace it)", path)
	}
	if res := insideResult(clean); res != "" {
		return "", fmt.Errorf("output %s is inside the wattsched result %s: write it elsewhere (a result holds only the files its manifest lists)", path, res)
	}
	dir := filepath.Dir(clean)
	f, err := os.CreateTemp(dir, "."+filepath.Base(clean)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("output %s: cannot write in %s: %w", path, dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return clean, nil
}

// insideResult is the nearest directory above path that holds
// ManifestFile (a result, or a run's temporary directory), or "".
func insideResult(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ManifestFile)); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// FileClaim is a single output file being written: a synced temporary
// file beside the path (".NAME.tmp-*") that Commit puts in place and that
// Discard, a failed Commit or Abandon (on a signal) removes.
type FileClaim struct {
	// Path is the cleaned output path.
	Path  string
	force bool
	f     *os.File
}

// files are the file claims this process holds, for Abandon (under
// claims' lock).
var files []*FileClaim

// CreateFile checks path (CheckFile) and opens the temporary file the
// output is written to.
func CreateFile(path string, force bool) (*FileClaim, error) {
	clean, err := CheckFile(path, force)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(clean), "."+filepath.Base(clean)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", path, err)
	}
	c := &FileClaim{Path: clean, force: force, f: f}
	claims.Lock()
	files = append(files, c)
	claims.Unlock()
	return c, nil
}

// Write writes p to the temporary file; after Abandon it fails.
func (c *FileClaim) Write(p []byte) (int, error) {
	claims.Lock()
	f := c.f
	claims.Unlock()
	if f == nil {
		return 0, fmt.Errorf("output %s: interrupted", c.Path)
	}
	return f.Write(p)
}

// Commit syncs the temporary file and puts it in place: with force in one
// rename, over an earlier file; without, as a hard link, which fails if
// the name appeared since the check (the error says so). The file is
// checked again first (a symbolic link or a directory put there meanwhile
// is never replaced). On any failure the temporary file is removed.
func (c *FileClaim) Commit() error {
	claims.Lock()
	defer claims.Unlock()
	f := c.f
	if f == nil {
		return fmt.Errorf("output %s: interrupted", c.Path)
	}
	defer c.discard()
	err := f.Sync()
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", c.Path, err)
	}
	if fi, err := os.Lstat(c.Path); err == nil && (!fi.Mode().IsRegular() || !c.force) {
		if !c.force && fi.Mode().IsRegular() {
			return fmt.Errorf("output %s was created by another program while this one ran: not written (use --force to replace it)", c.Path)
		}
		return fmt.Errorf("output %s changed while this run ran (it is no regular file now): not written", c.Path)
	}
	if c.force {
		err = os.Rename(f.Name(), c.Path)
	} else {
		err = os.Link(f.Name(), c.Path)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("output %s was created by another program while this one ran: not written (use --force to replace it)", c.Path)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", c.Path, err)
	}
	return nil
}

// Discard removes the temporary file; the output path is left as it was.
// It may be called more than once, and after Commit.
func (c *FileClaim) Discard() {
	if c == nil {
		return
	}
	claims.Lock()
	defer claims.Unlock()
	c.discard()
}

// discard is Discard with claims locked.
func (c *FileClaim) discard() {
	if c.f != nil {
		c.f.Close()
		os.Remove(c.f.Name())
		c.f = nil
	}
	files = slices.DeleteFunc(files, func(x *FileClaim) bool { return x == c })
}

// WriteFile writes data to path by the rules of CreateFile and Commit.
func WriteFile(path string, data []byte, force bool) error {
	c, err := CreateFile(path, force)
	if err != nil {
		return err
	}
	if _, err := c.Write(data); err != nil {
		c.Discard()
		return fmt.Errorf("write %s: %w", c.Path, err)
	}
	return c.Commit()
}
