package ptyhost

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// identity is the process start time from the kernel's process table: stable
// for the life of a process, different for a later process reusing the pid.
func identity(pid int) (string, error) {
	k, err := kinfo(pid)
	if err != nil {
		return "", err
	}
	st := k.Proc.P_starttime
	return fmt.Sprintf("darwin-start:%d.%06d", st.Sec, st.Usec), nil
}

// inspect reads the start time and the effective user from the process
// table, and the program from kern.procargs2 (refused for another user's
// process: Exe stays "").
func inspect(pid int) (ProcessInfo, error) {
	k, err := kinfo(pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	st := k.Proc.P_starttime
	info := ProcessInfo{Pid: pid, Identity: fmt.Sprintf("darwin-start:%d.%06d", st.Sec, st.Usec), UID: int(k.Eproc.Ucred.Uid)}
	if b, err := unix.SysctlRaw("kern.procargs2", pid); err == nil && len(b) > 4 {
		// argc (4 bytes), then the executable's path, NUL-terminated.
		path := b[4:]
		for i, c := range path {
			if c == 0 {
				path = path[:i]
				break
			}
		}
		info.Exe = string(path)
	}
	return info, nil
}

func kinfo(pid int) (*unix.KinfoProc, error) {
	if pid <= 0 {
		return nil, ErrNoProcess
	}
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		// No such process: the kernel returns no entry (EIO here) or ESRCH.
		if errors.Is(err, unix.EIO) || errors.Is(err, syscall.ESRCH) {
			return nil, ErrNoProcess
		}
		return nil, fmt.Errorf("ptyhost: process %d: %w", pid, err)
	}
	if int(k.Proc.P_pid) != pid {
		return nil, ErrNoProcess
	}
	return k, nil
}
