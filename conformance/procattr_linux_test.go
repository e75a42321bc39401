//go:build linux

package conformance

import (
	"os/exec"
	"syscall"
)

// dieWithTest has the kernel kill cmd with SIGKILL when the test binary dies (go
// test's -timeout, a crash), so no admin or executor the suite started outlives it.
func dieWithTest(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
