package ptyhost

import (
	"errors"
	"os"
)

// On Windows every role's processes are in a job object with
// KILL_ON_JOB_CLOSE: when the supervisor dies, however it dies, the kernel
// closes the job handle and ends them. A leftover can only be a process that
// was started before that guarantee held, so it is killed only while it still
// runs as the same process.
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

// BecomeSubreaper is Linux-only; on Windows the job object keeps every
// descendant of a role under the supervisor's control.
func BecomeSubreaper() error { return errors.New("ptyhost: subreaper is Linux-only") }

// NotifyChildExit does nothing here: no process is ever adopted.
func NotifyChildExit(chan<- os.Signal) {}

// StopNotify does nothing here.
func StopNotify(chan<- os.Signal) {}

// Adopted returns nothing on Windows, where no process is re-parented.
func Adopted(map[int]bool) []int { return nil }

// AdoptedQuick is Adopted.
func AdoptedQuick(known map[int]bool) []int { return Adopted(known) }

// ReapAdopted does nothing on Windows.
func ReapAdopted([]int) {}

// SignalAdopted does nothing on Windows.
func SignalAdopted([]int, bool) {}
