//go:build !windows

package control

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownedPrivately says what is wrong when fi is not owned by the running user
// or can be entered by others.
func ownedPrivately(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("has no owner information")
	}
	if me := os.Geteuid(); int(st.Uid) != me {
		return fmt.Errorf("is owned by user %d, not by you (user %d)", st.Uid, me)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("is open to other users (mode %04o)", perm)
	}
	return nil
}
