//go:build !linux

package main

import "os/exec"

// ownGroup is a no-op where the kernel offers no parent-death signal: the processes a
// test starts are killed by its cleanup only.
func ownGroup(*exec.Cmd) {}

// killGroup kills cmd.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
