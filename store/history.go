package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// ErrDatabaseGone means the database file the Store opened is no longer at
// its path: deleted, moved, or replaced by another file. SQLite keeps
// writing to the file it has open, which nobody will ever read again, so
// the supervisor must stop taking work the moment it notices.
var ErrDatabaseGone = errors.New("the history database is gone")

// CheckFile reports whether the file at the Store's path is still the one it
// opened (same device and inode, or the platform's equivalent). It returns
// an error wrapping ErrDatabaseGone when the file was deleted or replaced.
func (s *Store) CheckFile() error {
	fi, err := os.Stat(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s was deleted or moved while in use", ErrDatabaseGone, s.path)
	}
	if err != nil {
		return fmt.Errorf("check history database %s: %w", s.path, err)
	}
	if s.opened == nil || !os.SameFile(s.opened, fi) {
		return fmt.Errorf("%w: %s was replaced by another file while in use", ErrDatabaseGone, s.path)
	}
	return nil
}

// SeedTaskNumbers raises the per-day task counters to at least the numbers
// given (UTC day YYYYMMDD → the highest task number seen that day), so that
// a new task never takes an id already used in the workspace, for instance
// by a task archived before the database was lost. Counters already higher
// are kept.
func (s *Store) SeedTaskNumbers(last map[string]int64) error {
	days := make([]string, 0, len(last))
	for d := range last {
		days = append(days, d)
	}
	sort.Strings(days)
	err := s.write(func(tx *writeTx) error {
		for _, d := range days {
			if _, err := tx.Exec(`INSERT INTO task_numbers (day, last) VALUES (?, ?)
ON CONFLICT (day) DO UPDATE SET last = MAX(last, excluded.last)`, d, last[d]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seed task numbers: %w", err)
	}
	return nil
}
