//go:build !windows

package store

import (
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withUmask022 sets the usual umask, 022, for the test: it leaves files
// SQLite creates by itself readable by every local user.
func withUmask022(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
}

// wantMode fails the test unless path has mode perm.
func wantMode(t *testing.T, path string, perm fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("%s: %v", filepath.Base(path), err)
		return
	}
	if got := fi.Mode().Perm(); got != perm {
		t.Errorf("%s has mode %04o, want %04o", filepath.Base(path), got, perm)
	}
}

// A new history is the owner's alone from its creation: its folder 0700,
// the database, its WAL and shared-memory files 0600, under umask 022,
// while a task body is in them.
func TestNewHistoryIsOwnerOnly(t *testing.T) {
	withUmask022(t)
	s, run := workspaceWith(t, openFresh(t, filepath.Join(t.TempDir(), "data", "shogun.db")))
	accept(t, s, command(run, "a.yaml", "c-1", "karo"))
	db := s.Path()
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		wantMode(t, p, 0o600)
	}
	wantMode(t, filepath.Dir(db), 0o700)
}

// A history an older shogun created under umask 022 (0644), its -wal and
// -shm files still there because a process has it open, is made
// owner-only when opened.
func TestOpenTightensAnOpenHistory(t *testing.T) {
	withUmask022(t)
	db := filepath.Join(t.TempDir(), "shogun.db")
	older, err := sql.Open("sqlite", dsn(db, false))
	if err != nil {
		t.Fatal(err)
	}
	defer older.Close()
	older.SetMaxOpenConns(1)
	if _, err := older.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('a task body')`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		wantMode(t, p, 0o644) // as SQLite made them
	}
	if t.Failed() {
		t.FailNow()
	}
	openAt(t, db)
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		wantMode(t, p, 0o600)
	}
}
