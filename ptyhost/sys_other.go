//go:build !linux && !windows

package ptyhost

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// setDeathSignal does nothing: Pdeathsig is Linux-only. The pid ledger cleans
// up after a supervisor killed with -9 on these systems.
func setDeathSignal(*syscall.SysProcAttr) {}

// identity on BSD-like systems is the process group's existence plus the pid:
// without /proc the start time is not portable to read, so KillTree is only
// ever applied to a process group that still exists.
func identity(pid int) (string, error) {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return "", ErrNoProcess
	}
	return fmt.Sprintf("pid:%d", pid), nil
}

func killLeftovers(pid int, ident string) (bool, error) {
	if id, err := identity(pid); err != nil || id != ident {
		return false, nil
	}
	return true, killTree(pid)
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
