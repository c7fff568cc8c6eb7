//go:build !windows

package queue

import (
	"os"
	"syscall"
)

// openNoFollow opens a queue file for reading without following a symbolic
// link in its last component (a link swapped in after the check fails
// instead of being read through) and without blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
