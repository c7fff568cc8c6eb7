package atomicfile

import (
	"errors"
	"syscall"
)

// Windows error codes a rename gets when a file is open elsewhere.
const (
	errSharingViolation syscall.Errno = 32 // ERROR_SHARING_VIOLATION: renaming an open file
	errLockViolation    syscall.Errno = 33 // ERROR_LOCK_VIOLATION
)

// FileInUse reports whether a rename failed because another process has
// the source or the destination open: replacing an open file is "access
// denied", renaming one is a sharing violation.
func FileInUse(err error) bool {
	return errors.Is(err, syscall.ERROR_ACCESS_DENIED) || errors.Is(err, errSharingViolation) || errors.Is(err, errLockViolation)
}

// syncDir does nothing: Windows cannot open a folder for syncing, and NTFS
// journals the rename itself.
func syncDir(string) error { return nil }
