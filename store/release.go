package store

import (
	"fmt"
	"time"
)

// ReleaseRole takes a role's open tasks off it when the role stops running
// because the configuration changed, in one transaction, and returns the
// tasks it changed as they are now.
//
// A role that is disabled may come back: its task in flight (assigned,
// delivered, undelivered or stalled) goes back to its queue, keeping its
// place by priority and arrival and its attempts, so that it goes out
// first, to a fresh program, when the role runs again; its queued tasks
// wait as they are. A role removed from the configuration will not come
// back: every open task of it, queued or in flight, is closed as blocked
// with why as its summary, so that nothing waits for it forever.
func (s *Store) ReleaseRole(role string, removed bool, why string, at time.Time) ([]Task, error) {
	var out []Task
	err := s.write(func(tx *writeTx) error {
		where := `status IN ` + inFlightSQL
		if removed {
			where = `status NOT IN ('done','failed','blocked','cancelled')`
		}
		ts, err := queryTasks(tx, `SELECT `+taskColumns+` FROM tasks WHERE role_id = ? AND `+where+` ORDER BY seq`, role)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if removed {
				_, err = tx.Exec(`UPDATE tasks SET status = ?, summary = ?, finished_at = ?, updated_at = ? WHERE id = ?`,
					StatusBlocked, why, formatTime(at), formatTime(at), t.ID)
			} else {
				_, err = tx.Exec(`UPDATE tasks SET status = ?, delivered_at = NULL, updated_at = ? WHERE id = ?`,
					StatusQueued, formatTime(at), t.ID)
			}
			if err != nil {
				return err
			}
			t, err = loadTask(tx, t.ID)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("release the tasks of %s: %w", role, err)
	}
	return out, nil
}
