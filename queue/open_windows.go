//go:build windows

package queue

import "os"

// openNoFollow opens a queue file for reading. Windows has no O_NOFOLLOW;
// the caller checks with Lstat before and Stat after that it read a regular
// file.
func openNoFollow(path string) (*os.File, error) {
	return os.Open(path)
}
