//go:build unix

package experiment

import (
	"errors"
	"os"
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

// alive says whether process pid exists (EPERM: it does, another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
