package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// RoleWork is what the history holds for one role at rest: the tasks
// queued or in flight (delivered again at the next start), and the
// highest priority among them as a rank (0 high, 1 normal, 2 low).
type RoleWork struct {
	Tasks int
	Rank  int
}

// QueuedWork reads, without changing the database at path, the work each
// role has waiting in it, by role: what a supervisor started on it gives
// its slots to first (`shogun start --dry-run` says so). A database that
// is not there yet, or new, has none.
func QueuedWork(path string) (map[string]RoleWork, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer db.Close()
	var version int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if version == 0 {
		return nil, nil // new: no tables yet
	}
	rows, err := db.Query(`SELECT role_id, COUNT(*), MIN(priority_rank) FROM tasks
WHERE status = ? OR status IN `+inFlightSQL+` GROUP BY role_id`, StatusQueued)
	if err != nil {
		return nil, fmt.Errorf("read the queued tasks of %s: %w", path, err)
	}
	defer rows.Close()
	out := map[string]RoleWork{}
	for rows.Next() {
		var role string
		var w RoleWork
		if err := rows.Scan(&role, &w.Tasks, &w.Rank); err != nil {
			return nil, fmt.Errorf("read the queued tasks of %s: %w", path, err)
		}
		out[role] = w
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the queued tasks of %s: %w", path, err)
	}
	return out, nil
}
