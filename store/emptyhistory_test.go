package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// emptyHistory is the database file of a new history, made once per test
// binary by Open: a new database runs every migration, which under the race
// detector takes about half a second, and most of this package's tests only
// need an empty store.
var emptyHistory struct {
	once sync.Once
	data []byte
	err  error
}

// emptyHistoryAt puts a copy of a new history's database at path, owner
// only as Open makes it, unless a file is there already.
func emptyHistoryAt(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	emptyHistory.once.Do(func() { emptyHistory.data, emptyHistory.err = makeEmptyHistory() })
	if emptyHistory.err != nil {
		t.Fatal(emptyHistory.err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, emptyHistory.data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// makeEmptyHistory opens a new history in a folder of its own and returns
// its database file, with everything in the write-ahead log checkpointed
// into it.
func makeEmptyHistory() ([]byte, error) {
	dir, err := os.MkdirTemp("", "shogun-store-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "shogun.db")
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	if _, err := s.w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		s.Close()
		return nil, fmt.Errorf("checkpoint the empty history: %w", err)
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("the empty history's log still holds %d bytes after a checkpoint", fi.Size())
	}
	return os.ReadFile(path)
}
