package store

import (
	"database/sql"
	"fmt"
	"sync"
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
// decision) or the next event is recorded. A watcher takes the channel, reads what it needs, then waits
// on it, so that no write between the two is missed. Bursts of writes wake
// a slow watcher once.
func (s *Store) Changed() <-chan struct{} { return s.changes.wait() }

// InFlightTasks returns the tasks that occupy their roles (assigned,
// delivered, undelivered, stalled): at most one per role.
func (s *Store) InFlightTasks() ([]Task, error) {
	ts, err := queryTasks(s.read(), `SELECT `+taskColumns+` FROM tasks WHERE status IN `+inFlightSQL+` ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("tasks in flight: %w", err)
	}
	return ts, nil
}

// TasksInEventsAfter returns the ids of the tasks named by the events
// recorded after the event with id after, at most n events read, and the id
// of the last event read (after itself when there is none). A watcher
// passes the id it got last time: a range of the events' own ids, cheap
// however long the history.
func (s *Store) TasksInEventsAfter(after int64, n int) (ids []string, last int64, err error) {
	rows, err := s.read().Query(`SELECT id, task_id FROM events WHERE id > ? ORDER BY id LIMIT ?`, after, limit(n))
	if err != nil {
		return nil, after, fmt.Errorf("events after %d: %w", after, err)
	}
	defer rows.Close()
	last = after
	seen := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&last, &id); err != nil {
			return nil, after, fmt.Errorf("events after %d: %w", after, err)
		}
		if id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("events after %d: %w", after, err)
	}
	return ids, last, nil
}

// LastEventID is the id of the latest event, 0 for none.
func (s *Store) LastEventID() (int64, error) {
	var id int64
	if err := s.read().QueryRow(`SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id); err != nil {
		return 0, fmt.Errorf("last event: %w", err)
	}
	return id, nil
}

// EventsForTask returns the events recorded for a task, oldest first.
func (s *Store) EventsForTask(taskID string) ([]Event, error) {
	rows, err := s.read().Query(`SELECT id, at, run_id, role, kind, task_id, message FROM events WHERE task_id = ? ORDER BY id`, taskID)
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
	rows, err := s.read().Query(`SELECT id, started_at, ended_at, status, pid, workspace FROM runs
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
