//go:build windows

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile opens path (created when missing) without sharing, which Windows refuses
// to a second opener until the handle is closed or the process ends.
func lockFile(path string) (release func(), err error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil, syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		const errorSharingViolation = syscall.Errno(32)
		if errors.Is(err, errorSharingViolation) {
			return nil, lockedError(path, "")
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(h), path)
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() { f.Close() }, nil
}
