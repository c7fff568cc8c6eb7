package store

import (
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// changes tells watchers that the history was written: a channel closed at
// the next committed write and replaced, as supervisor.Role.Changed does for
// states. The zero value is ready to use.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func (c *changes) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changes) signal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// Changed returns a channel that is closed after the next write transaction
// commits (a task recorded, assigned, delivered, closed; a report; a skill
// decision). A watcher takes the channel, reads what it needs, then waits
// on it, so that no write between the two is missed. Bursts of writes wake
// a slow watcher once.
func (s *Store) Changed() <-chan struct{} { return s.changes.wait() }

// TasksUpdatedSince returns the tasks whose updated_at is at or after at,
// oldest change first, at most n (n <= 0: all). A watcher passes the last
// time it saw and skips what it has already seen at that very time.
func (s *Store) TasksUpdatedSince(at time.Time, n int) ([]Task, error) {
	ts, err := queryTasks(s.r, `SELECT `+taskColumns+` FROM tasks
WHERE julianday(updated_at) >= julianday(?) ORDER BY julianday(updated_at), seq LIMIT ?`, formatTime(at), limit(n))
	if err != nil {
		return nil, fmt.Errorf("tasks updated since %s: %w", at.Format(time.RFC3339), err)
	}
	return ts, nil
}

// EventsForTask returns the events recorded for a task, oldest first.
func (s *Store) EventsForTask(taskID string) ([]Event, error) {
	rows, err := s.r.Query(`SELECT id, at, run_id, role, kind, task_id, message FROM events WHERE task_id = ? ORDER BY id`, taskID)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", taskID, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e  Event
			at sql.NullString
		)
		if err := rows.Scan(&e.ID, &at, &e.RunID, &e.Role, &e.Kind, &e.TaskID, &e.Message); err != nil {
			return nil, fmt.Errorf("events of %s: %w", taskID, err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("events of %s: event %d: %w", taskID, e.ID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events of %s: %w", taskID, err)
	}
	return out, nil
}

// Runs returns the last n runs of `shogun start`, newest first (n <= 0:
// all).
func (s *Store) Runs(n int) ([]Run, error) {
	rows, err := s.r.Query(`SELECT id, started_at, ended_at, status, pid, workspace FROM runs
ORDER BY julianday(started_at) DESC, id DESC LIMIT ?`, limit(n))
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var (
			r              Run
			started, ended sql.NullString
		)
		if err := rows.Scan(&r.ID, &started, &ended, &r.Status, &r.Pid, &r.Workspace); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		if r.StartedAt, err = parseTime(started); err != nil {
			return nil, fmt.Errorf("list runs: %s: %w", r.ID, err)
		}
		if r.EndedAt, err = parseTime(ended); err != nil {
			return nil, fmt.Errorf("list runs: %s: %w", r.ID, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
