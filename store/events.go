package store

import (
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Event is one line of the workspace's history as a user reads it: a state
// change, a delivery, an error. Kind is a short word ("queued", "report",
// "duplicate", ...) chosen by the caller.
type Event struct {
	ID      int64
	At      time.Time // zero: now
	RunID   string
	Role    string
	Kind    string
	TaskID  string
	Message string
}

// AddEvent records an event.
func (s *Store) AddEvent(e Event) error {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if e.Kind == "" {
		return fmt.Errorf("add event: empty kind")
	}
	// In a write of its own, for the statement prepared there: a team
	// whose roles sleep and wake records several events per start.
	if err := s.write(func(tx *writeTx) error {
		_, err := tx.Exec(insertEvent, formatTime(e.At), e.RunID, e.Role, e.Kind, e.TaskID, e.Message)
		return err
	}); err != nil {
		return fmt.Errorf("add event %s: %w", e.Kind, err)
	}
	return nil
}

const insertEvent = `INSERT INTO events (at, run_id, role, kind, task_id, message) VALUES (?, ?, ?, ?, ?, ?)`

// Events returns the last n events, newest first (n <= 0: all).
func (s *Store) Events(n int) ([]Event, error) {
	rows, err := s.read().Query(`SELECT id, at, run_id, role, kind, task_id, message FROM events ORDER BY id DESC LIMIT ?`, limit(n))
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e  Event
			at sql.NullString
		)
		if err := rows.Scan(&e.ID, &at, &e.RunID, &e.Role, &e.Kind, &e.TaskID, &e.Message); err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("events: event %d: %w", e.ID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	return out, nil
}

// EventsOfKinds returns the events of the given kinds at or after since,
// oldest first.
func (s *Store) EventsOfKinds(since time.Time, kinds ...string) ([]Event, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	args := []any{formatTime(since)}
	for _, k := range kinds {
		args = append(args, k)
	}
	// Unprepared: each length of the list is a new query text.
	rows, err := s.r.Query(`SELECT id, at, run_id, role, kind, task_id, message FROM events
WHERE julianday(at) >= julianday(?) AND kind IN (?`+strings.Repeat(", ?", len(kinds)-1)+`) ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("events of kinds %s: %w", strings.Join(kinds, ", "), err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var (
			e  Event
			at sql.NullString
		)
		if err := rows.Scan(&e.ID, &at, &e.RunID, &e.Role, &e.Kind, &e.TaskID, &e.Message); err != nil {
			return nil, fmt.Errorf("events of kinds %s: %w", strings.Join(kinds, ", "), err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("events of kinds %s: event %d: %w", strings.Join(kinds, ", "), e.ID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// AddEvents records several events in one transaction (for a backlog in
// benchmarks and tests; AddEvent is the supervisor's way).
func (s *Store) AddEvents(evs []Event) error {
	now := time.Now()
	err := s.write(func(tx *writeTx) error {
		for _, e := range evs {
			if e.At.IsZero() {
				e.At = now
			}
			if e.Kind == "" {
				return fmt.Errorf("event with an empty kind")
			}
			if _, err := tx.Exec(insertEvent, formatTime(e.At), e.RunID, e.Role, e.Kind, e.TaskID, e.Message); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add events: %w", err)
	}
	return nil
}
