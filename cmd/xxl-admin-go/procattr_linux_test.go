//go:build linux

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup puts cmd in a process group of its own that the kernel kills with SIGKILL
// when the test binary dies (go test's -timeout, a crash): no admin or executor a
// test started outlives it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills cmd's process group (cmd and whatever it started).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}
