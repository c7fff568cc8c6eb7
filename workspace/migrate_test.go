package workspace

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A workspace of the older layout keeps its supervisor log and rotations,
// moved into their own folder once; a role named shogun then has
// runtime/logs/shogun.log to itself, and a later start leaves it there.
func TestMoveLegacySupervisorLog(t *testing.T) {
	l := New(t.TempDir())
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(l.SupervisorLogLegacy(), "supervisor now\n")
	write(filepath.Join(l.Logs(), "shogun-2026-11-20T10-00-00.000.log"), "supervisor before\n")
	write(l.RoleLog("karo"), "karo's terminal\n")
	write(filepath.Join(l.Logs(), "shogun-notes.log"), "a role named shogun-notes\n")
	stays := []string{l.RoleLog("karo"), l.RoleLog("shogun-notes")}
	// A link named like a rotated log is left alone, where the system has
	// links that can be found again (Wine makes them but cannot stat them).
	link := filepath.Join(l.Logs(), "shogun-2026-11-21T10-00-00.000.log")
	if err := os.Symlink(l.RoleLog("karo"), link); err == nil {
		if _, err := os.Lstat(link); err == nil {
			stays = append(stays, link)
		} else {
			os.Remove(link)
		}
	}

	moved, err := l.MoveLegacySupervisorLog()
	if err != nil {
		t.Fatal(err)
	}
	dir := l.Path(SupervisorLogDir)
	want := []string{filepath.Join(dir, "shogun-2026-11-20T10-00-00.000.log"), l.SupervisorLog()}
	slices.Sort(moved)
	if !slices.Equal(moved, want) {
		t.Errorf("moved %q, want %q", moved, want)
	}
	if b, _ := os.ReadFile(l.SupervisorLog()); string(b) != "supervisor now\n" {
		t.Errorf("the supervisor's log after the move reads %q", b)
	}
	for _, p := range stays {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was not left where it was: %v", p, err)
		}
	}

	// The role shogun writes its own log; the next start moves nothing.
	write(l.RoleLog("shogun"), "the role's terminal\n")
	if moved, err := l.MoveLegacySupervisorLog(); err != nil || len(moved) != 0 {
		t.Errorf("second call moved %q (%v); want nothing", moved, err)
	}
	if b, _ := os.ReadFile(l.RoleLog("shogun")); string(b) != "the role's terminal\n" {
		t.Errorf("the role shogun's log reads %q", b)
	}
}

// A new workspace has nothing to move and gets the folder.
func TestMoveLegacySupervisorLogNew(t *testing.T) {
	l := New(t.TempDir())
	if moved, err := l.MoveLegacySupervisorLog(); err != nil || len(moved) != 0 {
		t.Fatalf("moved %q (%v) in a new workspace", moved, err)
	}
	if fi, err := os.Stat(l.Path(SupervisorLogDir)); err != nil || !fi.IsDir() {
		t.Errorf("no %s: %v", SupervisorLogDir, err)
	}
}
