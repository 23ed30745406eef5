//go:build unix

package outdir

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// noFollow makes opening a symbolic link fail.
const noFollow = syscall.O_NOFOLLOW

// tryLock takes an exclusive flock on f without waiting: false when
// another process holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// alive says whether process pid exists (EPERM: it does, another user's)
// and, where /proc says so, is not a zombie (a killed process its parent
// has not reaped yet).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// "pid (comm) state ...": comm may hold spaces and parentheses.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
		return false
	}
	return true
}
