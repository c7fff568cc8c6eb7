//go:build !windows

package supervisor

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownedByMe says what is wrong when a file of the workspace's runtime state
// could have been written by someone other than the running user: owned by
// another user, or writable by group or others. It returns nil otherwise.
func ownedByMe(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("has no owner information")
	}
	if me := os.Geteuid(); int(st.Uid) != me {
		return fmt.Errorf("is owned by user %d, not by this supervisor's user %d", st.Uid, me)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("is writable by other users (mode %04o)", perm)
	}
	return nil
}
