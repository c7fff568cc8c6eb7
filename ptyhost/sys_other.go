//go:build !linux && !windows

package ptyhost

import (
	"errors"
	"os"
	"syscall"
)

// setDeathSignal does nothing: Pdeathsig is Linux-only. The pid ledger cleans
// up after a supervisor killed with -9 on these systems.
func setDeathSignal(*syscall.SysProcAttr) {}

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

// ReapAdopted does nothing outside Linux.
func ReapAdopted([]int) {}

// SignalAdopted does nothing outside Linux.
func SignalAdopted([]int, bool) {}
