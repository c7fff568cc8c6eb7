//go:build !unix

package notify

import "os/exec"

// killTree leaves cmd's cancellation as it is: the command's own process
// is killed (exec.CommandContext); what it started is left to WaitDelay.
func killTree(cmd *exec.Cmd) {}
