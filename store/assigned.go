package store

import (
	"database/sql"
	"errors"
	"fmt"
)

// LastAssigned returns the task most recently handed to role, open or
// closed; nil if the role has never been given one. The queue writes a
// task's file just before it assigns the task, so this is the task whose
// file the role's task folder holds: the name to archive that file under,
// taken from the history rather than from the file, which the agent can
// edit.
func (s *Store) LastAssigned(role string) (*Task, error) {
	t, err := scanTask(s.read().QueryRow(`SELECT `+taskColumns+` FROM tasks
WHERE role_id = ? AND assigned_at IS NOT NULL
ORDER BY julianday(assigned_at) DESC, seq DESC LIMIT 1`, role))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("last assigned for %s: %w", role, err)
	}
	return &t, nil
}
