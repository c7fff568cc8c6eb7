//go:build !windows

package agentsim

import "os"

// enableVT is needed on Windows only: Unix terminals always interpret escape
// sequences.
func enableVT(*os.File) (restore func()) { return func() {} }
