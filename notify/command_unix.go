//go:build unix

package notify

import (
	"os/exec"
	"syscall"
)

// killTree makes cmd's cancellation kill the processes it started too
// (a shell's children): it runs in a process group of its own, and the
// whole group gets SIGKILL.
func killTree(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
