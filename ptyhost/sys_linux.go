package ptyhost

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// setDeathSignal makes the kernel kill the child when the supervisor dies,
// even by SIGKILL, so no agent outlives it.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// identity is the process start time in clock ticks since boot, field 22 of
// /proc/PID/stat: stable for the life of a process, different for a pid reuse.
func identity(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", ErrNoProcess
		}
		return "", fmt.Errorf("ptyhost: read /proc/%d/stat: %w", pid, err)
	}
	f, err := statFields(b)
	if err != nil {
		return "", fmt.Errorf("ptyhost: /proc/%d/stat: %w", pid, err)
	}
	return "linux-start:" + f[19], nil
}

// statFields returns the fields of /proc/PID/stat after the command name
// (which may hold spaces and parentheses), starting with the state (field 3).
func statFields(b []byte) ([]string, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, errors.New("no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return nil, errors.New("too few fields")
	}
	return f, nil
}

// inspect reads the process's start time from /proc/PID/stat, its user from
// the owner of /proc/PID and its program from /proc/PID/exe (unreadable for
// another user's process unless the supervisor runs as root: Exe stays "").
func inspect(pid int) (ProcessInfo, error) {
	id, err := identity(pid)
	if err != nil {
		return ProcessInfo{}, err
	}
	info := ProcessInfo{Pid: pid, Identity: id, UID: -1}
	dir := "/proc/" + strconv.Itoa(pid)
	fi, err := os.Stat(dir)
	if err != nil {
		return ProcessInfo{}, ErrNoProcess
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		info.UID = int(st.Uid)
	}
	if exe, err := os.Readlink(dir + "/exe"); err == nil {
		// A program replaced on disk while it runs (an update) reads
		// "path (deleted)"; it is still the program that was started.
		info.Exe = strings.TrimSuffix(exe, " (deleted)")
	}
	// A pid reused between the two reads would show another start time.
	if again, err := identity(pid); err != nil || again != id {
		return ProcessInfo{}, ErrNoProcess
	}
	return info, nil
}

func killLeftovers(want ProcessInfo) (bool, error) {
	start, err := strconv.ParseUint(strings.TrimPrefix(want.Identity, "linux-start:"), 10, 64)
	if err != nil || !strings.HasPrefix(want.Identity, "linux-start:") {
		return false, fmt.Errorf("%w: identity %q is not from this system", ErrOtherProcess, want.Identity)
	}
	if want.UID < 0 {
		return false, fmt.Errorf("%w: pid %d has no recorded user", ErrOtherProcess, want.Pid)
	}
	// While a process holds the pid it must be the recorded one: after a
	// reuse, the group led by that pid belongs to a stranger.
	cur, err := inspect(want.Pid)
	switch {
	case errors.Is(err, ErrNoProcess):
	case err != nil:
		return false, err
	case cur.Identity == want.Identity && zombie(want.Pid):
		// The recorded program itself, dead but not yet reaped by its
		// new parent: it shows no executable any more.
	default:
		if err := want.Matches(cur); err != nil {
			return false, err
		}
	}
	// The leader is the recorded program or gone (Pdeathsig took it). Linux
	// does not reuse a pid while a process group or session of that id
	// exists, so members of both that run as the recorded user and started
	// after the leader are what is left of its tree.
	var members []int
	err = eachProcess(func(pid int, f []string) {
		pgrp, _ := strconv.Atoi(f[2])
		sid, _ := strconv.Atoi(f[3])
		started, _ := strconv.ParseUint(f[19], 10, 64)
		if pgrp != want.Pid || sid != want.Pid || started < start {
			return
		}
		fi, err := os.Stat("/proc/" + strconv.Itoa(pid))
		if err != nil {
			return
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == want.UID {
			members = append(members, pid)
		}
	})
	if err != nil {
		return false, err
	}
	var errs []error
	for _, p := range members {
		if err := syscall.Kill(p, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d: %w", p, err))
		}
	}
	return len(members) > 0, errors.Join(errs...)
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f, err := statFields(b)
	return err == nil && (f[0] == "Z" || f[0] == "X")
}

// BecomeSubreaper makes the calling process a child subreaper: descendants
// that daemonize out of an agent's process group (the Codex CLI's app-server
// does) are re-parented to the supervisor instead of init, so it can reap and
// stop them. It returns an error where the kernel does not support it.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("ptyhost: PR_SET_CHILD_SUBREAPER: %w", err)
	}
	return nil
}

// NotifyChildExit makes c receive a value whenever a child of the supervisor
// exits (SIGCHLD), so adopted processes can be reaped without polling.
func NotifyChildExit(c chan<- os.Signal) { signal.Notify(c, syscall.SIGCHLD) }

// StopNotify undoes NotifyChildExit.
func StopNotify(c chan<- os.Signal) { signal.Stop(c) }

// Adopted lists the pids of the calling process's children that are not in
// known: processes re-parented to a subreaper, zombies among them.
func Adopted(known map[int]bool) []int {
	self := os.Getpid()
	var out []int
	_ = eachProcess(func(pid int, f []string) {
		if ppid, _ := strconv.Atoi(f[1]); ppid == self && !known[pid] {
			out = append(out, pid)
		}
	})
	return out
}

// AdoptedQuick is Adopted read from the children lists of the calling
// process's own threads (/proc/self/task/*/children): a few reads, where
// Adopted reads the stat of every process on the machine, at each child's
// exit (each sleep of a role). The lists may miss a child forked or
// re-parented while they are read, so it serves a look that is repeated
// (reaping at each exit and every minute), not the last look before
// shogun ends. Without the lists (a kernel built without them) it is
// Adopted.
func AdoptedQuick(known map[int]bool) []int {
	self := strconv.Itoa(os.Getpid())
	if _, err := os.Stat("/proc/self/task/" + self + "/children"); err != nil {
		return Adopted(known)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return Adopted(known)
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue // the thread ended: its children moved to another
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !known[pid] {
				out = append(out, pid)
			}
		}
	}
	return out
}

// eachProcess calls fn with every process's pid and its /proc/PID/stat
// fields from the state on (see statFields). Processes that end meanwhile
// are skipped.
func eachProcess(fn func(pid int, fields []string)) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return fmt.Errorf("ptyhost: list processes: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if f, err := statFields(b); err == nil {
			fn(pid, f)
		}
	}
	return nil
}

// ReapAdopted collects the exit status of adopted children that have exited,
// so they do not linger as zombies. Only pids from Adopted are waited for,
// never a child that os/exec is waiting for.
func ReapAdopted(pids []int) {
	for _, pid := range pids {
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
	}
}

// SignalAdopted sends sig to each adopted pid (and its process group, when it
// leads one). kill selects SIGKILL instead of SIGTERM.
func SignalAdopted(pids []int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
			_ = syscall.Kill(-pid, sig)
		}
	}
}

// ioctlUnread asks a terminal how many bytes wait to be read (FIONREAD).
const ioctlUnread = unix.TIOCINQ
