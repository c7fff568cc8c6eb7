package team

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"github.com/shogun-dev/shogun/config"
	"github.com/shogun-dev/shogun/store"
	"github.com/shogun-dev/shogun/workspace"
)

// ErrHistoryMissing means the history database does not exist although the
// workspace's archive shows it had one: it was deleted or moved, and a new
// empty one would hand out task ids again and hide every past task.
var ErrHistoryMissing = errors.New("the history database is missing")

// CheckHistory returns an error wrapping ErrHistoryMissing when the history
// database does not exist but the workspace's archive holds processed files,
// unless newHistory says a new history is wanted: Open refuses to create a
// new database then, and `shogun tasks` says the history was lost rather
// than "no history yet".
func CheckHistory(cfg *config.Config, newHistory bool) error {
	db := cfg.Settings.Data.SQLitePath
	if _, err := os.Stat(db); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or unreadable: store.Open says why
	}
	n := archivedFiles(cfg.Workspace)
	if n == 0 || newHistory {
		return nil
	}
	rel, _ := filepath.Rel(cfg.Workspace, db)
	return fmt.Errorf("%w: %s does not exist, but %s holds %d archived file(s) from earlier runs; "+
		"restore the database (from a backup), or run `shogun start --new-history` to begin a new, empty history (task ids continue after the archived ones)",
		ErrHistoryMissing, filepath.ToSlash(rel), workspace.ArchiveDir, n)
}

// privateHistoryFolder makes the folder of the history database owner-only
// (0700), as store.Open makes a folder it creates: a workspace made by an
// older shogun has data/ open to every local user (0755). The workspace
// folder itself, should the database lie there, is left as it is; so is
// everything on Windows, where a folder's mode does not say who may read it.
func privateHistoryFolder(cfg *config.Config) error {
	dir := filepath.Dir(cfg.Settings.Data.SQLitePath)
	if runtime.GOOS == "windows" || filepath.Clean(dir) == filepath.Clean(cfg.Workspace) {
		return nil
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // store.Open creates it, owner-only
	case err != nil:
		return fmt.Errorf("check the history's folder: %w", err)
	case !fi.IsDir() || fi.Mode().Perm()&0o077 == 0:
		return nil
	}
	if err := os.Chmod(dir, fi.Mode().Perm()&0o700); err != nil {
		return fmt.Errorf("make the history's folder owner-only: %w", err)
	}
	return nil
}

// archiveFolders returns the archive's folders of kind: the flat one of the
// older layout, then one per day, oldest first.
func archiveFolders(l workspace.Layout, kind string) []string {
	dirs := []string{l.ArchiveLegacy(kind)}
	entries, _ := os.ReadDir(l.Archive())
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	for _, day := range workspace.ArchiveDays(names) {
		dirs = append(dirs, filepath.Join(l.Archive(), day, kind))
	}
	return dirs
}

// archivedFiles counts the files in the archive's folders, in both layouts.
// It runs only when the database is missing, so reading every day is fine.
func archivedFiles(ws string) int {
	l := workspace.New(ws)
	n := 0
	for _, kind := range workspace.ArchiveKinds {
		for _, dir := range archiveFolders(l, kind) {
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if !e.IsDir() && e.Name()[0] != '.' {
					n++
				}
			}
		}
	}
	return n
}

// seedDays is how many of the newest archive days seedTaskNumbers reads: a
// task id carries the UTC day it was made on, so only ids of today (and of
// yesterday or tomorrow in local time) can collide with new ones; older
// days would make every start slower as the archive grows.
const seedDays = 3

// archivedTaskID finds a task id (t-YYYYMMDD-NNNN) in an archived task
// file's name: <role>-<task id>.yaml, perhaps with a suffix that keeps two
// files of the same task apart.
var archivedTaskID = regexp.MustCompile(`t-(\d{8})-(\d{4,9})\b`)

