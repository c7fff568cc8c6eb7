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
