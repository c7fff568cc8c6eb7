package ptyhost

import (
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// lineage is pid and its ancestors up to launchd or the calling process,
// from the kernel's process table (the parent) and getsid (the session).
func lineage(pid int) ([]procLink, error) { return walkLineage(pid, maxLineage) }

// walkLineage is lineage, at most limit processes long.
func walkLineage(pid, limit int) ([]procLink, error) {
	self := os.Getpid()
	var out []procLink
	for len(out) < limit && pid > 1 {
		k, err := kinfo(pid)
		if err != nil {
			if len(out) == 0 {
				return nil, fmt.Errorf("read process %d: %w", pid, err)
			}
			break
		}
		sid, err := unix.Getsid(pid)
		if err != nil {
			sid = -1
		}
		ppid := int(k.Eproc.Ppid)
		out = append(out, procLink{pid: pid, ppid: ppid, sid: sid})
		if pid == self {
			break
		}
		pid = ppid
	}
	if len(out) == limit && pid > 1 && out[len(out)-1].pid != self {
		// Fail closed: a chain this deep is built to hide where it comes
		// from, and what the walk did not see may be a role's.
		return nil, fmt.Errorf("process %d: %w", out[0].pid, ErrTooDeep)
	}
	return out, nil
}

// leftBehind is false: macOS has no child subreaper, so an orphan goes to
// launchd; its session still names its role unless it called setsid.
func leftBehind(int) (bool, error) { return false, nil }

func loopbackOwners(netip.Addr, uint16, netip.Addr, uint16) ([]int, error) {
	return nil, ErrNoProcessTree
}

func environ(int) ([]string, error) { return nil, ErrNoProcessTree }
