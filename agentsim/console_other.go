//go:build !windows

package agentsim

import "os"

// consoleFiles is needed on Windows only, where a process in a pseudo
// console may have no standard handles; a Unix process always has its
// terminal on the descriptors it was given.
func consoleFiles(in, out *os.File) (*os.File, *os.File) { return in, out }

// enableVT is needed on Windows only: Unix terminals always interpret escape
// sequences.
func enableVT(*os.File) (restore func()) { return func() {} }
