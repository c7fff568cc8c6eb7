//go:build !unix

package usage

import "os"

// openRecords opens a record file for reading. (Windows has no FIFOs in a
// folder; the caller checks that what it opened is a regular file.)
func openRecords(path string) (*os.File, error) {
	return os.Open(path)
}
