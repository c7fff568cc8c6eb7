//go:build !linux && !windows

package ptyhost

import (
	"errors"
	"os"
	"syscall"
)

// setDeathSignal does nothing: Pdeathsig is Linux-only. On macOS the pid
// ledger cleans up after a supervisor killed with -9 (see killLeftovers); on
// the other BSDs nothing does, since no process there can be told apart from
// a later one reusing its pid.
func setDeathSignal(*syscall.SysProcAttr) {}

// killLeftovers kills the process group of a program left by a supervisor
// that died, only while its leader still runs as the recorded process: same
// start time, user and executable (inspect in sys_darwin.go). On the other
// BSDs inspect knows no executable, so no record matches and nothing is
// killed.
func killLeftovers(want ProcessInfo) (bool, error) {
	cur, err := inspect(want.Pid)
	if errors.Is(err, ErrNoProcess) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := want.Matches(cur); err != nil {
		return false, err
	}
	return true, killTree(want.Pid)
}

// BecomeSubreaper is not available outside Linux.
func BecomeSubreaper() error { return errors.New("ptyhost: subreaper is Linux-only") }

// NotifyChildExit does nothing here: no process is ever adopted.
func NotifyChildExit(chan<- os.Signal) {}

// StopNotify does nothing here.
func StopNotify(chan<- os.Signal) {}

// Adopted returns nothing outside Linux, where no process is adopted.
func Adopted(map[int]bool) []int { return nil }

// AdoptedQuick is Adopted.
func AdoptedQuick(known map[int]bool) []int { return Adopted(known) }

// ReapAdopted does nothing outside Linux.
func ReapAdopted([]int) {}

// SignalAdopted does nothing outside Linux.
func SignalAdopted([]int, bool) {}

// ioctlUnread asks a terminal how many bytes wait to be read: FIONREAD,
// _IOR('f', 127, int) on macOS and the BSDs (golang.org/x/sys names it
// nowhere).
const ioctlUnread = 0x4004667f
