package ptyhost

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MemoryCgroups is a cgroup v2 delegated to the supervisor's user, in
// which each session started with it (Command.Cgroups) and a MemoryMax
// gets a cgroup of its own: the kernel holds the session's whole tree
// under memory.max, TreeMemory reads memory.current, MemoryLimitReached
// reads the oom_kill count of memory.events, and the cgroup is removed when
// the session is closed. A session whose cgroup cannot be made runs
// without one, watched as on any Linux system, and Err says why; no later
// session tries. Linux only: elsewhere OpenMemoryCgroups says why not.
type MemoryCgroups struct {
	dir string // the delegated cgroup whose children the sessions' are
	// rmdir removes a session's cgroup: os.Remove on cgroupfs, where a
	// cgroup's files go with it; a test's stand-in folder needs
	// os.RemoveAll.
	rmdir func(string) error

	mu     sync.Mutex
	failed error
}

// OpenMemoryCgroups readies the calling process's delegated cgroup v2
// (see DelegatedCgroup) to hold its sessions' cgroups: a cgroup with
// processes in it cannot enable a controller for its children (the "no
// internal processes" rule), so the process first moves itself into a
// child cgroup, "supervisor", then enables +memory in
// cgroup.subtree_control. It refuses a cgroup other processes share (a
// login session's), changing nothing; run the supervisor in a scope of its
// own (`systemd-run --user --scope -p Delegate=yes shogun start`).
func OpenMemoryCgroups() (*MemoryCgroups, error) {
	dir, err := delegatedCgroup()
	if err != nil {
		return nil, fmt.Errorf("ptyhost: open memory cgroups: %w", err)
	}
	m, err := openMemoryCgroupsIn(dir, os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("ptyhost: open memory cgroups: %w", err)
	}
	return m, nil
}

// Dir is the delegated cgroup's folder.
func (m *MemoryCgroups) Dir() string { return m.dir }

// Err says why a session could not have its cgroup, after which none
// does; nil while they all have.
func (m *MemoryCgroups) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed
}

// fail records why a session ran without its cgroup; the first reason is
// kept.
func (m *MemoryCgroups) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failed == nil {
		m.failed = err
	}
}

// sessionPrefix begins the name of every session's cgroup.
const sessionPrefix = "session-"

// openMemoryCgroupsIn is OpenMemoryCgroups for the delegated cgroup dir
// and the process pid; a test passes a folder standing in for cgroupfs.
func openMemoryCgroupsIn(dir string, pid int) (*MemoryCgroups, error) {
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	self := strconv.Itoa(pid)
	for _, p := range strings.Fields(string(procs)) {
		if p != self {
			return nil, fmt.Errorf("cgroup %s holds other processes than this one (pid %s): it cannot bound its children's memory without moving them (the no internal processes rule); start shogun in a scope of its own", dir, p)
		}
	}
	leaf := filepath.Join(dir, "supervisor")
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("make cgroup %s: %w", leaf, err)
	}
	if err := writeCgroup(filepath.Join(leaf, "cgroup.procs"), self); err != nil {
		return nil, fmt.Errorf("move into cgroup %s: %w", leaf, err)
	}
	if err := writeCgroup(filepath.Join(dir, "cgroup.subtree_control"), "+memory"); err != nil {
		// Back where it was: nothing changed.
		_ = writeCgroup(filepath.Join(dir, "cgroup.procs"), self)
		return nil, fmt.Errorf("enable the memory controller for the children of %s: %w", dir, err)
	}
	// The sessions' cgroups a previous supervisor left (killed before it
	// could remove them): an empty one is removed, one still in use stays.
	if old, _ := filepath.Glob(filepath.Join(dir, sessionPrefix+"*")); len(old) > 0 {
		for _, o := range old {
			_ = os.Remove(o)
		}
	}
	return &MemoryCgroups{dir: dir, rmdir: os.Remove}, nil
}

// memoryCgroup is one session's cgroup.
type memoryCgroup struct {
	dir   string
	rmdir func(string) error // MemoryCgroups.rmdir
}

// session makes a cgroup for a session whose tree may hold max bytes; nil
// when m is nil, max is 0 or an earlier session could not have one.
func (m *MemoryCgroups) session(max uint64) (*memoryCgroup, error) {
	if m == nil || max == 0 || m.Err() != nil {
		return nil, nil
	}
	dir, err := os.MkdirTemp(m.dir, sessionPrefix)
	if err != nil {
		return nil, fmt.Errorf("make a session's cgroup in %s: %w", m.dir, err)
	}
	cg := &memoryCgroup{dir: dir, rmdir: m.rmdir}
	if err := writeCgroup(filepath.Join(dir, "memory.max"), strconv.FormatUint(max, 10)); err != nil {
		_ = cg.remove()
		return nil, fmt.Errorf("set memory.max of %s: %w", dir, err)
	}
	return cg, nil
}

// current is what the session's tree holds (memory.current): 0 once the
// cgroup is gone.
func (c *memoryCgroup) current() uint64 {
	b, err := os.ReadFile(filepath.Join(c.dir, "memory.current"))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// oomKills is how many processes of the tree the kernel killed at
// memory.max (memory.events' oom_kill): 0 once the cgroup is gone.
func (c *memoryCgroup) oomKills() uint64 {
	b, err := os.ReadFile(filepath.Join(c.dir, "memory.events"))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "oom_kill "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove ends whatever the tree left in the cgroup (cgroup.kill, Linux
// 5.14 and later; a process that left the tree's session is still in its
// cgroup) and removes it, waiting up to a second for the killed processes
// to go.
func (c *memoryCgroup) remove() error {
	if f, err := os.OpenFile(filepath.Join(c.dir, "cgroup.kill"), os.O_WRONLY, 0); err == nil {
		_, _ = f.WriteString("1")
		_ = f.Close()
	}
	var err error
	for range 50 {
		if err = c.rmdir(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup %s: %w", c.dir, err)
}

// writeCgroup writes one value to a cgroup's file, as `echo v > file`.
func writeCgroup(path, v string) error {
	return os.WriteFile(path, []byte(v), 0o644)
}
