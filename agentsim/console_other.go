//go:build !windows

package agentsim

import (
	"io"
	"os"
)

// consoleFiles is needed on Windows only, where a process in a pseudo
// console may have no standard handles; a Unix process always has its
// terminal on the descriptors it was given.
func consoleFiles(in, out *os.File) (*os.File, *os.File) { return in, out }

// consoleOutput is out itself: Unix terminals always interpret escape
// sequences.
func consoleOutput(out *os.File) (io.Writer, func()) { return out, func() {} }
