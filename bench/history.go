package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/shogun-dev/shogun/skills"
	"github.com/shogun-dev/shogun/store"
)

// histories are the synthetic histories that measurements share: a
// history of n finished tasks (skills.GenerateHistory, seed 1) is made at
// most once per run of the bench, since a million tasks take minutes, and
// handed out as copies.
type histories struct {
	dir  string
	keep bool // dir is the -history-cache folder: the histories outlive the run
	dbs  map[int]string
	took map[int]time.Duration
}

// newHistories makes the histories in a temporary folder, or in cache
// when it is not "": there a history made by an earlier run is used as it
// is (for working on one measurement; make bench always starts afresh).
func newHistories(cache string) (*histories, error) {
	h := &histories{dir: cache, keep: cache != "", dbs: map[int]string{}, took: map[int]time.Duration{}}
	if h.keep {
		return h, os.MkdirAll(cache, 0o755)
	}
	var err error
	h.dir, err = os.MkdirTemp("", "shogun-bench-histories-")
	return h, err
}

// Close removes the histories, unless they are kept in a cache.
func (h *histories) Close() error {
	if h.keep {
		return nil
	}
	return os.RemoveAll(h.dir)
}

// historyDB is the path of the shared history of n finished tasks, made on
// first use. Nobody may change it: open it read-only, or copy it first
// (workspace).
func (h *histories) historyDB(n int) (string, error) {
	if p, ok := h.dbs[n]; ok {
		return p, nil
	}
	p := filepath.Join(h.dir, fmt.Sprintf("history-%d.db", n))
	if _, err := os.Stat(p); err == nil && h.keep {
		h.dbs[n] = p
		return p, nil
	}
	// A history only half made by an interrupted run is made again.
	for _, f := range []string{p, p + "-wal", p + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	tmp := p + ".making"
	fmt.Fprintf(os.Stderr, "bench: generating a history of %d finished tasks (once per run) …\n", n)
	began := time.Now()
	for _, f := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	st, err := store.Open(tmp)
	if err != nil {
		return "", err
	}
	if err := skills.GenerateHistory(st, n, 1); err != nil {
		st.Close()
		return "", fmt.Errorf("generate %d tasks: %w", n, err)
	}
	// Closing the last connection folds the WAL into the file, which is
	// then the whole database.
	if err := st.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", err
	}
	h.dbs[n], h.took[n] = p, time.Since(began)
	fmt.Fprintf(os.Stderr, "bench: %d tasks generated in %s\n", n, h.took[n].Round(time.Second))
	return p, nil
}

// workspace makes a new workspace (shogun init) whose history is a copy of
// the shared history of n tasks; the caller removes it.
func (h *histories) workspace(shogun string, n int) (string, error) {
	src, err := h.historyDB(n)
	if err != nil {
		return "", err
	}
	ws, err := os.MkdirTemp("", "shogun-bench-history-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command(shogun, "init", ws).CombinedOutput(); err != nil {
		os.RemoveAll(ws)
		return "", fmt.Errorf("init: %v: %s", err, out)
	}
	if err := copyFile(src, filepath.Join(ws, "data", "shogun.db")); err != nil {
		os.RemoveAll(ws)
		return "", err
	}
	return ws, nil
}

// readOnlyWorkspace makes a new workspace (shogun init) whose history is
// the shared history of n tasks itself, through a symbolic link, for
// measurements that only read it: no copy of gigabytes. The caller removes
// the workspace (not the history).
func (h *histories) readOnlyWorkspace(shogun string, n int) (string, error) {
	src, err := h.historyDB(n)
	if err != nil {
		return "", err
	}
	ws, err := os.MkdirTemp("", "shogun-bench-history-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command(shogun, "init", ws).CombinedOutput(); err != nil {
		os.RemoveAll(ws)
		return "", fmt.Errorf("init: %v: %s", err, out)
	}
	if err := os.Symlink(src, filepath.Join(ws, "data", "shogun.db")); err != nil {
		os.RemoveAll(ws)
		return "", err
	}
	return ws, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
