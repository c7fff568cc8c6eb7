//go:build windows

package shoguntest

import "syscall"

// stillActive is the exit code Windows reports for a process that runs.
const stillActive = 259

// processQueryLimitedInformation is PROCESS_QUERY_LIMITED_INFORMATION,
// which syscall does not name.
const processQueryLimitedInformation = 0x1000

// Alive reports whether a process runs: it can be opened and has no exit
// code yet. A process that ended with exit code 259 counts as running,
// which no test here makes.
func Alive(pid int) bool {
	h, err := syscall.OpenProcess(processQueryLimitedInformation, false, uint32(pid))
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}
