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
	table, err := readProcTable()
	if err != nil {
		return nil, err
	}
	roots := make(map[int]int, len(procs)) // root pid → index
	for i, p := range procs {
		roots[p.Pid()] = i
	}
	out := make([]uint64, len(procs))
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

// memoryLimited is false: on Linux a watch of TreeMemory bounds a tree.
func memoryLimited(Process) bool { return false }

// memoryLimitReached is false: nothing refuses a tree memory on Linux.
func memoryLimitReached(Process) bool { return false }
