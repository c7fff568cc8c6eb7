//go:build !linux && !windows && !darwin

package ptyhost

import (
	"errors"
	"fmt"
	"syscall"
)

// identity on other Unix systems is the pid alone: their process tables are
// not read here, so no start time tells a pid reuse apart. KillLeftovers
// therefore never acts on them (inspect leaves Exe unknown).
func identity(pid int) (string, error) {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return "", ErrNoProcess
	}
	return fmt.Sprintf("pid:%d", pid), nil
}

// inspect knows only that pid exists; without an executable no record ever
// matches it, so nothing is killed from the ledger on these systems.
func inspect(pid int) (ProcessInfo, error) {
	id, err := identity(pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	return ProcessInfo{Pid: pid, Identity: id, UID: -1}, nil
}
