//go:build unix

package usage

import (
	"os"
	"syscall"
)

// openRecords opens a record file for reading without following a link
// and without blocking: a FIFO put (or linked) in the CLI's folder by an
// agent would otherwise hold the supervisor's reader forever. The caller
// still checks that what it opened is a regular file.
func openRecords(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
}
