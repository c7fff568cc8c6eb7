package supervisor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ForbidInspection makes this process not dumpable (PR_SET_DUMPABLE 0):
// its /proc/<pid> entries become root's, so a process of the same user (a
// role's agent) can neither read its environment (/proc/<pid>/environ,
// where every account's key is), memory or file descriptors, nor ptrace
// it. Root still can. The programs it starts are dumpable again once they
// exec, and /proc/<pid>/stat, which `shogun status` and the lock read,
// stays readable.
func ForbidInspection() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the supervisor not dumpable: %w", err)
	}
	return nil
}
