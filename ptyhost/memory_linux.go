package ptyhost

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// procMem is what treeMemory needs of one process of /proc/PID/stat.
type procMem struct {
	ppid, sid int
	rss       uint64 // bytes
}

func treeMemory(procs []Process) ([]uint64, error) {
	out := make([]uint64, len(procs))
	roots := make(map[int]int, len(procs)) // root pid → index, of the trees without a cgroup
	for i, p := range procs {
		if cg := cgroupOf(p); cg != nil {
			out[i] = cg.current() // what its memory.max counts
		} else {
			roots[p.Pid()] = i
		}
	}
	if len(roots) == 0 {
		return out, nil
	}
	table, err := readProcTable()
	if err != nil {
		return nil, err
	}
	// owner memoizes which root's tree each pid is in (-1: none), so the
	// walk up the parents is done once per process whatever the depth.
	owner := make(map[int]int, len(table))
	var find func(pid, depth int) int
	find = func(pid, depth int) int {
		if i, ok := owner[pid]; ok {
			return i
		}
		p, ok := table[pid]
		i := -1
		switch {
		case !ok || depth > maxLineage:
		case rootOf(roots, pid) >= 0:
			i = rootOf(roots, pid)
		case rootOf(roots, p.sid) >= 0:
			i = rootOf(roots, p.sid)
		case p.ppid > 1:
			i = find(p.ppid, depth+1)
		}
		owner[pid] = i
		return i
	}
	for pid, p := range table {
		if i := find(pid, 0); i >= 0 {
			out[i] += p.rss
		}
	}
	return out, nil
}

// rootOf is the index of pid among roots, or -1.
func rootOf(roots map[int]int, pid int) int {
	if i, ok := roots[pid]; ok {
		return i
	}
	return -1
}

// readProcTable reads the parent, session and resident size of every
// process in /proc. A process that ends during the walk is left out.
func readProcTable() (map[int]procMem, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("ptyhost: list processes: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("ptyhost: list processes: %w", err)
	}
	page := uint64(os.Getpagesize())
	table := make(map[int]procMem, len(names))
	buf := make([]byte, 1024)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		b, ok := readSmall("/proc/"+name+"/stat", buf)
		if !ok {
			continue
		}
		ppid, sid, rss, ok := statMemory(b)
		if !ok {
			continue
		}
		table[pid] = procMem{ppid: ppid, sid: sid, rss: rss * page}
	}
	return table, nil
}

// statMemory reads the parent (field 4), session (field 6) and resident
// pages (field 24) of /proc/PID/stat without splitting the line into
// strings: the watch reads every process's every few seconds.
func statMemory(b []byte) (ppid, sid int, rss uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	field := 2 // the command name, which ends at i
	var n uint64
	in := false
	for _, c := range b[i+1:] {
		switch {
		case c == ' ' || c == '\n':
			if in {
				switch field {
				case 4:
					ppid = int(n)
				case 6:
					sid = int(n)
				case 24:
					return ppid, sid, n, true
				}
			}
			in, n = false, 0
		default:
			if !in {
				in = true
				field++
			}
			if c >= '0' && c <= '9' {
				n = n*10 + uint64(c-'0')
			}
		}
	}
	return 0, 0, 0, false
}

// readSmall reads a small file into buf, without the allocation of
// os.ReadFile: the watch reads one per process every few seconds.
func readSmall(path string, buf []byte) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	n, err := f.Read(buf)
	if err != nil || n == 0 {
		return nil, false
	}
	return buf[:n], true
}

// cgroupOf is the cgroup that holds p's tree, nil if none does.
func cgroupOf(p Process) *memoryCgroup {
	if u, ok := p.(*unixProcess); ok {
		return u.cgroup
	}
	return nil
}

// memoryLimited: a tree in a cgroup of its own is held under its
// memory.max by the kernel; any other, only by a watch of TreeMemory.
func memoryLimited(p Process) bool { return cgroupOf(p) != nil }

// memoryLimitReached: the kernel killed a process of the tree at its
// cgroup's memory.max (memory.events' oom_kill).
func memoryLimitReached(p Process) bool {
	cg := cgroupOf(p)
	return cg != nil && cg.oomKills() > 0
}
