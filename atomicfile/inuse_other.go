//go:build !windows

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// FileInUse is false: Unix renames over and of open files.
func FileInUse(error) bool { return false }

// syncDir makes the rename durable: the folder's entry is what a crash
// would otherwise lose. File systems that cannot sync a folder say EINVAL.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}
