package queue

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// openForWriting reports whether some process this user may look at has
// the file fi open for writing, from /proc/<pid>/fd and fdinfo. It is
// asked only about a report that does not parse, so its cost (a stat per
// open file of the user's processes) is paid rarely.
func openForWriting(fi os.FileInfo) bool {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		pid := p.Name()
		if pid == self || pid[0] < '0' || pid[0] > '9' {
			continue
		}
		fdDir := filepath.Join("/proc", pid, "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // gone, or another user's
		}
		for _, fd := range fds {
			target, err := os.Stat(filepath.Join(fdDir, fd.Name()))
			if err != nil || !os.SameFile(target, fi) {
				continue
			}
			if writable(filepath.Join("/proc", pid, "fdinfo", fd.Name())) {
				return true
			}
		}
	}
	return false
}

// writable reads an fdinfo file's flags: open for writing unless its
// access mode is O_RDONLY.
func writable(fdinfo string) bool {
	b, err := os.ReadFile(fdinfo)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&uint64(os.O_RDONLY|os.O_WRONLY|os.O_RDWR) != uint64(os.O_RDONLY)
		}
	}
	return false
}
