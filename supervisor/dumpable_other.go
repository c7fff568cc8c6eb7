//go:build !linux

package supervisor

// ForbidInspection does nothing here: the guard (PR_SET_DUMPABLE) is
// Linux's. On macOS and Windows a process of the same user may still read
// the supervisor's environment.
func ForbidInspection() error { return nil }
