package ptyhost

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// cgroupRoot is where cgroup v2 is mounted on a systemd system.
const cgroupRoot = "/sys/fs/cgroup"

// intoCgroup makes the child start in the cgroup open at fd (clone3's
// CLONE_INTO_CGROUP, Linux 5.7 and later): its whole tree is in it from
// its first instruction, none of it forked outside before a move.
func intoCgroup(a *syscall.SysProcAttr, fd int) {
	a.UseCgroupFD = true
	a.CgroupFD = fd
}

func delegatedCgroup() (string, error) {
	return delegatedCgroupIn(cgroupRoot, "/proc/self/cgroup")
}

// delegatedCgroupIn is delegatedCgroup with the mount point and the
// process's cgroup file given, for tests.
func delegatedCgroupIn(root, self string) (string, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		return "", fmt.Errorf("no cgroup v2 hierarchy at %s (cgroup v1 or hybrid)", root)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		return "", fmt.Errorf("read own cgroup: %w", err)
	}
	rel := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return "", fmt.Errorf("%s names no cgroup v2 path", self)
	}
	dir := filepath.Join(root, filepath.Clean("/"+rel))
	ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return "", fmt.Errorf("own cgroup %s: %w", dir, err)
	}
	if !slices.Contains(strings.Fields(string(ctl)), "memory") {
		return "", fmt.Errorf("own cgroup %s has no memory controller", dir)
	}
	for _, f := range []string{"", "cgroup.subtree_control", "cgroup.procs"} {
		if err := unix.Access(filepath.Join(dir, f), unix.W_OK); err != nil {
			return "", fmt.Errorf("own cgroup %s is not delegated to this user (%s not writable)", dir, filepath.Join(dir, f))
		}
	}
	return dir, nil
}
