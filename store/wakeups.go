package store

import (
	"database/sql"
	"fmt"
	"time"
)

// A wake-up is the line ("Report from …") typed to the role that sent a
// task's command once a report closes the task: a delegating role waits for
// it, and sits idle forever if it is lost. It is part of the task's record,
// written in the transaction that closes the task (AcceptReport), and marked
// typed only once its typing is confirmed, so a supervisor killed in
// between types it after the restart.

// Wakeup is a wake-up not yet typed.
type Wakeup struct {
	TaskID string
	// Role is the role to wake: the task's From.
	Role  string
	DueAt time.Time
}

// addWakeup makes a task's wake-up due for role; one already there (the
// task closed once) is left as it is.
func addWakeup(tx *writeTx, taskID, role, at string) error {
	_, err := tx.Exec(`INSERT INTO wakeups (task_id, role, due_at) VALUES (?, ?, ?) ON CONFLICT (task_id) DO NOTHING`, taskID, role, at)
	return err
}

// PendingWakeups are role's wake-ups not yet typed, oldest first.
func (s *Store) PendingWakeups(role string) ([]Wakeup, error) {
	rows, err := s.read().Query(`SELECT task_id, role, due_at FROM wakeups WHERE role = ? AND typed_at IS NULL ORDER BY julianday(due_at), task_id`, role)
	if err != nil {
		return nil, fmt.Errorf("pending wake-ups of %s: %w", role, err)
	}
	defer rows.Close()
	var out []Wakeup
	for rows.Next() {
		var w Wakeup
		var due sql.NullString
		if err := rows.Scan(&w.TaskID, &w.Role, &due); err != nil {
			return nil, fmt.Errorf("pending wake-ups of %s: %w", role, err)
		}
		if w.DueAt, err = parseTime(due); err != nil {
			return nil, fmt.Errorf("pending wake-ups of %s: %w", role, err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending wake-ups of %s: %w", role, err)
	}
	return out, nil
}

// WakeupTyped records that a task's wake-up was typed and confirmed.
func (s *Store) WakeupTyped(taskID string, at time.Time) error {
	err := s.write(func(tx *writeTx) error {
		_, err := tx.Exec(`UPDATE wakeups SET typed_at = ? WHERE task_id = ?`, formatTime(at), taskID)
		return err
	})
	if err != nil {
		return fmt.Errorf("record wake-up of %s typed: %w", taskID, err)
	}
	return nil
}

// RearmWakeup makes a closed task's wake-up due again, for a sender that
// asks for the same command again (it lost the first one, say, with its
// conversation): it reports whether the task has a wake-up to give.
func (s *Store) RearmWakeup(taskID string, at time.Time) (bool, error) {
	var n int64
	err := s.write(func(tx *writeTx) error {
		res, err := tx.Exec(`UPDATE wakeups SET typed_at = NULL, due_at = ? WHERE task_id = ?`, formatTime(at), taskID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("rearm wake-up of %s: %w", taskID, err)
	}
	return n > 0, nil
}
