package ptyhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cgroup v2 folder of the user's own, with the memory controller, is
// delegated; a v1 machine, a cgroup without memory, or one the user cannot
// write is not, and the reason says which.
func TestDelegatedCgroupIsTold(t *testing.T) {
	root := t.TempDir()
	own := filepath.Join(root, "user.slice", "user-1000.slice", "user@1000.service", "app.slice", "shogun.scope")
	self := filepath.Join(t.TempDir(), "cgroup")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(self, "0::/user.slice/user-1000.slice/user@1000.service/app.slice/shogun.scope\n")
	if _, err := delegatedCgroupIn(root, self); err == nil || !strings.Contains(err.Error(), "no cgroup v2") {
		t.Errorf("without cgroup v2: %v", err)
	}
	write(filepath.Join(root, "cgroup.controllers"), "cpu io memory pids\n")
	write(filepath.Join(own, "cgroup.controllers"), "cpu pids\n")
	write(filepath.Join(own, "cgroup.subtree_control"), "")
	write(filepath.Join(own, "cgroup.procs"), "")
	if _, err := delegatedCgroupIn(root, self); err == nil || !strings.Contains(err.Error(), "no memory controller") {
		t.Errorf("without the memory controller: %v", err)
	}
	write(filepath.Join(own, "cgroup.controllers"), "cpu memory pids\n")
	if dir, err := delegatedCgroupIn(root, self); err != nil || dir != own {
		t.Errorf("delegated: %q, %v; want %s", dir, err, own)
	}
	if os.Geteuid() != 0 { // root writes whatever the mode says
		if err := os.Chmod(filepath.Join(own, "cgroup.procs"), 0o444); err != nil {
			t.Fatal(err)
		}
		if _, err := delegatedCgroupIn(root, self); err == nil || !strings.Contains(err.Error(), "not delegated") {
			t.Errorf("read-only cgroup.procs: %v", err)
		}
	}
	// This machine, as it is: whatever it says, it says why.
	dir, err := DelegatedCgroup()
	t.Logf("this machine: cgroup %q, %v", dir, err)
}

