package store

import (
	"os"
	"path/filepath"
	"testing"
)

// The history lives in data/ of the workspace, wherever a Windows user put
// it: under a profile with spaces and non-ASCII letters, or deeper than
// MAX_PATH (260 characters), where SQLite's own file calls (and those of
// its -wal and -shm files) must still reach it.
func TestHistoryInWindowsPaths(t *testing.T) {
	deep := t.TempDir()
	for len(deep) < 270 {
		deep = filepath.Join(deep, "a folder name of fifty characters, with spaces 0123")
	}
	for name, dir := range map[string]string{
		"spaces and non-ASCII": filepath.Join(t.TempDir(), "My Documents", "将軍 チーム", "data"),
		"over MAX_PATH":        filepath.Join(deep, "data"),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "shogun.db")
			s, err := Open(path)
			if err != nil {
				t.Fatalf("open %d-character path: %v", len(path), err)
			}
			if err := s.AddEvent(Event{Kind: "started", Message: "first run"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("database not at the given path: %v", err)
			}
			s = openAt(t, path)
			var n int
			if err := s.r.QueryRow(`SELECT count(*) FROM events WHERE kind = 'started'`).Scan(&n); err != nil || n != 1 {
				t.Fatalf("reopened history has %d started events (%v), want 1", n, err)
			}
		})
	}
}