// seedTaskNumbers makes task ids continue after every task id the workspace
// shows outside the database: in the names of archived task files, and in
// the current task files. Both can be edited by agents, but a number read
// here only ever makes later ids skip ahead, never repeat.
func seedTaskNumbers(st *store.Store, ws string) error {
	l := workspace.New(ws)
	last := map[string]int64{}
	note := func(s string) {
		for _, m := range archivedTaskID.FindAllStringSubmatch(s, -1) {
			if _, err := time.Parse("20060102", m[1]); err != nil {
				continue
			}
			if n, err := strconv.ParseInt(m[2], 10, 64); err == nil && n > last[m[1]] {
				last[m[1]] = n
			}
		}
	}
	dirs := archiveFolders(l, "tasks")
	if len(dirs) > 1+seedDays {
		dirs = append(dirs[:1], dirs[len(dirs)-seedDays:]...)
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read archived tasks: %w", err)
		}
		for _, e := range entries {
			note(e.Name())
		}
	}
	current, _ := os.ReadDir(l.Tasks())
	for _, e := range current {
		if e.Type().IsRegular() && filepath.Ext(e.Name()) == ".yaml" {
			note(taskIDOf(filepath.Join(l.Tasks(), e.Name())))
		}
	}
	if len(last) == 0 {
		return nil
	}
	return st.SeedTaskNumbers(last)
}

// taskIDOf returns the task_id line of a task file, read no further than
// its first few kilobytes; "" when there is none.
func taskIDOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := io.ReadFull(f, b)
	if m := taskIDLine.FindSubmatch(b[:n]); m != nil {
		return string(m[1])
	}
	return ""
}

var taskIDLine = regexp.MustCompile(`(?m)^task_id:\s*"?(t-\d{8}-\d{4,9})\b`)

// historyCheckEvery is how often the database file is checked for deletion
// or replacement while the supervisor runs.
const historyCheckEvery = 3 * time.Second

// watchHistory checks every historyCheckEvery that the database file is
// still the one the team writes to. When it is gone it records why (Halted)
// and calls halt, which stops the queue: work accepted now would be written
// to a file nobody can read. It returns when ctx ends or after halting.
func (t *Team) watchHistory(ctx context.Context, every time.Duration, halt func()) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := t.st.CheckFile()
		if err == nil {
			continue
		}
		if !errors.Is(err, store.ErrDatabaseGone) {
			t.log.Warn().Err(err).Msg("history database")
			continue
		}
		err = fmt.Errorf("%w; the queue has stopped taking work (command and report files stay where they are); "+
			"stop the supervisor, restore the database, and start again", err)
		t.haltMu.Lock()
		t.halted = err
		t.haltMu.Unlock()
		t.log.Error().Err(err).Msg("history database lost")
		halt()
		return
	}
}

// Halted returns why the team stopped taking work while its roles keep
// running (the history database was deleted or replaced), or nil.
func (t *Team) Halted() error {
	t.haltMu.Lock()
	defer t.haltMu.Unlock()
	return t.halted
}

// pruneAfter and pruneEvery time the pruning of old events and log
// records: shortly after the start (not during it, when every role is
// starting up), then daily.
const (
	pruneAfter = time.Minute
	pruneEvery = 24 * time.Hour
)

// pruneHistory removes events and log records older than data.retain, at
// t.pruneAfter and then every pruneEvery, until ctx ends. Prune works in
// small batches that hold the writer briefly, so the queue records tasks
// meanwhile as usual.
func (t *Team) pruneHistory(ctx context.Context) {
	if t.retain <= 0 {
		return
	}
	wait := t.pruneAfter
	for {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		wait = pruneEvery
		began := time.Now()
		cutoff := began.Add(-t.retain)
		res, err := t.st.Prune(ctx, cutoff, store.PruneOptions{})
		if err != nil && ctx.Err() == nil {
			t.log.Warn().Err(err).Msg("prune the history")
		}
		if res.Events+res.Logs > 0 {
			t.log.Info().Int64("events", res.Events).Int64("logs", res.Logs).Time("before", cutoff).
				Int("batches", res.Batches).Dur("max_hold", res.MaxHold).Dur("took", time.Since(began)).
				Msg("pruned old events and log records (data.retain)")
		}
	}
}
