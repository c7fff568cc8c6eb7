//go:build !windows

package supervisor

import (
	"io"
	"os"
)

// dumpableEnv runs the test binary as a stand-in supervisor: it holds a
// secret in its environment, forbids inspection when the value is
// "forbid", says "ready" and waits for its stdin to close.
const dumpableEnv = "SHOGUN_TEST_DUMPABLE"

func runDumpable(mode string) int {
	if mode == "forbid" {
		if err := ForbidInspection(); err != nil {
			return 2
		}
	}
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}