// fakeCgroupfs is a folder standing in for a delegated cgroup v2: its
// cgroup.procs holds procs, its cgroup.subtree_control is empty.
func fakeCgroupfs(t *testing.T, procs string) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{"cgroup.procs": procs, "cgroup.subtree_control": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The supervisor, alone in its delegated cgroup, moves itself into a leaf
// "supervisor" before it enables the memory controller for the children
// (a cgroup with processes of its own cannot), and removes the empty
// session cgroups a killed supervisor left. In a cgroup other processes
// share it changes nothing and says why.
func TestMemoryCgroupsMoveTheSupervisorIntoALeafFirst(t *testing.T) {
	dir := fakeCgroupfs(t, "4242\n")
	if err := os.Mkdir(filepath.Join(dir, sessionPrefix+"left"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := openMemoryCgroupsIn(dir, 4242)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dir() != dir {
		t.Errorf("Dir %q, want %q", m.Dir(), dir)
	}
	if got := readFile(t, filepath.Join(dir, "supervisor", "cgroup.procs")); got != "4242" {
		t.Errorf("the leaf's cgroup.procs: %q, want the supervisor's pid", got)
	}
	if got := readFile(t, filepath.Join(dir, "cgroup.subtree_control")); got != "+memory" {
		t.Errorf("cgroup.subtree_control: %q, want +memory", got)
	}
	if _, err := os.Stat(filepath.Join(dir, sessionPrefix+"left")); !os.IsNotExist(err) {
		t.Errorf("the leftover session cgroup is still there: %v", err)
	}

	shared := fakeCgroupfs(t, "4242\n977\n")
	if _, err := openMemoryCgroupsIn(shared, 4242); err == nil || !strings.Contains(err.Error(), "other processes") {
		t.Errorf("a cgroup shared with pid 977: %v", err)
	}
	if _, err := os.Stat(filepath.Join(shared, "supervisor")); !os.IsNotExist(err) {
		t.Errorf("a leaf was made in a shared cgroup: %v", err)
	}
	if got := readFile(t, filepath.Join(shared, "cgroup.subtree_control")); got != "" {
		t.Errorf("the shared cgroup's subtree_control was changed: %q", got)
	}
}

// A session's cgroup gets its memory.max; what the kernel says of it
// (memory.current, memory.events' oom_kill) is what the tree's memory and
// its limit being reached read; removing it kills what is left
// (cgroup.kill) and removes the folder.
func TestASessionsCgroupIsReadAndRemoved(t *testing.T) {
	m := &MemoryCgroups{dir: t.TempDir()}
	if cg, err := m.session(0); cg != nil || err != nil {
		t.Errorf("a session without memory_max got a cgroup: %v, %v", cg, err)
	}
	killed := ""
	m.rmdir = func(dir string) error {
		killed = readFile(t, filepath.Join(dir, "cgroup.kill"))
		return os.RemoveAll(dir)
	}
	cg, err := m.session(2 << 30)
	if err != nil || cg == nil {
		t.Fatalf("session: %v, %v", cg, err)
	}
	if filepath.Dir(cg.dir) != m.dir || !strings.HasPrefix(filepath.Base(cg.dir), sessionPrefix) {
		t.Errorf("the session's cgroup %s is not a session- child of %s", cg.dir, m.dir)
	}
	if got := readFile(t, filepath.Join(cg.dir, "memory.max")); got != "2147483648" {
		t.Errorf("memory.max: %q, want 2147483648", got)
	}
	p := &unixProcess{cgroup: cg}
	if !memoryLimited(p) || memoryLimitReached(p) {
		t.Errorf("a tree in its cgroup: limited %v, reached %v; want true, false", memoryLimited(p), memoryLimitReached(p))
	}
	for name, v := range map[string]string{
		"memory.current": "1234567\n",
		"memory.events":  "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
		"cgroup.kill":    "",
	} {
		if err := os.WriteFile(filepath.Join(cg.dir, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem, err := treeMemory([]Process{p})
	if err != nil || mem[0] != 1234567 {
		t.Errorf("the tree's memory: %v, %v; want memory.current, 1234567", mem, err)
	}
	if !memoryLimitReached(p) {
		t.Error("an oom_kill in memory.events does not read as the limit reached")
	}
	if err := cg.remove(); err != nil {
		t.Fatal(err)
	}
	if killed != "1" {
		t.Errorf("cgroup.kill held %q at the removal, want 1", killed)
	}
	if _, err := os.Stat(cg.dir); !os.IsNotExist(err) {
		t.Errorf("the session's cgroup is still there: %v", err)
	}
	if mem, _ := treeMemory([]Process{p}); mem[0] != 0 || memoryLimitReached(p) {
		t.Errorf("a removed cgroup reads %d bytes, reached %v; want 0, false", mem[0], memoryLimitReached(p))
	}
}

// Where the kernel will not start a program in its cgroup (here a folder
// that is not one), the program starts anyway, outside it: its tree is
// measured from /proc and watched, not limited, Err says why, and the
// next session does not try again.
func TestASessionRunsWatchedWhenItsCgroupCannotBeUsed(t *testing.T) {
	m := &MemoryCgroups{dir: t.TempDir(), rmdir: os.RemoveAll}
	c := Command{Path: "sleep", Args: []string{"60"}, Env: os.Environ(), Cols: 80, Rows: 24, MemoryMax: 1 << 30, Cgroups: m}
	s := openUnixSession(t, c)
	if s.MemoryLimited() {
		t.Error("a program outside its cgroup reads as limited")
	}
	mem, err := TreeMemory([]*Session{s})
	if err != nil || mem[0] == 0 {
		t.Errorf("its tree's memory from /proc: %v, %v; want the sleep's resident memory", mem, err)
	}
	t.Logf("why: %v", m.Err())
	if err := m.Err(); err == nil || !strings.Contains(err.Error(), "start a program in cgroup") {
		t.Errorf("Err: %v, want why the cgroup was not used", err)
	}
	openUnixSession(t, c)
	if left, _ := os.ReadDir(m.dir); len(left) != 0 {
		t.Errorf("session cgroups made after the first failed, or left: %v", left)
	}
}
