package skills

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shogun-dev/shogun/store"
)

// generatedHistory is the database of GenerateHistory(1500 tasks, seed 7),
// made once per test binary: generating it takes several times as long as
// scanning it, and the tests that compare scans of it need equal copies.
var generatedHistory struct {
	once  sync.Once
	files map[string][]byte // shogun.db and what else SQLite left beside it
	run   store.Run
	err   error
}

// copyOfGeneratedHistory opens a copy of the generated history of its own
// for t, as newHistoryDB would have left it after GenerateHistory.
func copyOfGeneratedHistory(t *testing.T) *historyDB {
	t.Helper()
	g := &generatedHistory
	g.once.Do(func() {
		// Stays the error if t fails while generating.
		g.err = errors.New("generating the history failed in an earlier test")
		g.files, g.run, g.err = generateHistoryFiles(t)
	})
	if g.err != nil {
		t.Fatal(g.err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range g.files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "shogun.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &historyDB{t: t, st: st, path: path, run: g.run}
}

// generateHistoryFiles generates the history in t's folder, closes it, and
// returns its files: the database and, if SQLite kept it, its write-ahead
// log (a copy of both, taken with no connection open, opens to the same
// data).
func generateHistoryFiles(t *testing.T) (map[string][]byte, store.Run, error) {
	h := newHistoryDB(t)
	if err := GenerateHistory(h.st, 1500, 7); err != nil {
		return nil, store.Run{}, fmt.Errorf("generate a history: %w", err)
	}
	if err := h.st.Close(); err != nil {
		return nil, store.Run{}, err
	}
	files := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(h.path + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			return nil, store.Run{}, err
		}
		files[filepath.Base(h.path)+suffix] = data
	}
	return files, h.run, nil
}
