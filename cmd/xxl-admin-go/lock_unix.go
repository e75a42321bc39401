//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// lockFile takes an exclusive flock on path (created when missing) for as long as the
// process runs or until release. The kernel drops the lock when the process dies, so
// a crash leaves no stale lock behind. The file holds the owner's pid, for the message
// a second process gets.
func lockFile(path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		owner, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedError(path, strings.TrimSpace(string(owner)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() { f.Close() }, nil
}
